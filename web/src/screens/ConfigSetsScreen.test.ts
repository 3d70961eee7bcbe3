import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import * as tpl from '../lib/api-templates';
import { stubApi, type StubApi } from '../test-api';
import { ApiError } from '../lib/api';
import { session } from '../lib/session.svelte';
import { expectNoSeriousAxeViolations } from '../test-axe';
import ConfigSetsScreen from './ConfigSetsScreen.svelte';

let api: StubApi;
type Body = tpl.ConfigSetBody;
const created = () => api.called('POST /api/config-sets').map((c) => c.body as Body);
const updated = (id: number) => api.called(`PUT /api/config-sets/${id}`).map((c) => c.body as Body);
/** Answers route once with the server's refusal, then as before. */
function refuseOnce(route: string, err: ApiError) {
  const before = api.routes[route];
  api.routes[route] = () => {
    api.routes[route] = before;
    throw err;
  };
}

// The server masks secret values as "***"; here the secret carries a value
// that must never reach the page, to catch a screen that shows it.
const LEAK = 'hunter2-must-not-show';
const sets: tpl.ConfigSet[] = [
  {
    id: 1,
    name: 'web defaults',
    description: 'For the web tier',
    envVars: [
      { key: 'TZ', value: 'UTC', isSecret: false },
      { key: 'DB_PASSWORD', value: LEAK, isSecret: true },
    ],
    labels: [{ key: 'team', value: 'web' }],
    ports: [{ containerPort: '80', hostPort: '8080', protocol: 'tcp' }],
    volumes: [
      { hostPath: 'data', containerPath: '/data', mode: 'rw' },
      { hostPath: '/srv/conf', containerPath: '/etc/conf', mode: 'ro' },
    ],
    networkMode: 'bridge',
    restartPolicy: 'unless-stopped',
  },
  { id: 2, name: 'bare', description: '', envVars: [], labels: [], ports: [], volumes: [], networkMode: '', restartPolicy: '' },
];

beforeEach(() => {
  session.session = { authenticated: true, authEnabled: true, user: { id: 1, username: 'admin', isAdmin: true } };
  api = stubApi({
    'GET /api/config-sets': sets,
    'POST /api/config-sets': (c: { body: unknown }) => ({ id: 9, ...(c.body as object) }),
    'PUT /api/config-sets/1': (c: { body: unknown }) => ({ id: 1, ...(c.body as object) }),
    'PUT /api/config-sets/2': (c: { body: unknown }) => ({ id: 2, ...(c.body as object) }),
    'DELETE /api/config-sets/2': { success: true },
  });
});
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  session.session = null;
});

const rows = () => within(screen.getByRole('table', { name: 'Config sets' })).getAllByRole('row').slice(1);
const rowOf = (name: string) => rows().find((r) => within(r).queryByRole('rowheader')?.textContent?.includes(name))!;

