import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import * as api from '../lib/api';
import * as containers from '../lib/api-containers';
import * as batch from '../lib/api-batch';
import { session } from '../lib/session.svelte';
import { expectNoSeriousAxeViolations } from '../test-axe';
import ContainersScreen from './ContainersScreen.svelte';

vi.mock('../lib/api', async (importOriginal) => {
  const real = await importOriginal<typeof import('../lib/api')>();
  return { ...real, listContainers: vi.fn(), removeContainer: vi.fn() };
});
vi.mock('../lib/api-batch', () => ({ runBatch: vi.fn() }));
vi.mock('../lib/api-containers', async (importOriginal) => {
  const real = await importOriginal<typeof import('../lib/api-containers')>();
  return { ...real, lifecycle: vi.fn(), statsPass: vi.fn() };
});

const list: api.ContainerSummary[] = [
  {
    id: 'a1',
    name: 'web',
    image: 'nginx:1.27',
    state: 'running',
    status: 'Up 2 hours (healthy)',
    health: 'healthy',
    ports: [{ PrivatePort: 80, PublicPort: 8080, Type: 'tcp' }],
    labels: { 'com.docker.compose.project': 'shop' },
  },
  { id: 'b2', name: 'db', image: 'postgres:16', state: 'exited', status: 'Exited (0) 1 day ago', ports: [] },
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

beforeEach(() => {
  session.session = { authenticated: true, authEnabled: false };
  batchAnswers(() => true);
  session.environments = [{ id: 1, name: 'local', connectionType: 'socket' }];
  session.envId = 1;
  vi.mocked(api.listContainers).mockResolvedValue(structuredClone(list));
  vi.mocked(containers.lifecycle).mockResolvedValue({ success: true });
  vi.mocked(api.removeContainer).mockResolvedValue({ success: true });
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
});

const rows = () => screen.getAllByRole('row').slice(1);
const names = () => rows().map((r) => within(r).getAllByRole('cell')[1].textContent?.trim());
const row = (name: string) => rows().find((r) => within(r).queryByRole('link', { name }))!;

describe('ContainersScreen', () => {
  it('lists the containers of the selected environment, sorted by name, with their figures', async () => {
    render(ContainersScreen);
    expect(screen.getByRole('heading', { level: 1, name: 'Containers' })).toBeTruthy();
    expect(screen.getByRole('link', { name: 'New container' }).getAttribute('href')).toBe('/containers/new');
    await screen.findByRole('table');
    expect(api.listContainers).toHaveBeenCalledWith(1);
    expect(names()).toEqual(['cache', 'db', 'web']);
    const web = row('web');
    expect(within(web).getByText('8080→80/tcp')).toBeTruthy();
    expect(within(web).getByText('healthy')).toBeTruthy();
    expect(within(web).getByText('2 hours')).toBeTruthy();
    expect(within(web).getByRole('link', { name: 'shop' }).getAttribute('href')).toBe('/stacks/shop');
    expect(containers.statsPass).toHaveBeenCalledWith(1, expect.any(Function), expect.any(AbortSignal));
    await waitFor(() => expect(within(row('web')).getByText('12.5 %')).toBeTruthy());
    expect(within(row('web')).getByText('64.0 MiB')).toBeTruthy();
    expect(within(row('db')).getAllByText('—').length).toBeGreaterThanOrEqual(2);
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

  it('filters with the Filter box and the state, and shows an empty match state', async () => {
    render(ContainersScreen);
    await screen.findByRole('table');
    const filter = screen.getByLabelText('Filter');
    await fireEvent.input(filter, { target: { value: 'running' } });
    expect(names()).toEqual(['cache', 'web']);
    await fireEvent.input(filter, { target: { value: 'shop' } });
    expect(names()).toEqual(['web']);
    await fireEvent.input(filter, { target: { value: 'zzz' } });
    expect(screen.queryByRole('table')).toBeNull();
    expect(screen.getByText(/No container matches/)).toBeTruthy();
    await fireEvent.click(screen.getByRole('button', { name: 'Clear filter' }));
    expect(names()).toHaveLength(3);
    await fireEvent.change(screen.getByLabelText('State'), { target: { value: 'stopped' } });
    expect(names()).toEqual(['db']);
  });

  it('shows an explicit empty state', async () => {
    vi.mocked(api.listContainers).mockResolvedValue([]);
    render(ContainersScreen);
    expect(await screen.findByText('No containers on this environment.')).toBeTruthy();
    expect(screen.getByRole('link', { name: 'Create a container' })).toBeTruthy();
  });

  it('runs a row action and shows the server message when it fails', async () => {
    vi.mocked(containers.lifecycle).mockRejectedValueOnce(new api.ApiError(500, 'engine said no'));
    render(ContainersScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Stop web' }));
    expect(containers.lifecycle).toHaveBeenCalledWith(1, 'a1', 'stop');
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain('engine said no');
    await fireEvent.click(screen.getByRole('button', { name: 'Start db' }));
    await waitFor(() => expect(containers.lifecycle).toHaveBeenCalledWith(1, 'b2', 'start'));
    await waitFor(() => expect(screen.getByRole('status').textContent).toBe('db started.'));
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
    expect(api.removeContainer).not.toHaveBeenCalled();

    await fireEvent.click(opener);
    dialog = screen.getByRole('dialog', { name: 'Remove web?' });
    expect((within(dialog).getByRole('checkbox') as HTMLInputElement).checked).toBe(true);
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Remove' }));
    await waitFor(() => expect(api.removeContainer).toHaveBeenCalledWith(1, 'a1', true));
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
    expect(containers.lifecycle).not.toHaveBeenCalled();
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
    expect(api.removeContainer).not.toHaveBeenCalled();
    expect(await screen.findByRole('region', { name: 'Remove: 2 done' })).toBeTruthy();
  });

  it('offers no selection and no bulk action to a viewer', async () => {
    session.session = {
      authenticated: true,
      authEnabled: true,
      user: { id: 2, username: 'viewer', isAdmin: false, permissions: { containers: ['view', 'logs', 'inspect'] } },
    };
    render(ContainersScreen);
    await screen.findByRole('table');
    expect(screen.queryByRole('checkbox')).toBeNull();
    expect(screen.queryByRole('button', { name: 'Remove…' })).toBeNull();
  });

  it('shows the error of the list call', async () => {
    vi.mocked(api.listContainers).mockRejectedValue(new api.ApiError(403, 'Access denied to this environment'));
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
    await expectNoSeriousAxeViolations(container);
  });
});
