import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import * as api from '../lib/api';
import * as containers from '../lib/api-containers';
import * as batch from '../lib/api-batch';
import * as updates from '../components/containerlist/updates';
import { session } from '../lib/session.svelte';
import { stubApi, type StubApi, type StubCall } from '../test-api';
import { expectNoSeriousAxeViolations } from '../test-axe';
import ContainersScreen from './ContainersScreen.svelte';

// Streams and jobs stay stubbed at their functions; every read and write goes through the stub server.
vi.mock('../lib/api-batch', () => ({ runBatch: vi.fn() }));
vi.mock('../components/containerlist/updates', async (importOriginal) => {
  const real = await importOriginal<typeof import('../components/containerlist/updates')>();
  return { ...real, runUpdates: vi.fn() };
});
vi.mock('../lib/api-containers', async (importOriginal) => {
  const real = await importOriginal<typeof import('../lib/api-containers')>();
  return { ...real, statsPass: vi.fn() };
});

const list: api.ContainerSummary[] = [
  {
    id: 'a1',
    name: 'web',
    image: 'nginx:1.27',
    state: 'running',
    status: 'Up 2 hours (healthy)',
    health: 'healthy',
    ports: [{ IP: '0.0.0.0', PrivatePort: 80, PublicPort: 8080, Type: 'tcp' }],
    labels: { 'com.docker.compose.project': 'shop' },
  },
  { id: 'b2', name: 'db', image: 'postgres:16', state: 'exited', status: 'Exited (0) 1 day ago', ports: [], labels: { 'com.docker.compose.project': 'shop' } },
  { id: 'c3', name: 'cache', image: 'redis:7', state: 'running', status: 'Up 1 minute', ports: [] },
];

const stat = (id: string, cpu: number, mem: number): containers.Stat => ({
  id,
  name: id,
  cpuPercent: cpu,
  memoryUsage: mem,
  memoryLimit: 1024 ** 3,
  memoryPercent: 1,
  networkRx: 0,
  networkTx: 0,
  blockRead: 0,
  blockWrite: 0,
});

/** runBatch answering each item with ok(id) (a string is that item's error). */
function batchAnswers(outcome: (id: string) => true | string) {
  vi.mocked(batch.runBatch).mockImplementation(async (_env, req, onItem) => {
    const results = req.items.map((it, i) => {
      const o = outcome(it.id);
      const r = o === true
        ? { id: it.id, name: it.name, status: 'success' as const }
        : { id: it.id, name: it.name, status: 'error' as const, error: o };
      onItem?.({ type: 'progress', ...r, current: i + 1, total: req.items.length }, i + 1);
      return r;
    });
    const success = results.filter((r) => r.status === 'success').length;
    return { type: 'complete', summary: { total: results.length, success, failed: results.length - success }, results };
  });
}

let stub: StubApi;
let grid: Record<string, unknown>;

beforeEach(() => {
  session.session = { authenticated: false, authEnabled: false };
  batchAnswers(() => true);
  session.environments = [{ id: 1, name: 'local', connectionType: 'socket' }];
  session.envId = 1;
  grid = {};
  stub = stubApi({
    'GET /api/containers': list,
    'GET /api/containers/check-updates': { environmentId: 1, pendingUpdates: [] },
    'GET /api/preferences/grid': () => ({ preferences: grid }),
    'POST /api/preferences/grid': (c: StubCall) => {
      const b = c.body as { gridId: string; columns: unknown };
      grid = { ...grid, [b.gridId]: { columns: b.columns } };
      return { success: true, preferences: grid };
    },
    'DELETE /api/preferences/grid': (c: StubCall) => {
      delete grid[c.query.gridId];
      return { success: true, preferences: grid };
    },
    'POST /api/containers/a1/stop': () => {
      throw new api.ApiError(500, 'engine said no');
    },
    'POST /api/containers/b2/start': { success: true },
    'DELETE /api/containers/a1': { success: true },
    'POST /api/containers/check-updates': { success: true, status: 'complete', count: 1, pendingUpdates: [] },
  });
  // One pass with two running containers, then the next pass never ends.
  vi.mocked(containers.statsPass)
    .mockImplementationOnce(async (_env, onStat) => {
      onStat(stat('a1', 12.5, 64 * 1024 * 1024));
      onStat(stat('c3', 1, 2 * 1024 * 1024));
    })
    .mockImplementation(() => new Promise(() => {}));
});
afterEach(() => {
  cleanup();
  vi.clearAllMocks();
  vi.mocked(containers.statsPass).mockReset();
  vi.unstubAllGlobals();
});

