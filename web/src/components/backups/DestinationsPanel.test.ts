// The destinations tab: Test connection of the dialog (the form's values
// posted to /api/backup/destinations/test, the answer shown, nothing saved),
// verify and the maintenance tasks (live lines, stats' figures, check's
// output, a confirm before prune and the repairs), and none of it for a
// caller without backups:manage.
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../../lib/api';
import { queryClient } from '../../lib/query';
import { session } from '../../lib/session.svelte';
import { stubApi, type StubApi, type StubCall } from '../../test-api';
import { expectNoSeriousAxeViolations } from '../../test-axe';
import DestinationsPanel from './DestinationsPanel.svelte';

const dests = [{ id: 1, name: 'nas', type: 'local', repository: '/srv/restic', environmentId: 1, lastTest: { status: 'success', at: '2026-11-28T10:00:00Z' } }];
const admin = { id: 1, username: 'admin', isAdmin: true };
const viewer = { id: 2, username: 'v', isAdmin: false, permissions: { backups: ['view'] }, environmentPermissions: { '1': { backups: ['view'] } } };

function sse(events: [string, unknown][]): Response {
  const body = events.map(([e, d]) => `event: ${e}\ndata: ${JSON.stringify(d)}\n\n`).join('');
  return new Response(body, { headers: { 'Content-Type': 'text/event-stream' } });
}

let api: StubApi;
beforeEach(() => {
  queryClient.clear();
  session.session = { authenticated: true, authEnabled: true, user: admin } as never;
  session.environments = [{ id: 1, name: 'local', connectionType: 'socket' }];
  session.envId = 1;
  api = stubApi({ 'GET /api/backup/destinations': dests, 'POST /api/backup/destinations': (c: StubCall) => ({ id: 2, ...(c.body as object) }) });
});
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

const open = () => render(DestinationsPanel, { props: { onsnapshots: () => {} } });

async function fillNew(): Promise<HTMLElement> {
  open();
  await fireEvent.click(await screen.findByRole('button', { name: 'Add destination' }));
  const d = screen.getByRole('dialog');
  await fireEvent.input(within(d).getByLabelText('Name'), { target: { value: 'usb' } });
  await fireEvent.input(within(d).getByLabelText('Path on the host'), { target: { value: '/mnt/usb/restic' } });
  await fireEvent.change(within(d).getByLabelText(/^Environment/), { target: { value: '1' } });
  await fireEvent.input(within(d).getByLabelText(/^Repository password/), { target: { value: 'pw-1' } });
  return d;
}

