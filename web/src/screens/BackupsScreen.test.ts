import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../lib/api';
import { queryClient } from '../lib/query';
import { router } from '../lib/router.svelte';
import { session } from '../lib/session.svelte';
import { stubApi, type StubApi, type StubCall } from '../test-api';
import BackupsScreen from './BackupsScreen.svelte';

const dests = [
  { id: 1, name: 'nas', type: 'local', repository: '/srv/restic', environmentId: 1, lastTest: { status: 'success', at: '2026-11-28T10:00:00Z' } },
  { id: 2, name: 'offsite', type: 'sftp', repository: 'sftp:bk@h:/r', lastTest: { status: 'failed', message: 'Wrong repository password', at: '2026-11-28T10:00:00Z' } },
  { id: 3, name: 'new', type: 'rest', repository: 'rest:http://h:8000/x' },
];
const configs = [
  {
    id: 5,
    name: 'web',
    type: 'container',
    targetName: 'web',
    environmentId: 1,
    destinationId: 1,
    enabled: true,
    allVolumes: true,
    schedule: '0 3 * * *',
    retention: { keepDaily: 7 },
    lastRunStatus: 'success',
    lastRunAt: '2026-11-28T03:00:00Z',
  },
];
const snaps = [
  { id: 'aaaaaaaa11', shortId: 'aaaaaaaa', time: '2026-11-28T03:00:00Z', hostname: 'inst-1', paths: ['/backup/volumes/web_data'], tags: ['berth:config=5', 'berth:instance=inst-1'], own: true, configId: 5 },
  { id: 'bbbbbbbb22', shortId: 'bbbbbbbb', time: '2026-11-27T03:00:00Z', hostname: 'someone-else', paths: ['/backup/volumes/web_data'], tags: [], own: false, configId: null },
];

let api: StubApi;
const viewer = { id: 2, username: 'v', isAdmin: false, permissions: { backups: ['view'] }, environmentPermissions: { '1': { backups: ['view'] } } };
const admin = { id: 1, username: 'admin', isAdmin: true };

beforeEach(() => {
  queryClient.clear();
  router.navigate('/backups', { replace: true });
  session.session = { authenticated: true, authEnabled: true, user: admin } as never;
  session.environments = [{ id: 1, name: 'local', connectionType: 'socket' }];
  session.envId = 1;
  api = stubApi({
    'GET /api/backup/destinations': dests,
    'GET /api/backup/configs': configs,
    'GET /api/backup/instance': { instanceId: 'inst-1' },
    'GET /api/backup/snapshots': { instanceId: 'inst-1', snapshots: snaps },
    'POST /api/backup/configs': (c: StubCall) => ({ id: 6, ...(c.body as object) }),
    'DELETE /api/backup/destinations/1': () => {
      throw new ApiError(409, 'The destination is used by 1 backup configuration (web)');
    },
    'POST /api/backup/restore/preview': {
      targetType: 'container',
      targetName: 'web',
      items: [{ kind: 'volume', source: 'web_data', target: 'web_data', exists: true, entries: ['hello.txt'], files: 1, size: 6 }],
    },
  });
});
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  vi.clearAllMocks();
});