const rows = () => [...document.querySelectorAll<HTMLElement>('tbody tr.row')];
const names = () => rows().map((r) => r.querySelector('td.name')?.textContent?.trim());
const row = (name: string) => rows().find((r) => within(r).queryByRole('link', { name }))!;

// A shared machine renders slowly: room beyond the default 5 s (no timing is asserted).
describe('ContainersScreen', { timeout: 20_000 }, () => {
  it('lists the containers of the selected environment, sorted by name, with their figures', async () => {
    render(ContainersScreen);
    expect(screen.getByRole('heading', { level: 1, name: 'Containers' })).toBeTruthy();
    expect(screen.getByRole('link', { name: 'New container' }).getAttribute('href')).toBe('/containers/new');
    await screen.findByRole('table');
    expect(stub.called('GET /api/containers')[0].query).toEqual({ env: '1' });
    expect(names()).toEqual(['cache', 'db', 'web']);
    const web = row('web');
    // A published port links to the browser's host (the environment has no public address).
    expect(within(web).getByRole('link', { name: '8080→80/tcp' }).getAttribute('href')).toBe(`http://${location.hostname}:8080`);
    expect(within(web).getByText('healthy')).toBeTruthy();
    expect(within(web).getByRole('link', { name: 'shop' }).getAttribute('href')).toBe('/stacks/shop');
    // Only the running containers on screen are sampled.
    await waitFor(() => expect(containers.statsPass).toHaveBeenCalledWith(1, expect.any(Function), expect.any(AbortSignal), ['c3', 'a1']));
    await waitFor(() => expect(within(row('web')).getByText('12.5 %')).toBeTruthy());
    expect(within(row('web')).getByText('64.0 MiB')).toBeTruthy();
    expect(within(row('db')).getAllByText('—').length).toBeGreaterThanOrEqual(2);
  });

  it('refetches the list once for a burst of engine events, not for quiet ones', async () => {
    const sse = (events: [string, unknown][]) =>
      new Response(events.map(([e, d]) => `event: ${e}\ndata: ${JSON.stringify(d)}\n\n`).join(''), {
        status: 200,
        headers: { 'Content-Type': 'text/event-stream' },
      });
    let opened = 0;
    stub.routes['GET /api/events'] = () => {
      opened++;
      return opened === 1
        ? sse([
            ['connected', { env: 1 }],
            ['container-exec_start: sh', { id: 'a1', name: 'web' }],
            ['container-create', { id: 'd4', name: 'new' }],
            ['container-start', { id: 'd4', name: 'new' }],
            ['container-destroy', { id: 'b2', name: 'db' }],
          ])
        : new Response(new ReadableStream(), { status: 200, headers: { 'Content-Type': 'text/event-stream' } }); // stays open
    };
    render(ContainersScreen);
    await screen.findByRole('table');
    expect(stub.called('GET /api/events')[0].query).toEqual({ env: '1' });
    await waitFor(() => expect(stub.called('GET /api/containers')).toHaveLength(2), { timeout: 3000 });
    await new Promise((r) => setTimeout(r, 700));
    expect(stub.called('GET /api/containers')).toHaveLength(2); // one refetch for the burst
  });

  it('links ports to the environment’s public address when it has one', async () => {
    session.environments = [{ id: 1, name: 'edge', connectionType: 'hawser-standard', publicIp: '203.0.113.7' } as api.Environment];
    render(ContainersScreen);
    await screen.findByRole('table');
    expect(within(row('web')).getByRole('link', { name: '8080→80/tcp' }).getAttribute('href')).toBe('http://203.0.113.7:8080');
  });

  it('sorts by clicking the column header buttons, figures first from the largest', async () => {
    render(ContainersScreen);
    await screen.findByRole('table');
    const nameHeader = screen.getByRole('columnheader', { name: /Name/ });
    expect(nameHeader.getAttribute('aria-sort')).toBe('ascending');
    await fireEvent.click(screen.getByRole('button', { name: /Name/ }));
    expect(names()).toEqual(['web', 'db', 'cache']);
    expect(nameHeader.getAttribute('aria-sort')).toBe('descending');
    await fireEvent.click(screen.getByRole('button', { name: /Image/ }));
    expect(names()).toEqual(['web', 'db', 'cache']); // nginx, postgres, redis
    expect(screen.getByRole('columnheader', { name: /Image/ }).getAttribute('aria-sort')).toBe('ascending');
    expect(nameHeader.getAttribute('aria-sort')).toBe('none');
    await waitFor(() => expect(within(row('web')).getByText('12.5 %')).toBeTruthy());
    await fireEvent.click(screen.getByRole('button', { name: /CPU/ }));
    expect(names()).toEqual(['web', 'cache', 'db']);
    expect(screen.getByRole('columnheader', { name: /CPU/ }).getAttribute('aria-sort')).toBe('descending');
  });

  it('sorted by CPU, orders by one pass over every running container and says when; live figures stay with the rows in view', async () => {
    const orderPasses = () => vi.mocked(containers.statsPass).mock.calls.filter((c) => c[3] === undefined).length;
    vi.mocked(containers.statsPass)
      .mockReset()
      .mockImplementation(async (_env, onStat, _signal, ids) => {
        // Live (the rows in view): web is the busiest; the order pass (every running container): cache is.
        if (ids) for (const id of ids) onStat(stat(id, id === 'a1' ? 12.5 : 1, 1024 ** 2));
        else for (const [id, cpu] of [['a1', 2], ['c3', 50]] as const) onStat(stat(id, cpu, 1024 ** 2));
      });
    render(ContainersScreen);
    await screen.findByRole('table');
    await waitFor(() => expect(containers.statsPass).toHaveBeenCalledWith(1, expect.any(Function), expect.any(AbortSignal), ['c3', 'a1']));
    expect(orderPasses()).toBe(0); // not sorted by a figure: no pass over every container
    expect(screen.queryByText(/Sorted by/)).toBeNull();

    await fireEvent.click(screen.getByRole('button', { name: /CPU/ }));
    await screen.findByText(/Sorted by CPU as of \d{1,2}:\d{2}:\d{2}/);
    expect(names()).toEqual(['cache', 'web', 'db']); // the order pass's figures, not the live ones
    expect(orderPasses()).toBe(1);
    // The live passes still ask only for the rows in view.
    expect(vi.mocked(containers.statsPass).mock.calls.every((c) => c[3] === undefined || c[3].join() === 'c3,a1')).toBe(true);

    await fireEvent.click(screen.getByRole('button', { name: 'Sort again now' }));
    await waitFor(() => expect(orderPasses()).toBe(2));

    await fireEvent.click(screen.getByRole('button', { name: /Name/ }));
    expect(screen.queryByText(/Sorted by/)).toBeNull();
    await new Promise((r) => setTimeout(r, 50));
    expect(orderPasses()).toBe(2);
  });

  it('filters with the Filter box and the state, and shows an empty match state', async () => {
    render(ContainersScreen);
    await screen.findByRole('table');
    const filter = screen.getByLabelText('Filter');
    await fireEvent.input(filter, { target: { value: 'running' } });
    expect(names()).toEqual(['cache', 'web']);
    await fireEvent.input(filter, { target: { value: 'shop' } });
    expect(names()).toEqual(['db', 'web']);
    await fireEvent.input(filter, { target: { value: 'zzz' } });
    expect(screen.queryByRole('table')).toBeNull();
    expect(screen.getByText(/No container matches/)).toBeTruthy();
    await fireEvent.click(screen.getByRole('button', { name: 'Clear filter' }));
    expect(names()).toHaveLength(3);
    await fireEvent.change(screen.getByLabelText('State', { selector: 'select' }), { target: { value: 'stopped' } });
    expect(names()).toEqual(['db']);
  });

  it('groups by stack with counts, and a group collapses', async () => {
    render(ContainersScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('checkbox', { name: 'Group by stack' }));
    const shop = screen.getByRole('button', { name: /shop 2 containers, 1 running/ });
    expect(shop.getAttribute('aria-expanded')).toBe('true');
    expect(screen.getByRole('button', { name: /No stack 1 container, 1 running/ })).toBeTruthy();
    expect(names()).toEqual(['db', 'web', 'cache']);
    await fireEvent.click(shop);
    expect(shop.getAttribute('aria-expanded')).toBe('false');
    expect(names()).toEqual(['cache']);
  });

  it('renders only the rows in view of a long list', async () => {
    const many = Array.from({ length: 1000 }, (_, i) => ({ id: `id${i}`, name: `c-${String(i).padStart(4, '0')}`, image: 'busybox', state: 'created', status: 'Created', ports: [] }));
    stub.routes['GET /api/containers'] = many;
    render(ContainersScreen);
    await screen.findByRole('table');
    await waitFor(() => expect(rows().length).toBeGreaterThan(0));
    expect(rows().length).toBeLessThan(60);
    expect(names()[0]).toBe('c-0000');
    expect(screen.getByText(/1000 of 1000 containers/)).toBeTruthy();
  });

  it('chooses columns, saves them as the user’s grid layout, and resets them', async () => {
    grid = { containers: { columns: [{ id: 'stack', visible: false }, { id: 'uptime', visible: true }] } };
    render(ContainersScreen);
    await screen.findByRole('table');
    await waitFor(() => expect(screen.queryByRole('columnheader', { name: /Stack/ })).toBeNull());
    expect(screen.getByRole('columnheader', { name: /Uptime/ })).toBeTruthy();
    expect(within(row('web')).getByText('2 hours')).toBeTruthy();

    await fireEvent.click(screen.getByText('Columns'));
    await fireEvent.click(screen.getByRole('checkbox', { name: 'Image' }));
    expect(screen.queryByRole('columnheader', { name: /Image/ })).toBeNull();
    await waitFor(() => expect(stub.called('POST /api/preferences/grid')).toHaveLength(1));
    const saved = stub.called('POST /api/preferences/grid')[0].body as { gridId: string; columns: { id: string; visible: boolean }[] };
    expect(saved.gridId).toBe('containers');
    expect(saved.columns.filter((c) => c.visible).map((c) => c.id)).toEqual(['state', 'uptime', 'cpu', 'memory', 'ports']);

    await fireEvent.click(screen.getByRole('button', { name: 'Reset columns' }));
    await waitFor(() => expect(stub.called('DELETE /api/preferences/grid')[0]?.query).toEqual({ gridId: 'containers' }));
    await waitFor(() => expect(screen.getByRole('columnheader', { name: /Stack/ })).toBeTruthy());
    expect(screen.getByRole('columnheader', { name: /Image/ })).toBeTruthy();
    expect(screen.queryByRole('columnheader', { name: /Uptime/ })).toBeNull();
  });

  it('shows an explicit empty state', async () => {
    stub.routes['GET /api/containers'] = [];
    render(ContainersScreen);
    expect(await screen.findByText('No containers on this environment.')).toBeTruthy();
    expect(screen.getByRole('link', { name: 'Create a container' })).toBeTruthy();
  });

  it('runs a row action and shows the server message when it fails', async () => {
    render(ContainersScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Stop web' }));
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain('engine said no');
    expect(stub.called('POST /api/containers/a1/stop')[0].query).toEqual({ env: '1' });
    const before = stub.called('GET /api/containers').length;
    await fireEvent.click(screen.getByRole('button', { name: 'Start db' }));
    await waitFor(() => expect(stub.called('POST /api/containers/b2/start')).toHaveLength(1));
    await waitFor(() => expect(screen.getByRole('status').textContent).toBe('db started.'));
    // The list is read again after the change.
    await waitFor(() => expect(stub.called('GET /api/containers').length).toBeGreaterThan(before));
  });

  it('asks before removing; Escape cancels, confirm removes with force for a running container', async () => {
    render(ContainersScreen);
    await screen.findByRole('table');
    const opener = screen.getByRole('button', { name: 'Remove web' });
    opener.focus(); // as with the keyboard (jsdom does not focus on click)
    await fireEvent.click(opener);
    let dialog = screen.getByRole('dialog', { name: 'Remove web?' });
    expect(document.activeElement?.textContent).toBe('Cancel');
    await fireEvent.keyDown(dialog, { key: 'Escape' });
    expect(screen.queryByRole('dialog')).toBeNull();
    expect(document.activeElement).toBe(opener);
    expect(stub.called('DELETE /api/containers/a1')).toHaveLength(0);

    await fireEvent.click(opener);
    dialog = screen.getByRole('dialog', { name: 'Remove web?' });
    expect((within(dialog).getByRole('checkbox') as HTMLInputElement).checked).toBe(true);
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Remove' }));
    await waitFor(() => expect(stub.called('DELETE /api/containers/a1')[0]?.query).toEqual({ env: '1', force: 'true' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
  });

  it('runs a bulk action on the selected containers as one batch and reports each one', async () => {
    batchAnswers((id) => (id === 'c3' ? 'Failed to stop container' : true));
    render(ContainersScreen);
    await screen.findByRole('table');
    const toolbar = screen.getByRole('toolbar', { name: 'Selected containers' });
    expect(within(toolbar).queryByRole('button', { name: 'Stop' })).toBeNull();

    await fireEvent.click(screen.getByRole('checkbox', { name: 'Select all shown containers' }));
    expect(within(toolbar).getByText('3')).toBeTruthy();
    await fireEvent.click(within(toolbar).getByRole('button', { name: 'Stop' }));

    await waitFor(() => expect(batch.runBatch).toHaveBeenCalledTimes(1));
    const [env, req] = vi.mocked(batch.runBatch).mock.calls[0];
    expect(env).toBe(1);
    expect(req).toMatchObject({ operation: 'stop', entityType: 'containers' });
    // db is not running: skipped, not sent.
    expect(req.items).toEqual([
      { id: 'c3', name: 'cache' },
      { id: 'a1', name: 'web' },
    ]);
    const results = await screen.findByRole('region', { name: /Stop: 1 done, 1 failed, 1 skipped/ });
    expect(within(results).getByText('stopped')).toBeTruthy();
    expect(within(results).getByText('failed: Failed to stop container')).toBeTruthy();
    expect(within(results).getByText('skipped (not running)')).toBeTruthy();
    expect(screen.getByRole('alert').textContent).toContain('cache: Failed to stop container');
    // The failed one stays selected for another try.
    expect((screen.getByRole('checkbox', { name: 'Select cache' }) as HTMLInputElement).checked).toBe(true);
    expect((screen.getByRole('checkbox', { name: 'Select web' }) as HTMLInputElement).checked).toBe(false);
    await fireEvent.click(within(results).getByRole('button', { name: 'Dismiss' }));
    expect(screen.queryByRole('region', { name: /Stop:/ })).toBeNull();
  });

  it('reports every item as failed when the batch is refused', async () => {
    vi.mocked(batch.runBatch).mockRejectedValue(new api.ApiError(403, 'Permission denied'));
    render(ContainersScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('checkbox', { name: 'Select web' }));
    await fireEvent.click(screen.getByRole('button', { name: 'Restart' }));
    const results = await screen.findByRole('region', { name: /Restart: 0 done, 1 failed/ });
    expect(within(results).getByText('failed: Permission denied')).toBeTruthy();
  });

  it('removes the selected containers after confirmation, as one batch', async () => {
    render(ContainersScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('checkbox', { name: 'Select db' }));
    await fireEvent.click(screen.getByRole('checkbox', { name: 'Select web' }));
    await fireEvent.click(screen.getByRole('button', { name: 'Remove…' }));
    const dialog = screen.getByRole('dialog', { name: 'Remove 2 containers?' });
    expect(within(dialog).getByText('db')).toBeTruthy();
    expect((within(dialog).getByRole('checkbox') as HTMLInputElement).checked).toBe(true);
    expect(batch.runBatch).not.toHaveBeenCalled();
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Remove' }));
    await waitFor(() => expect(batch.runBatch).toHaveBeenCalledTimes(1));
    const req = vi.mocked(batch.runBatch).mock.calls[0][1];
    expect(req).toMatchObject({ operation: 'remove', entityType: 'containers', options: { force: true } });
    expect(req.items.map((i) => i.id).sort()).toEqual(['a1', 'b2']);
    expect(stub.called('DELETE /api/containers/a1')).toHaveLength(0);
    expect(await screen.findByRole('region', { name: 'Remove: 2 done' })).toBeTruthy();
  });

  it('badges pending updates, checks for updates, and updates one or a selection with each outcome', async () => {
    stub.routes['GET /api/containers/check-updates'] = {
      environmentId: 1,
      pendingUpdates: [
        { containerId: 'a1', containerName: 'web', currentImage: 'nginx:1.27' },
        { containerId: 'zz', containerName: 'cache', currentImage: 'redis:7' },
      ],
    };
    vi.mocked(updates.runUpdates).mockImplementation(async (_env, ids, onResult) => {
      const out = ids.map((id, i) => {
        const r =
          id === 'c3'
            ? { container: id, name: 'cache', status: 'failed', success: false, error: 'health check failed, rolled back' }
            : { container: id, name: 'web', status: 'updated', success: true };
        onResult?.(r, i + 1);
        return r;
      });
      return out;
    });
    render(ContainersScreen);
    await screen.findByRole('table');
    await waitFor(() => expect(within(row('web')).getByText('update')).toBeTruthy(), { timeout: 5000 });
    expect(within(row('cache')).getByText('update')).toBeTruthy(); // by name: a recreated container keeps it
    expect(within(row('db')).queryByText('update')).toBeNull();
    expect(screen.getByText('2 updates available')).toBeTruthy();
    expect(within(row('db')).queryByRole('button', { name: 'Update db' })).toBeNull();

    await fireEvent.click(screen.getByRole('button', { name: 'Update web' }));
    await waitFor(() => expect(updates.runUpdates).toHaveBeenCalledWith(1, ['a1'], expect.any(Function)));
    expect(await screen.findByRole('region', { name: 'Update: 1 done' })).toBeTruthy();

    await fireEvent.click(screen.getByRole('checkbox', { name: 'Select all shown containers' }));
    await fireEvent.click(screen.getByRole('button', { name: 'Update (2)' }));
    await waitFor(() => expect(updates.runUpdates).toHaveBeenLastCalledWith(1, ['c3', 'a1'], expect.any(Function)));
    const results = await screen.findByRole('region', { name: 'Update: 1 done, 1 failed' });
    expect(within(results).getByText('failed: health check failed, rolled back')).toBeTruthy();

    await fireEvent.click(screen.getByRole('button', { name: 'Check for updates' }));
    await waitFor(() => expect(stub.called('POST /api/containers/check-updates')[0]?.query).toEqual({ env: '1' }));
    await waitFor(() => expect(screen.getByRole('status').textContent).toBe('1 update is available.'));
  });

  it('offers a viewer no New, selection, Stop, Remove, Update or check', async () => {
    session.session = {
      authenticated: true,
      authEnabled: true,
      user: { id: 2, username: 'viewer', isAdmin: false, permissions: { containers: ['view', 'logs', 'inspect'] } },
    };
    stub.routes['GET /api/containers/check-updates'] = { environmentId: 1, pendingUpdates: [{ containerId: 'a1', containerName: 'web' }] };
    render(ContainersScreen);
    await screen.findByRole('table');
    await waitFor(() => expect(within(row('web')).getByText('update')).toBeTruthy(), { timeout: 5000 });
    expect(screen.queryByRole('checkbox', { name: /Select/ })).toBeNull();
    expect(screen.queryByRole('link', { name: 'New container' })).toBeNull();
    expect(screen.queryByRole('button', { name: 'Check for updates' })).toBeNull();
    for (const b of ['Stop web', 'Restart web', 'Remove web', 'Update web', 'Start db']) {
      expect(screen.queryByRole('button', { name: b })).toBeNull();
    }
  });

  it('shows the error of the list call', async () => {
    stub.routes['GET /api/containers'] = () => {
      throw new api.ApiError(403, 'Access denied to this environment');
    };
    render(ContainersScreen);
    expect((await screen.findByRole('alert')).textContent).toContain('Access denied to this environment');
  });

  it('shows the error of the statistics stream', async () => {
    vi.mocked(containers.statsPass).mockReset().mockRejectedValue(new Error('Failed to list containers'));
    render(ContainersScreen);
    expect((await screen.findByRole('alert')).textContent).toContain('CPU and memory figures are unavailable: Failed to list containers');
  });

  it('has no serious or critical axe violations', async () => {
    const { container } = render(ContainersScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('checkbox', { name: 'Select web' }));
    await fireEvent.click(screen.getByRole('checkbox', { name: 'Group by stack' }));
    await expectNoSeriousAxeViolations(container);
  });
});