describe('Test connection', () => {
  it("posts the form's values, says the repository opens, and saves nothing", async () => {
    api.routes['POST /api/backup/destinations/test'] = { success: true, status: 'success', message: 'Repository reachable' };
    const d = await fillNew();
    await fireEvent.click(within(d).getByRole('button', { name: 'Test connection' }));
    expect(await within(d).findByText('Connection ok: Repository reachable.')).toBeTruthy();
    expect(api.called('POST /api/backup/destinations/test')[0].body).toEqual({ name: 'usb', flags: '', repository: '/mnt/usb/restic', environmentId: 1, password: 'pw-1' });
    expect(api.called('POST /api/backup/destinations')).toHaveLength(0);
    expect(screen.getByRole('dialog')).toBeTruthy();
    await expectNoSeriousAxeViolations(document.body);
  });

  it("shows the server's reason when the repository does not open", async () => {
    api.routes['POST /api/backup/destinations/test'] = { success: false, status: 'failed', error: 'Wrong repository password' };
    const d = await fillNew();
    await fireEvent.click(within(d).getByRole('button', { name: 'Test connection' }));
    expect((await within(d).findByRole('alert')).textContent).toBe('Test failed: Wrong repository password');
  });

  it('shows a refusal of the settings (4xx) and, before asking, what the form lacks', async () => {
    api.routes['POST /api/backup/destinations/test'] = () => {
      throw new ApiError(400, 'Invalid hostPath: only a local repository has one');
    };
    open();
    await fireEvent.click(await screen.findByRole('button', { name: 'Add destination' }));
    const d = screen.getByRole('dialog');
    await fireEvent.click(within(d).getByRole('button', { name: 'Test connection' }));
    expect(within(d).getByRole('alert').textContent).toMatch(/A name is needed/);
    expect(api.called('POST /api/backup/destinations/test')).toHaveLength(0);
    cleanup();
    const d2 = await fillNew();
    await fireEvent.click(within(d2).getByRole('button', { name: 'Test connection' }));
    expect((await within(d2).findByRole('alert')).textContent).toMatch(/Test failed: Invalid hostPath/);
  });

  it('tests a saved destination as edited (the secrets left empty are the stored ones)', async () => {
    api.routes['GET /api/backup/destinations/1'] = dests[0];
    api.routes['POST /api/backup/destinations/test'] = { success: false, status: 'needs_init', needsInit: true, error: 'Repository not initialized' };
    open();
    await fireEvent.click(await screen.findByRole('button', { name: 'Edit nas' }));
    const d = await screen.findByRole('dialog');
    await fireEvent.input(within(d).getByLabelText('Path on the host'), { target: { value: '/srv/restic-fixed' } });
    await fireEvent.click(within(d).getByRole('button', { name: 'Test connection' }));
    expect(await within(d).findByText(/Reachable, not initialized yet/)).toBeTruthy();
    expect(api.called('POST /api/backup/destinations/test')[0].body).toEqual({ destinationId: 1, name: 'nas', flags: '', repository: '/srv/restic-fixed', environmentId: 1 });
    expect(api.called('PUT /api/backup/destinations/1')).toHaveLength(0);
  });

  it('asks for the secrets again, before any request, when the edited repository is on another host', async () => {
    const rest = { id: 3, name: 'offsite', type: 'rest', repository: 'rest:http://backup.example:8000/berth/', envVarNames: ['RESTIC_REST_PASSWORD', 'RESTIC_REST_USERNAME'],
      envVars: { RESTIC_REST_USERNAME: 'berth', RESTIC_REST_PASSWORD: '********' }, hasPassword: true };
    api.routes['GET /api/backup/destinations'] = [rest];
    api.routes['GET /api/backup/destinations/3'] = rest;
    api.routes['POST /api/backup/destinations/test'] = { success: true, status: 'success', message: 'Repository reachable' };
    open();
    await fireEvent.click(await screen.findByRole('button', { name: 'Edit offsite' }));
    const d = await screen.findByRole('dialog');
    const password = within(d).getByLabelText(/^Repository password/) as HTMLInputElement;
    expect(password.disabled).toBe(true);
    // Another path on the same server: the stored secrets are used.
    await fireEvent.input(within(d).getByLabelText('REST server URL'), { target: { value: 'http://backup.example:8000/berth-2/' } });
    expect(within(d).queryByTestId('moved-host')).toBeNull();
    await fireEvent.click(within(d).getByRole('button', { name: 'Test connection' }));
    expect(await within(d).findByText('Connection ok: Repository reachable.')).toBeTruthy();
    expect(api.called('POST /api/backup/destinations/test')[0].body).toEqual({ destinationId: 3, name: 'offsite', flags: '',
      repository: 'rest:http://backup.example:8000/berth-2/', envVars: { RESTIC_REST_USERNAME: 'berth', RESTIC_REST_PASSWORD: '********' } });
    // Another port: another host for the secrets.
    await fireEvent.input(within(d).getByLabelText('REST server URL'), { target: { value: 'http://backup.example:8001/berth/' } });
    expect((await within(d).findByTestId('moved-host')).textContent).toMatch(/another host now: enter the repository password, the REST password again/);
    expect(password.disabled).toBe(false);
    await fireEvent.click(within(d).getByRole('button', { name: 'Test connection' }));
    expect(within(d).getByRole('alert').textContent).toMatch(/another host now/);
    expect(api.called('POST /api/backup/destinations/test')).toHaveLength(1);
    await fireEvent.input(password, { target: { value: 'pw-new' } });
    await fireEvent.input(within(d).getByLabelText(/^Password/), { target: { value: 'rest-new' } });
    expect(within(d).queryByTestId('moved-host')).toBeNull();
    await fireEvent.click(within(d).getByRole('button', { name: 'Test connection' }));
    await waitFor(() => expect(api.called('POST /api/backup/destinations/test')).toHaveLength(2));
    expect(api.called('POST /api/backup/destinations/test')[1].body).toEqual({ destinationId: 3, name: 'offsite', flags: '', password: 'pw-new',
      repository: 'rest:http://backup.example:8001/berth/', envVars: { RESTIC_REST_USERNAME: 'berth', RESTIC_REST_PASSWORD: 'rest-new' } });
  });
});