describe('ConfigSetsScreen', () => {
  it('lists the config sets with their settings, secret values hidden', { timeout: 60_000 }, async () => {
    const { container } = render(ConfigSetsScreen);
    expect(screen.getByRole('heading', { level: 1, name: 'Config sets' })).toBeTruthy();
    await screen.findByRole('table', { name: 'Config sets' });
    expect(rows().map((r) => within(r).getByRole('rowheader').textContent?.trim())).toEqual(['web defaults For the web tier', 'bare']);
    const web = rowOf('web defaults');
    const vars = within(web).getByRole('list', { name: 'Variables of web defaults' });
    expect(within(vars).getByText('TZ=UTC')).toBeTruthy();
    expect(vars.textContent).toContain('DB_PASSWORD=');
    expect(within(vars).getByText('secret')).toBeTruthy();
    expect(within(web).getByText('8080→80/tcp')).toBeTruthy();
    expect(within(web).getByText('/srv/conf:/etc/conf:ro')).toBeTruthy();
    expect(within(web).getByText('team=web')).toBeTruthy();
    const cells = within(web).getAllByRole('cell').map((c) => c.textContent?.trim());
    expect(cells.slice(4, 6)).toEqual(['bridge', 'unless-stopped']);
    expect(within(rowOf('bare')).getAllByRole('cell').map((c) => c.textContent?.trim()).slice(0, 6)).toEqual([
      'none',
      'none',
      'none',
      'none',
      'default',
      'not set',
    ]);
    expect(container.textContent).not.toContain(LEAK);
    await expectNoSeriousAxeViolations(container);
  });

  it('filters by name, variable and label', async () => {
    render(ConfigSetsScreen);
    await screen.findByRole('table', { name: 'Config sets' });
    await fireEvent.input(screen.getByRole('searchbox'), { target: { value: 'db_pass' } });
    expect(rows()).toHaveLength(1);
    await fireEvent.input(screen.getByRole('searchbox'), { target: { value: 'nothing like it' } });
    expect(screen.getByText('No config set matches.')).toBeTruthy();
  });

  it('creates a config set with every kind of setting', { timeout: 60_000 }, async () => {
    render(ConfigSetsScreen);
    await screen.findByRole('table', { name: 'Config sets' });
    await fireEvent.click(screen.getByRole('button', { name: 'New config set' }));
    const dialog = screen.getByRole('dialog', { name: 'New config set' });
    const d = within(dialog);
    await fireEvent.input(d.getByLabelText('Name'), { target: { value: '  api  ' } });
    await fireEvent.input(d.getByLabelText('Description'), { target: { value: 'API servers' } });
    await fireEvent.click(d.getByRole('button', { name: 'Add variable' }));
    await fireEvent.input(d.getByLabelText('Variable 1 name'), { target: { value: 'LOG_LEVEL' } });
    await fireEvent.input(d.getByLabelText('Variable 1 value'), { target: { value: 'debug' } });
    await fireEvent.click(d.getByRole('button', { name: 'Add variable' }));
    await fireEvent.input(d.getByLabelText('Variable 2 name'), { target: { value: 'API_TOKEN' } });
    await fireEvent.click(d.getByLabelText('Variable 2 secret'));
    expect((d.getByLabelText('Variable 2 value') as HTMLInputElement).type).toBe('password');
    await fireEvent.input(d.getByLabelText('Variable 2 value'), { target: { value: 's3cret' } });
    await fireEvent.click(d.getByRole('button', { name: 'Add variable' }));
    // A new row has the focus; an empty one is dropped.
    await waitFor(() => expect(document.activeElement).toBe(d.getByLabelText('Variable 3 name')));
    await fireEvent.click(d.getByRole('button', { name: 'Add label' }));
    await fireEvent.input(d.getByLabelText('Label 1 name'), { target: { value: 'tier' } });
    await fireEvent.input(d.getByLabelText('Label 1 value'), { target: { value: 'api' } });
    await fireEvent.click(d.getByRole('button', { name: 'Add port' }));
    await waitFor(() => expect(document.activeElement).toBe(d.getByLabelText('Port 1 host port')));
    await fireEvent.input(d.getByLabelText('Port 1 host port'), { target: { value: '9000' } });
    await fireEvent.input(d.getByLabelText('Port 1 container port'), { target: { value: '8000' } });
    await fireEvent.change(d.getByLabelText('Port 1 protocol'), { target: { value: 'udp' } });
    await fireEvent.click(d.getByRole('button', { name: 'Add mount' }));
    await fireEvent.input(d.getByLabelText('Mount 1 volume or host path'), { target: { value: 'cache' } });
    await fireEvent.input(d.getByLabelText('Mount 1 path in the container'), { target: { value: '/var/cache' } });
    await fireEvent.change(d.getByLabelText('Mount 1 access'), { target: { value: 'ro' } });
    await fireEvent.input(d.getByLabelText('Network mode'), { target: { value: 'host' } });
    await fireEvent.change(d.getByLabelText('Restart policy'), { target: { value: 'always' } });
    await fireEvent.click(d.getByRole('button', { name: 'Create' }));
    await waitFor(() => expect(created()).toHaveLength(1));
    expect(created()[0]).toEqual({
      name: 'api',
      description: 'API servers',
      envVars: [
        { key: 'LOG_LEVEL', value: 'debug', isSecret: false },
        { key: 'API_TOKEN', value: 's3cret', isSecret: true },
      ],
      labels: [{ key: 'tier', value: 'api' }],
      ports: [{ containerPort: '8000', hostPort: '9000', protocol: 'udp' }],
      volumes: [{ hostPath: 'cache', containerPath: '/var/cache', mode: 'ro' }],
      networkMode: 'host',
      restartPolicy: 'always',
    });
    expect(await screen.findByText('Config set api created.')).toBeTruthy();
    expect(screen.queryByRole('dialog')).toBeNull();
    await waitFor(() => expect(api.called('GET /api/config-sets')).toHaveLength(2));
  });

  it('edits a set keeping its secret unless a new value is typed', { timeout: 60_000 }, async () => {
    render(ConfigSetsScreen);
    await screen.findByRole('table', { name: 'Config sets' });
    await fireEvent.click(screen.getByRole('button', { name: 'Edit web defaults' }));
    let d = within(screen.getByRole('dialog', { name: 'Edit web defaults' }));
    expect((d.getByLabelText('Name') as HTMLInputElement).value).toBe('web defaults');
    expect((d.getByLabelText('Variable 1 value') as HTMLInputElement).value).toBe('UTC');
    const secret = d.getByLabelText('Variable 2 value') as HTMLInputElement;
    expect(secret.type).toBe('password');
    expect(secret.value).toBe('');
    expect(screen.getByRole('dialog').innerHTML).not.toContain(LEAK);
    expect(d.getByText('The stored value is kept unless you type a new one.')).toBeTruthy();
    expect((d.getByLabelText('Mount 2 access') as HTMLSelectElement).value).toBe('ro');
    expect((d.getByLabelText('Restart policy') as HTMLSelectElement).value).toBe('unless-stopped');
    await expectNoSeriousAxeViolations(document.body);
    await fireEvent.input(d.getByLabelText('Description'), { target: { value: 'Changed' } });
    await fireEvent.click(d.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(updated(1)).toHaveLength(1));
    const body = updated(1)[0];
    expect(body.description).toBe('Changed');
    expect(body.envVars).toEqual([
      { key: 'TZ', value: 'UTC', isSecret: false },
      { key: 'DB_PASSWORD', value: tpl.SECRET_MASK, isSecret: true },
    ]);
    expect(body.volumes).toEqual([
      { hostPath: 'data', containerPath: '/data', mode: 'rw' },
      { hostPath: '/srv/conf', containerPath: '/etc/conf', mode: 'ro' },
    ]);
    expect(body.ports).toEqual([{ containerPort: '80', hostPort: '8080', protocol: 'tcp' }]);
    expect(await screen.findByText('Config set web defaults saved.')).toBeTruthy();

    await fireEvent.click(screen.getByRole('button', { name: 'Edit web defaults' }));
    d = within(screen.getByRole('dialog', { name: 'Edit web defaults' }));
    await fireEvent.input(d.getByLabelText('Variable 2 value'), { target: { value: 'new-pass' } });
    await fireEvent.click(d.getByRole('button', { name: 'Remove variable 1' }));
    await fireEvent.click(d.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(updated(1)).toHaveLength(2));
    expect(updated(1)[1].envVars).toEqual([{ key: 'DB_PASSWORD', value: 'new-pass', isSecret: true }]);
  });

  it("keeps the dialog open with the API's error message", async () => {
    refuseOnce('POST /api/config-sets', new ApiError(400, 'Invalid container port "http"'));
    render(ConfigSetsScreen);
    await screen.findByRole('table', { name: 'Config sets' });
    await fireEvent.click(screen.getByRole('button', { name: 'New config set' }));
    const d = within(screen.getByRole('dialog', { name: 'New config set' }));
    await fireEvent.input(d.getByLabelText('Name'), { target: { value: 'bad' } });
    await fireEvent.click(d.getByRole('button', { name: 'Add port' }));
    await fireEvent.input(d.getByLabelText('Port 1 container port'), { target: { value: 'http' } });
    await fireEvent.click(d.getByRole('button', { name: 'Create' }));
    const alert = await d.findByRole('alert');
    expect(alert.textContent).toContain('Invalid container port "http"');
    expect(screen.getByRole('dialog', { name: 'New config set' })).toBeTruthy();
    expect((d.getByLabelText('Port 1 container port') as HTMLInputElement).value).toBe('http');
    // a second try that succeeds closes it
    await fireEvent.input(d.getByLabelText('Port 1 container port'), { target: { value: '80' } });
    await fireEvent.click(d.getByRole('button', { name: 'Create' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    await waitFor(() => expect(created()).toHaveLength(2));
    expect(created()[1].ports).toEqual([{ containerPort: '80', protocol: 'tcp' }]);
  });

  it('deletes a set only after confirming', async () => {
    render(ConfigSetsScreen);
    await screen.findByRole('table', { name: 'Config sets' });
    await fireEvent.click(screen.getByRole('button', { name: 'Delete bare' }));
    await fireEvent.click(within(screen.getByRole('dialog', { name: 'Delete bare?' })).getByRole('button', { name: 'Cancel' }));
    expect(api.called('DELETE /api/config-sets/2')).toHaveLength(0);
    await fireEvent.click(screen.getByRole('button', { name: 'Delete bare' }));
    await fireEvent.click(within(screen.getByRole('dialog', { name: 'Delete bare?' })).getByRole('button', { name: 'Delete' }));
    await waitFor(() => expect(api.called('DELETE /api/config-sets/2')).toHaveLength(1));
    expect(await screen.findByText('Config set bare deleted.')).toBeTruthy();
  });

  it('shows a refused delete', async () => {
    refuseOnce('DELETE /api/config-sets/2', new ApiError(404, 'Config set 2 not found'));
    render(ConfigSetsScreen);
    await screen.findByRole('table', { name: 'Config sets' });
    await fireEvent.click(screen.getByRole('button', { name: 'Delete bare' }));
    await fireEvent.click(within(screen.getByRole('dialog')).getByRole('button', { name: 'Delete' }));
    expect((await screen.findByRole('alert')).textContent).toBe('bare could not be deleted: Config set 2 not found');
  });

  it('is read-only without settings:edit', async () => {
    session.session = {
      authenticated: true,
      authEnabled: true,
      user: { id: 2, username: 'op', isAdmin: false, permissions: { containers: ['create', 'view'], settings: ['view'] } },
    };
    render(ConfigSetsScreen);
    await screen.findByRole('table', { name: 'Config sets' });
    expect(screen.queryByRole('button', { name: 'New config set' })).toBeNull();
    expect(screen.queryByRole('button', { name: /^(Edit|Delete) / })).toBeNull();
  });

  it('lets a non-admin with settings:edit change sets', async () => {
    session.session = { authenticated: true, authEnabled: true, user: { id: 3, username: 'ops', isAdmin: false, permissions: { settings: ['edit', 'view'] } } };
    render(ConfigSetsScreen);
    await screen.findByRole('table', { name: 'Config sets' });
    expect(screen.getByRole('button', { name: 'New config set' })).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Edit bare' })).toBeTruthy();
  });

  it('says why the list is missing', async () => {
    refuseOnce('GET /api/config-sets', new ApiError(403, 'Permission denied'));
    render(ConfigSetsScreen);
    expect((await screen.findByRole('alert')).textContent).toBe('Config sets could not be listed: Permission denied');
  });

  it('says when there is no set yet', async () => {
    api.routes['GET /api/config-sets'] = [];
    render(ConfigSetsScreen);
    expect(await screen.findByText('No config set yet. Create one with New config set.')).toBeTruthy();
  });
});