describe('BackupsScreen', () => {
  it('lists configurations with schedule and retention in words, and the honest destination states', async () => {
    render(BackupsScreen);
    const row = (await screen.findByText('keeps 7 daily')).closest('tr')!;
    expect(within(row).getByText('nas')).toBeTruthy();
    expect(within(row).getByText('success')).toBeTruthy();
    expect(within(row).getByRole('button', { name: 'Run now: the backup of web' })).toBeTruthy();

    await fireEvent.click(screen.getByRole('tab', { name: 'Destinations' }));
    const table = await screen.findByRole('table', { name: 'Backup destinations' });
    const rows = within(table).getAllByRole('row').slice(1);
    expect(within(rows[0]).getByText('ok')).toBeTruthy();
    expect(within(rows[1]).getByText('failing')).toBeTruthy();
    expect(within(rows[1]).getByText('Wrong repository password')).toBeTruthy();
    expect(within(rows[2]).getByText('not tested')).toBeTruthy();
  });

  it('shows the server refusal of a delete of a destination in use', async () => {
    router.navigate('/backups?tab=destinations', { replace: true });
    render(BackupsScreen);
    await fireEvent.click(await screen.findByRole('button', { name: 'Delete nas' }));
    await fireEvent.click(within(screen.getByRole('dialog')).getByRole('button', { name: 'Delete' }));
    expect(await screen.findByText(/used by 1 backup configuration/)).toBeTruthy();
  });

  it('edits a REST destination without showing or resending its password', async () => {
    api.routes['GET /api/backup/destinations/3'] = { ...dests[2], envVars: { RESTIC_REST_USERNAME: 'bk', RESTIC_REST_PASSWORD: 'rest-s3cret' } };
    api.routes['PUT /api/backup/destinations/3'] = (c: StubCall) => ({ ...dests[2], ...(c.body as object) });
    router.navigate('/backups?tab=destinations', { replace: true });
    render(BackupsScreen);
    await fireEvent.click(await screen.findByRole('button', { name: 'Edit new' }));
    const dialog = await screen.findByRole('dialog');
    expect((within(dialog).getByLabelText('User') as HTMLInputElement).value).toBe('bk');
    expect((within(dialog).getByLabelText(/^Password/) as HTMLInputElement).value).toBe('');
    expect(document.body.innerHTML).not.toContain('rest-s3cret');
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(api.called('PUT /api/backup/destinations/3')).toHaveLength(1));
    const body = api.called('PUT /api/backup/destinations/3')[0].body as Record<string, unknown>;
    expect(body.envVars).toEqual({ RESTIC_REST_USERNAME: 'bk', RESTIC_REST_PASSWORD: '********' });
    expect(body).not.toHaveProperty('password');
    expect(JSON.stringify(body)).not.toContain('rest-s3cret');
  });

  it('opens the configuration dialog with the target filled in from a container page', async () => {
    router.navigate('/backups?new=container&target=db&env=1', { replace: true });
    render(BackupsScreen);
    const dialog = await screen.findByRole('dialog');
    expect((within(dialog).getByLabelText(/Container name/) as HTMLInputElement).value).toBe('db');
    await within(dialog).findByRole('option', { name: 'nas' });
    await fireEvent.change(within(dialog).getByLabelText('Destination'), { target: { value: '1' } });
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Create' }));
    await waitFor(() => expect(api.called('POST /api/backup/configs')).toHaveLength(1));
    expect(api.called('POST /api/backup/configs')[0].body).toMatchObject({ type: 'container', targetName: 'db', environmentId: 1, destinationId: 1 });
  });

  it("opens from a stack's page and says where the stack's directory is read from", async () => {
    api.routes['GET /api/backup/stack-path'] = { kind: 'candidate', hostPath: '/srv/stacks/web' };
    router.navigate('/backups?new=stack&target=web&env=1', { replace: true });
    render(BackupsScreen);
    const dialog = await screen.findByRole('dialog');
    expect((within(dialog).getByLabelText(/Stack name/) as HTMLInputElement).value).toBe('web');
    expect(await within(dialog).findByText(/read from \/srv\/stacks\/web/)).toBeTruthy();
    expect(api.called('GET /api/backup/stack-path')[0].query).toEqual({ target: 'web', env: '1' });
  });

  it('tells own snapshots from foreign ones and previews a restore before it runs', async () => {
    render(BackupsScreen);
    await fireEvent.click(await screen.findByRole('button', { name: 'Snapshots of web' }));
    const table = await screen.findByRole('table', { name: 'Snapshots' });
    const rows = within(table).getAllByRole('row').slice(1);
    expect(within(rows[0]).getByText('this Berth')).toBeTruthy();
    expect(within(rows[1]).getByText('foreign')).toBeTruthy();
    expect((within(rows[1]).getByRole('button', { name: 'Forget bbbbbbbb' }) as HTMLButtonElement).disabled).toBe(true);
    expect(api.called('GET /api/backup/snapshots')[0].query).toEqual({ configId: '5' });

    await fireEvent.click(within(rows[0]).getByRole('button', { name: 'Restore aaaaaaaa' }));
    const dialog = await screen.findByRole('dialog');
    expect(await within(dialog).findByText('hello.txt')).toBeTruthy();
    expect((within(dialog).getByLabelText('New name') as HTMLInputElement).value).toBe('web-restored');
    // in place: what exists now is said before anything is done
    await fireEvent.click(within(dialog).getByLabelText(/In place/));
    expect(within(dialog).getByText('exists: replaced')).toBeTruthy();
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Restore' }));
    expect(within(dialog).getByText(/Confirm that the current data is replaced/)).toBeTruthy();
    expect(api.called('POST /api/backup/restore')).toHaveLength(0);
    expect(api.called('POST /api/backup/restore/preview')[0].body).toMatchObject({ destinationId: 1, snapshotId: 'aaaaaaaa11', includeTargets: true });
  });

  it('shows a Viewer the lists without any action button', async () => {
    session.session = { authenticated: true, authEnabled: true, user: viewer } as never;
    render(BackupsScreen);
    await screen.findByText('keeps 7 daily');
    expect(screen.queryByRole('button', { name: 'New configuration' })).toBeNull();
    expect(screen.queryByRole('button', { name: /^Run now/ })).toBeNull();
    expect(screen.queryByRole('button', { name: /^Edit / })).toBeNull();

    await fireEvent.click(screen.getByRole('tab', { name: 'Destinations' }));
    await screen.findByRole('table', { name: 'Backup destinations' });
    expect(screen.queryByRole('button', { name: 'Add destination' })).toBeNull();
    expect(screen.queryByRole('button', { name: /^(Test|Delete|Init|Rotate key of) / })).toBeNull();

    await fireEvent.click(screen.getByRole('tab', { name: 'Snapshots' }));
    await fireEvent.change(screen.getByLabelText('Snapshots of'), { target: { value: 'config:5' } });
    await screen.findByRole('table', { name: 'Snapshots' });
    expect(screen.getAllByRole('button', { name: /^Browse / })).toHaveLength(2);
    expect(screen.queryByRole('button', { name: /^(Restore|Forget) / })).toBeNull();
  });

  it('shows a run in progress elsewhere and stops it', async () => {
    api.routes['GET /api/backup/configs'] = [{ ...configs[0], running: true }];
    api.routes['POST /api/backup/configs/5/stop'] = { success: true, stopped: true };
    render(BackupsScreen);
    expect(await screen.findByText('running now')).toBeTruthy();
    expect((screen.getByRole('button', { name: 'Run now: the backup of web' }) as HTMLButtonElement).disabled).toBe(true);
    await fireEvent.click(screen.getByRole('button', { name: 'Stop the backup of web' }));
    expect(await screen.findByText('The backup of web is stopped.')).toBeTruthy();
    expect(api.called('POST /api/backup/configs/5/stop')).toHaveLength(1);
  });

  it('says what to do when nothing is configured', async () => {
    api.routes['GET /api/backup/destinations'] = [];
    api.routes['GET /api/backup/configs'] = [];
    render(BackupsScreen);
    expect(await screen.findByText(/Add a destination first/)).toBeTruthy();
  });
});
