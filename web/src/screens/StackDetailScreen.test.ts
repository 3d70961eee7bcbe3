import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../lib/api';
import * as stacks from '../lib/api-stacks';
import { router } from '../lib/router.svelte';
import { invalidateEnv } from '../lib/query';
import { matchRoute } from '../lib/routes';
import { session } from '../lib/session.svelte';
import { stubApi, type StubApi } from '../test-api';
import { expectNoSeriousAxeViolations } from '../test-axe';
import StackDetailScreen from './StackDetailScreen.svelte';

// Reads and plain writes go to the stubbed server (stubApi); the deploys
// that answer with a job's event stream stay functions of api-stacks.
vi.mock('../lib/api-stacks', async (importOriginal) => {
  const real = await importOriginal<typeof import('../lib/api-stacks')>();
  return { ...real, saveComposeAndRedeploy: vi.fn(), deployStack: vi.fn() };
});
// CodeMirror needs layout jsdom lacks: a text area stands in (editor-test-double).
vi.mock('../components/stacks/codemirror', () => import('../components/stacks/editor-test-double'));

const compose = 'services:\n  app:\n    image: berth-test/busybox:1\n';
const entry: stacks.StackEntry = {
  name: 'shop',
  status: 'running',
  sourceType: 'internal',
  containers: ['abc123'],
  containerDetails: [
    {
      id: 'abc123',
      name: 'shop-app-1',
      service: 'app',
      state: 'running',
      status: 'Up 5 minutes',
      health: 'none',
      image: 'berth-test/busybox:1',
      ports: [{ publicPort: 8080, privatePort: 80, type: 'tcp', display: '8080:80/tcp' }],
    },
  ],
};
const file = (over: Partial<stacks.ComposeFile> = {}): stacks.ComposeFile => ({
  content: compose,
  stackDir: '/data/stacks/1/shop',
  composePath: '/data/stacks/1/shop/compose.yaml',
  envPath: '/data/stacks/1/shop/.env',
  sourceType: 'internal',
  ...over,
});

const route = (name: string) => matchRoute(`/stacks/${encodeURIComponent(name)}`);
let api: StubApi;

beforeEach(() => {
  session.environments = [{ id: 1, name: 'local', connectionType: 'socket' }];
  session.envId = 1;
  session.session = { authenticated: false, authEnabled: false };
  api = stubApi({
    'GET /api/stacks': [entry],
    'GET /api/git/stacks': [],
    'GET /api/stacks/shop/compose': file(),
    'GET /api/stacks/shop/env': {
      variables: [
        { key: 'MODE', value: 'prod', isSecret: false },
        { key: 'TOKEN', value: '***', isSecret: true },
      ],
    },
    'GET /api/stacks/shop/env/raw': { content: '# the mode\nMODE=prod\n' },
    'PUT /api/stacks/shop/compose': { success: true },
    'PUT /api/stacks/shop/env': { success: true, count: 1 },
    'PUT /api/stacks/shop/env/raw': { success: true },
    'POST /api/stacks/shop/restart': { success: true, output: 'Container shop-app-1 Restarted' },
    'DELETE /api/stacks/shop': { success: true },
  });
  vi.mocked(stacks.saveComposeAndRedeploy).mockImplementation(async (_e, _n, _c, onLine) => {
    onLine('Container shop-app-1 Recreate');
    onLine('Container shop-app-1 Started');
    return { success: true, output: '' };
  });
});
afterEach(() => {
  cleanup();
  vi.clearAllMocks();
  vi.unstubAllGlobals();
});

async function ready() {
  await screen.findByRole('table');
  await screen.findByLabelText('Value of MODE');
  return (await screen.findByRole('textbox', { name: 'Compose file' })) as HTMLTextAreaElement;
}

const putOrder = () => api.calls.filter((c) => c.method === 'PUT').map((c) => c.path);