describe('maintenance', () => {
  it('verifies reading the part asked, with the live lines and the outcome', async () => {
    api.routes['POST /api/backup/destinations/1/verify'] = () =>
      sse([
      ['progress', { message: 'load indexes' }],
      ['progress', { message: 'read 5% of the data packs' }],
      ['result', { success: true, task: 'check', output: ['load indexes', 'read 5% of the data packs'] }],
    ]);
    open();
    await fireEvent.click(await screen.findByRole('button', { name: 'Verify nas' }));
    const d = screen.getByRole('dialog', { name: 'Verify nas' });
    await fireEvent.input(within(d).getByLabelText(/Part of the data to read/), { target: { value: 'half' } });
    await fireEvent.click(within(d).getByRole('button', { name: 'Verify' }));
    expect(within(d).getByRole('alert').textContent).toMatch(/percentage/);
    expect(api.called('POST /api/backup/destinations/1/verify')).toHaveLength(0);
    await fireEvent.input(within(d).getByLabelText(/Part of the data to read/), { target: { value: '1/10' } });
    await fireEvent.click(within(d).getByRole('button', { name: 'Verify' }));
    expect(await within(d).findByText('done')).toBeTruthy();
    expect(within(d).getByText(/read 5% of the data packs/)).toBeTruthy();
    expect(api.called('POST /api/backup/destinations/1/verify')[0].body).toEqual({ dataSubset: '1/10' });
  });

  it("runs stats at once and shows its figures; check's failure says why", async () => {
    api.routes['POST /api/backup/destinations/1/task'] = (c: StubCall) =>
      (c.body as { task: string }).task === 'stats'
        ? sse([['result', { success: true, task: 'stats', output: [], stats: { totalSize: 3145728, totalFileCount: 12, snapshotsCount: 4 } }]])
        : sse([['result', { success: false, task: 'check', output: ['error: pack 1234 not found'], error: 'restic check found errors' }]]);
    open();
    const menu = (await screen.findByLabelText('Maintenance of nas')) as HTMLSelectElement;
    await fireEvent.change(menu, { target: { value: 'stats' } });
    const d = await screen.findByRole('dialog', { name: 'Stats nas' });
    const stats = await within(d).findByLabelText('Repository statistics');
    expect(stats.textContent).toMatch(/Total size\s*3\.1 MB/);
    expect(stats.textContent).toMatch(/Files\s*12/);
    expect(stats.textContent).toMatch(/Snapshots\s*4/);
    await expectNoSeriousAxeViolations(document.body);
    await fireEvent.click(within(d).getByRole('button', { name: 'Close' }));

    await fireEvent.change(menu, { target: { value: 'check' } });
    const c = await screen.findByRole('dialog', { name: 'Check nas' });
    expect((await within(c).findByRole('alert')).textContent).toMatch(/restic check found errors/);
    expect(within(c).getByLabelText('Output').textContent).toBe('error: pack 1234 not found');
    expect(api.called('POST /api/backup/destinations/1/task').map((x) => x.body)).toEqual([{ task: 'stats' }, { task: 'check' }]);
  });

  it('asks before prune and the repairs, and runs nothing when cancelled', async () => {
    api.routes['POST /api/backup/destinations/1/task'] = () => sse([['result', { success: true, task: 'prune', output: ['removed 3 packs'] }]]);
    open();
    const menu = (await screen.findByLabelText('Maintenance of nas')) as HTMLSelectElement;
    expect(within(menu).getAllByRole('option').map((o) => o.textContent)).toEqual(['Maintenance…', 'Unlock', 'Check', 'Prune', 'Stats', 'Repair index', 'Repair snapshots']);
    await fireEvent.change(menu, { target: { value: 'repair-index' } });
    const r = await screen.findByRole('dialog', { name: 'Repair index nas' });
    expect(within(r).getByText(/rewrites the repository/)).toBeTruthy();
    await expectNoSeriousAxeViolations(document.body);
    await fireEvent.click(within(r).getByRole('button', { name: 'Cancel' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    expect(api.called('POST /api/backup/destinations/1/task')).toHaveLength(0);

    await fireEvent.change(menu, { target: { value: 'prune' } });
    const p = await screen.findByRole('dialog', { name: 'Prune nas' });
    expect(within(p).getByText(/deletes the data of forgotten snapshots/)).toBeTruthy();
    await fireEvent.click(within(p).getByRole('button', { name: 'Prune' }));
    expect(await within(p).findByText('removed 3 packs')).toBeTruthy();
    expect(api.called('POST /api/backup/destinations/1/task')[0].body).toEqual({ task: 'prune' });
  });

  it('stops a running task: the job is cancelled and the dialog says stopped', async () => {
    let push: ((chunk: string) => void) | null = null;
    let end: (() => void) | null = null;
    const ev = (e: string, d: unknown) => `event: ${e}\ndata: ${JSON.stringify(d)}\n\n`;
    api.routes['POST /api/backup/destinations/1/task'] = () => {
      const enc = new TextEncoder();
      const body = new ReadableStream<Uint8Array>({
        start(c) {
          push = (chunk) => c.enqueue(enc.encode(chunk));
          end = () => c.close();
          push(ev('progress', { message: 'load indexes' }));
        },
      });
      return new Response(body, { headers: { 'Content-Type': 'text/event-stream', 'X-Job-Id': 'job-7' } });
    };
    api.routes['DELETE /api/jobs/job-7'] = () => {
      push!(ev('result', { success: false, task: 'check', output: ['load indexes'], error: 'Stopped before it finished', cancelled: true }));
      end!();
      return { cancelled: true };
    };
    open();
    const menu = (await screen.findByLabelText('Maintenance of nas')) as HTMLSelectElement;
    await fireEvent.change(menu, { target: { value: 'check' } });
    const c = await screen.findByRole('dialog', { name: 'Check nas' });
    expect(await within(c).findByText(/load indexes/)).toBeTruthy();
    const stop = await within(c).findByRole('button', { name: 'Stop' });
    await waitFor(() => expect((stop as HTMLButtonElement).disabled).toBe(false));
    await fireEvent.click(stop);
    expect(await within(c).findByText('stopped')).toBeTruthy();
    expect(within(c).getByTestId('maintenance-stopped').textContent).toMatch(/released its lock/);
    expect(within(c).queryByRole('alert')).toBeNull();
    expect(within(c).queryByRole('button', { name: 'Stop' })).toBeNull();
    expect(api.called('DELETE /api/jobs/job-7')).toHaveLength(1);
  });

  it('offers a Viewer neither verify nor the maintenance tasks', async () => {
    session.session = { authenticated: true, authEnabled: true, user: viewer } as never;
    open();
    await screen.findByRole('table', { name: 'Backup destinations' });
    expect(screen.queryByRole('button', { name: 'Verify nas' })).toBeNull();
    expect(screen.queryByLabelText('Maintenance of nas')).toBeNull();
  });
});