describe('StackDetailScreen', () => {
  it('shows status, containers linking to their page, the compose file and the variables with secrets masked', async () => {
    const { container } = render(StackDetailScreen, { route: route('shop') });
    expect(screen.getByRole('heading', { level: 1, name: 'shop' })).toBeTruthy();
    const editor = await ready();
    expect(api.called('GET /api/stacks/shop/compose')[0].query).toEqual({ env: '1' });
    expect(screen.getByRole('link', { name: 'shop-app-1' }).getAttribute('href')).toBe('/containers/abc123');
    expect(screen.getByText('8080:80/tcp')).toBeTruthy();
    expect(screen.getByText('1 of 1 running')).toBeTruthy();
    expect(editor.value).toBe(compose);
    expect(screen.getByText('/data/stacks/1/shop/compose.yaml')).toBeTruthy();
    const token = screen.getByLabelText('Value of TOKEN') as HTMLInputElement;
    expect(token.type).toBe('password');
    expect(token.value).toBe('***');
    expect((screen.getByLabelText('Value of MODE') as HTMLInputElement).value).toBe('prod');
    expect((screen.getByRole('button', { name: 'Save' }) as HTMLButtonElement).disabled).toBe(true); // nothing changed yet
    await expectNoSeriousAxeViolations(container);
  }, 20_000);

  it('one Save writes both the compose file and a changed variable', async () => {
    render(StackDetailScreen, { route: route('shop') });
    const editor = await ready();
    const next = compose + '    command: sleep 600\n';
    await fireEvent.input(editor, { target: { value: next } });
    expect(screen.getByText(/Unsaved changes: compose file$/)).toBeTruthy();
    await fireEvent.input(screen.getByLabelText('Value of MODE'), { target: { value: 'staging' } });
    expect(screen.getByText(/Unsaved changes: compose file and variables/)).toBeTruthy();
    await fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(screen.getByText(/^Saved\. Deploy or restart/)).toBeTruthy());
    expect(api.called('PUT /api/stacks/shop/compose')[0].body).toEqual({ content: next, restart: false });
    expect(api.called('PUT /api/stacks/shop/env/raw')[0].body).toEqual({ content: '# the mode\nMODE=staging\n' });
    expect(api.called('PUT /api/stacks/shop/env')[0].body).toEqual({ variables: [{ key: 'TOKEN', value: '***', isSecret: true }] });
    // The compose file first (refused: nothing saved), then secrets, then the .env text.
    expect(putOrder()).toEqual(['/api/stacks/shop/compose', '/api/stacks/shop/env', '/api/stacks/shop/env/raw']);
    expect(screen.queryByText(/Unsaved changes/)).toBeNull();
  });

  it('Save and redeploy saves a variable change too (it was dropped before), then recreates with streamed output', async () => {
    render(StackDetailScreen, { route: route('shop') });
    const editor = await ready();
    const next = compose + '    command: sleep 600\n';
    await fireEvent.input(editor, { target: { value: next } });
    await fireEvent.input(screen.getByLabelText('Value of MODE'), { target: { value: 'staging' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Save and redeploy' }));
    await waitFor(() => expect(stacks.saveComposeAndRedeploy).toHaveBeenCalledWith(1, 'shop', next, expect.any(Function)));
    expect(api.called('PUT /api/stacks/shop/env/raw')[0].body).toEqual({ content: '# the mode\nMODE=staging\n' });
    const out = await screen.findByRole('log', { name: 'Redeploy shop output' });
    expect(out.textContent).toBe('Container shop-app-1 Recreate\nContainer shop-app-1 Started');
    expect(await screen.findByText('Saved and redeployed.')).toBeTruthy();
  });

  it('a variable alone is saved by Save and redeploy before the redeploy', async () => {
    render(StackDetailScreen, { route: route('shop') });
    await ready();
    await fireEvent.input(screen.getByLabelText('Value of MODE'), { target: { value: 'staging' } });
    expect(screen.getByText(/Unsaved changes: variables/)).toBeTruthy();
    await fireEvent.click(screen.getByRole('button', { name: 'Save and redeploy' }));
    await waitFor(() => expect(stacks.saveComposeAndRedeploy).toHaveBeenCalled());
    expect(api.called('PUT /api/stacks/shop/compose')).toHaveLength(0); // compose unchanged: only the redeploy rewrites it
    expect(api.called('PUT /api/stacks/shop/env/raw')).toHaveLength(1);
    expect(api.calls.findIndex((c) => c.path === '/api/stacks/shop/env/raw')).toBeGreaterThan(-1);
  });

  it('refuses to save a compose file with errors, and shows the server refusal with nothing else saved', async () => {
    render(StackDetailScreen, { route: route('shop') });
    const editor = await ready();
    await fireEvent.input(editor, { target: { value: 'volumes: {}\n' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    expect((await screen.findByRole('alert')).textContent).toMatch(/Fix the compose file first/);
    expect(putOrder()).toEqual([]);

    api.routes['PUT /api/stacks/shop/compose'] = () => {
      throw new ApiError(400, 'service "app" has neither an image nor a build context');
    };
    await fireEvent.input(editor, { target: { value: 'services:\n  app: {}\n' } });
    await fireEvent.input(screen.getByLabelText('Value of MODE'), { target: { value: 'staging' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    expect((await screen.findByRole('alert')).textContent).toContain('neither an image nor a build context');
    expect(putOrder()).toEqual(['/api/stacks/shop/compose']); // the variables were not saved either
    expect(screen.getByText(/Unsaved changes: compose file and variables/)).toBeTruthy();
  });

  it('saves variables: secrets (a kept one as ***) with PUT /env, the rest as the .env text with its comments', async () => {
    render(StackDetailScreen, { route: route('shop') });
    await ready();
    await fireEvent.input(screen.getByLabelText('Value of MODE'), { target: { value: 'staging' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Add variable' }));
    await fireEvent.input(screen.getByLabelText('Name of variable 3'), { target: { value: 'DB_PASSWORD' } });
    await fireEvent.input(screen.getByLabelText('Value of DB_PASSWORD'), { target: { value: 'pw' } });
    await fireEvent.click(screen.getByRole('checkbox', { name: 'Secret (DB_PASSWORD)' }));
    await fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(api.called('PUT /api/stacks/shop/env/raw')[0]?.body).toEqual({ content: '# the mode\nMODE=staging\n' }));
    expect(api.called('PUT /api/stacks/shop/env')[0].body).toEqual({
      variables: [
        { key: 'TOKEN', value: '***', isSecret: true },
        { key: 'DB_PASSWORD', value: 'pw', isSecret: true },
      ],
    });
    expect(putOrder()).toEqual(['/api/stacks/shop/env', '/api/stacks/shop/env/raw']);
  });

  it('keeps a variable row added, still blank, when a read of the variables lands (it was replaced before)', async () => {
    render(StackDetailScreen, { route: route('shop') });
    await ready();
    await fireEvent.click(screen.getByRole('button', { name: 'Add variable' }));
    // Another read lands (a refetch on focus, or after another change), with the server's variables changed meanwhile.
    api.routes['GET /api/stacks/shop/env'] = {
      variables: [
        { key: 'MODE', value: 'prod', isSecret: false },
        { key: 'REGION', value: 'eu', isSecret: false },
        { key: 'TOKEN', value: '***', isSecret: true },
      ],
    };
    api.routes['GET /api/stacks/shop/env/raw'] = { content: '# the mode\nMODE=prod\nREGION=eu\n' };
    const reads = api.called('GET /api/stacks/shop/env/raw').length;
    await invalidateEnv(1, 'stacks', 'shop', 'env');
    await waitFor(() => expect(api.called('GET /api/stacks/shop/env/raw').length).toBe(reads + 1));
    await fireEvent.input(screen.getByLabelText('Name of variable 3'), { target: { value: 'GREETING' } });
    await fireEvent.input(screen.getByLabelText('Value of GREETING'), { target: { value: 'hello' } });
    expect(screen.getByText(/Unsaved changes: variables/)).toBeTruthy();
    expect(await screen.findByText(/The variables were changed elsewhere while you edited them/)).toBeTruthy();
    await fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(api.called('PUT /api/stacks/shop/env/raw')[0]?.body).toEqual({ content: '# the mode\nMODE=prod\nGREETING=hello\n' }));
    await waitFor(() => expect(screen.queryByText(/changed elsewhere/)).toBeNull());
  });

  it('an untouched variables draft follows a new read of the server', async () => {
    render(StackDetailScreen, { route: route('shop') });
    await ready();
    api.routes['GET /api/stacks/shop/env'] = { variables: [{ key: 'MODE', value: 'staging', isSecret: false }] };
    api.routes['GET /api/stacks/shop/env/raw'] = { content: 'MODE=staging\n' };
    await invalidateEnv(1, 'stacks', 'shop', 'env');
    await waitFor(() => expect((screen.getByLabelText('Value of MODE') as HTMLInputElement).value).toBe('staging'));
    expect(screen.queryByLabelText('Value of TOKEN')).toBeNull();
    expect(screen.queryByText(/Unsaved changes/)).toBeNull();
  });

  it('keeps the secret rule: a stored secret cannot become plain without its value', async () => {
    render(StackDetailScreen, { route: route('shop') });
    await ready();
    await fireEvent.click(screen.getByRole('checkbox', { name: 'Secret (TOKEN)' }));
    await fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    expect((await screen.findByRole('alert')).textContent).toMatch(/Enter the value of TOKEN/);
    expect(putOrder()).toEqual([]);
  });

  it('edits the raw .env text', async () => {
    render(StackDetailScreen, { route: route('shop') });
    await ready();
    await fireEvent.click(screen.getByRole('tab', { name: 'Raw .env' }));
    const box = screen.getByLabelText('.env file') as HTMLTextAreaElement;
    expect(box.value).toBe('# the mode\nMODE=prod\n');
    expect(screen.queryByText(/Unsaved changes/)).toBeNull(); // switching views changes nothing
    await fireEvent.input(box, { target: { value: '# the mode\nMODE=prod\nNEW=1\n' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(api.called('PUT /api/stacks/shop/env/raw')[0]?.body).toEqual({ content: '# the mode\nMODE=prod\nNEW=1\n' }));
    expect(api.called('PUT /api/stacks/shop/env')[0].body).toEqual({ variables: [{ key: 'TOKEN', value: '***', isSecret: true }] });
  });

  it('asks before leaving with unsaved changes: Cancel stays, Leave goes', async () => {
    const nav = vi.spyOn(router, 'navigate').mockImplementation(() => {});
    render(StackDetailScreen, { route: route('shop') });
    await ready();
    // Without changes a link is followed (the router's own click handling is not running here).
    const all = screen.getByRole('link', { name: 'All stacks' });
    expect(await fireEvent.click(all)).toBe(true);
    expect(screen.queryByRole('dialog')).toBeNull();

    await fireEvent.input(screen.getByLabelText('Value of MODE'), { target: { value: 'staging' } });
    expect(await fireEvent.click(all)).toBe(false); // the navigation was stopped
    const dialog = screen.getByRole('dialog', { name: 'Leave without saving?' });
    expect(dialog.textContent).toContain('the variables of');
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Cancel' }));
    expect(screen.queryByRole('dialog')).toBeNull();
    expect(nav).not.toHaveBeenCalled();
    expect((screen.getByLabelText('Value of MODE') as HTMLInputElement).value).toBe('staging');

    // A page unload is asked about by the browser while there are changes.
    const ev = new Event('beforeunload', { cancelable: true });
    window.dispatchEvent(ev);
    expect(ev.defaultPrevented).toBe(true);

    await fireEvent.click(all);
    await fireEvent.click(within(screen.getByRole('dialog')).getByRole('button', { name: 'Leave' }));
    expect(nav).toHaveBeenCalledWith('/stacks');
    nav.mockRestore();
  });

  it('asks before switching environment with unsaved changes: Cancel keeps this one, Leave switches', async () => {
    session.environments = [
      { id: 1, name: 'local', connectionType: 'socket' },
      { id: 2, name: 'remote', connectionType: 'socket' },
    ];
    render(StackDetailScreen, { route: route('shop') });
    await ready();
    await fireEvent.input(screen.getByLabelText('Value of MODE'), { target: { value: 'staging' } });

    expect(session.selectEnvironment(2)).toBe(false);
    expect(session.envId).toBe(1);
    const dialog = await screen.findByRole('dialog', { name: 'Leave without saving?' });
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Cancel' }));
    expect(session.envId).toBe(1);
    expect((screen.getByLabelText('Value of MODE') as HTMLInputElement).value).toBe('staging');

    expect(session.selectEnvironment(2)).toBe(false);
    await fireEvent.click(within(await screen.findByRole('dialog')).getByRole('button', { name: 'Leave' }));
    expect(session.envId).toBe(2);
    await waitFor(() => expect(session.envGuard).toBeNull());
    // Nothing held back any more: switching back is immediate.
    expect(session.selectEnvironment(1)).toBe(true);
  });

  it('shows the service graph of the compose being edited, with a list of the same', async () => {
    api.routes['GET /api/stacks/shop/compose'] = file({
      content: 'services:\n  web:\n    image: nginx\n    depends_on: [db]\n    networks: [front]\n  db:\n    image: postgres\n    volumes:\n      - pgdata:/var/lib/postgresql/data\nnetworks:\n  front: {}\nvolumes:\n  pgdata: {}\n',
    });
    const { container } = render(StackDetailScreen, { route: route('shop') });
    await ready();
    await fireEvent.click(screen.getByRole('tab', { name: 'Graph' }));
    const graph = screen.getByRole('group', { name: 'Service graph' });
    expect(within(graph).getByRole('img', { name: /^Service web; image nginx; depends on db; networks front/ })).toBeTruthy();
    expect(within(graph).getByRole('img', { name: /^Service db;.*volumes pgdata/ })).toBeTruthy();
    expect(within(graph).getByRole('img', { name: 'Network front; used by web' })).toBeTruthy();
    expect(within(graph).getByRole('img', { name: 'Volume pgdata; used by db' })).toBeTruthy();
    expect(container.querySelector('[data-edge="web->db"]')).not.toBeNull();
    expect(screen.getByRole('list', { name: 'As a list' }).textContent).toBe('web (nginx); depends on db; networks frontdb (postgres); networks default; volumes pgdata');
    await expectNoSeriousAxeViolations(container);
  }, 20_000);

  it('runs lifecycle actions with output and deletes through the confirmation', async () => {
    const nav = vi.spyOn(router, 'navigate').mockImplementation(() => {});
    render(StackDetailScreen, { route: route('shop') });
    await ready();
    await fireEvent.click(screen.getByRole('button', { name: 'Restart' }));
    await waitFor(() => expect(api.called('POST /api/stacks/shop/restart')[0]?.query).toEqual({ env: '1' }));
    await waitFor(() => expect(screen.getByRole('log', { name: 'Restart shop output' }).textContent).toContain('Restarted'));

    await fireEvent.click(screen.getByRole('button', { name: 'Delete' }));
    const dialog = screen.getByRole('dialog', { name: 'Delete stack shop?' });
    await fireEvent.click(within(dialog).getByRole('checkbox', { name: /Remove volumes/ }));
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Delete' }));
    await waitFor(() => expect(api.called('DELETE /api/stacks/shop')[0]?.query).toEqual({ env: '1', force: 'true' }));
    await waitFor(() => expect(nav).toHaveBeenCalledWith('/stacks'));
    nav.mockRestore();
  });

  it('shows a failed deploy with the server message', async () => {
    vi.mocked(stacks.deployStack).mockImplementation(async (_e, _n, onLine) => {
      onLine('Container shop-app-1 Creating');
      return { success: false, error: 'pull access denied for nope', output: '' };
    });
    render(StackDetailScreen, { route: route('shop') });
    await ready();
    await fireEvent.click(screen.getByRole('button', { name: 'Deploy' }));
    expect((await screen.findByRole('alert')).textContent).toBe('pull access denied for nope');
    expect(screen.getByText('Deploy shop: failed.')).toBeTruthy();
  });

  it('shows a git stack read-only with a link to its settings', async () => {
    api.routes['GET /api/stacks'] = [{ ...entry, sourceType: 'git' }];
    api.routes['GET /api/stacks/shop/compose'] = file({ stackDir: '/c', composePath: '/c/compose.yaml', envPath: '/c/.env', sourceType: 'git' });
    api.routes['GET /api/git/stacks'] = [{ id: 4, stackName: 'shop', environmentId: 1 }];
    render(StackDetailScreen, { route: route('shop') });
    const editor = await ready();
    expect(editor.readOnly).toBe(true);
    expect(screen.getByText(/change its compose file in the repository/)).toBeTruthy();
    expect((await screen.findByRole('link', { name: 'Git settings' })).getAttribute('href')).toBe('/git/stacks/4');
  });

  it('shows a Viewer the compose file and variables read-only, with no Save, Deploy, Stop or Delete', async () => {
    session.session = {
      authenticated: true,
      authEnabled: true,
      user: { id: 2, username: 'v', isAdmin: false, environmentPermissions: { '1': { stacks: ['view'] } } },
    };
    const { container } = render(StackDetailScreen, { route: route('shop') });
    const editor = await ready();
    expect(editor.readOnly).toBe(true);
    expect(screen.getByText('You may read this compose file, not change it.')).toBeTruthy();
    expect((screen.getByLabelText('Value of MODE') as HTMLInputElement).disabled).toBe(true);
    for (const b of ['Save', 'Save and redeploy', 'Deploy', 'Stop', 'Restart', 'Down', 'Delete', 'Relocate']) {
      expect(screen.queryByRole('button', { name: b })).toBeNull();
    }
    await expectNoSeriousAxeViolations(container);
  }, 20_000);

  it('says when the stack does not exist', async () => {
    api.routes['GET /api/stacks'] = [];
    render(StackDetailScreen, { route: route('nope') });
    expect(await screen.findByText(/There is no stack nope/)).toBeTruthy();
  });
});
