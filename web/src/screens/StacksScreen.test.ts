import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../lib/api';
import * as stacks from '../lib/api-stacks';
import { queryClient } from '../lib/query';
import { session } from '../lib/session.svelte';
import { stubApi, type StubApi } from '../test-api';
import { expectNoSeriousAxeViolations } from '../test-axe';
import StacksScreen from './StacksScreen.svelte';
import { stackState } from '../components/stacks/stack-state';

// Reads and plain calls go to the stubbed server; the deploy answers with a
// job's event stream and stays a function of api-stacks.
vi.mock('../lib/api-stacks', async (importOriginal) => {
  const real = await importOriginal<typeof import('../lib/api-stacks')>();
  return { ...real, deployStack: vi.fn() };
});

const c = (id: string, service: string, state: string): stacks.StackContainer => ({
  id,
  name: `${id}-1`,
  service,
  state,
  status: state === 'running' ? 'Up 2 minutes' : 'Exited (0)',
  image: 'busybox',
});

const list: stacks.StackEntry[] = [
  { name: 'web', status: 'running', sourceType: 'internal', containers: ['a', 'b'], containerDetails: [c('a', 'app', 'running'), c('b', 'db', 'running')] },
  { name: 'half', status: 'partial', sourceType: 'git', containers: ['c', 'd'], containerDetails: [c('c', 'app', 'running'), c('d', 'app', 'exited')] },
  { name: 'legacy', status: 'stopped', sourceType: 'external', adopted: false, containers: ['e'], containerDetails: [c('e', 'x', 'exited')] },
  { name: 'fresh', status: 'created', sourceType: 'internal', containers: [], containerDetails: [] },
];

let api: StubApi;
const ok = { success: true, output: 'Container web-app-1 Stopped' };

beforeEach(() => {
  session.environments = [{ id: 1, name: 'local', connectionType: 'socket' }];
  session.envId = 1;
  session.session = { authenticated: false, authEnabled: false };
  api = stubApi({
    'GET /api/stacks': list,
    'GET /api/git/stacks': [
      { id: 7, stackName: 'half', environmentId: 1 },
      { id: 8, stackName: 'web', environmentId: 2 },
    ],
    'GET /api/containers/check-updates': { environmentId: 1, pendingUpdates: [] },
    'POST /api/stacks/web/stop': ok,
    'POST /api/stacks/web/down': ok,
    'POST /api/stacks/legacy/start': ok,
    'DELETE /api/stacks/web': { success: true },
    'DELETE /api/stacks/half': { success: true },
    'POST /api/stacks/adopt': { success: true, name: 'legacy', sourceType: 'external', composePath: '/srv/legacy/compose.yaml' },
  });
});
afterEach(() => {
  cleanup();
  vi.clearAllMocks();
  vi.unstubAllGlobals();
});

const row = (name: string) => screen.getAllByRole('row').find((r) => within(r).queryAllByRole('cell')[0]?.textContent?.includes(name)) as HTMLElement;

describe('StacksScreen', () => {
  it('lists stacks with status, source, services and containers', async () => {
    render(StacksScreen);
    expect(screen.getByRole('heading', { level: 1, name: 'Stacks' })).toBeTruthy();
    await screen.findByRole('table');
    expect(api.called('GET /api/stacks')[0].query).toEqual({ env: '1' });
    const web = within(row('web')).getAllByRole('cell').map((td) => td.textContent?.trim());
    expect(web.slice(0, 5)).toEqual(['web', 'running', 'internal', '2', '2 / 2 running']);
    const half = within(row('half')).getAllByRole('cell').map((td) => td.textContent?.trim());
    expect(half.slice(1, 5)).toEqual(['partial', 'git', '1', '1 / 2 running']);
    expect(within(row('legacy')).getByText('external (not adopted)')).toBeTruthy();
    expect(within(row('fresh')).getAllByRole('cell')[4].textContent).toBe('—');
    // Links: managed stacks to their page, git stacks of this environment to their settings too.
    expect(screen.getByRole('link', { name: 'web' }).getAttribute('href')).toBe('/stacks/web');
    expect(screen.getByRole('link', { name: 'Git settings of half' }).getAttribute('href')).toBe('/git/stacks/7');
    expect(screen.queryByRole('link', { name: 'Git settings of web' })).toBeNull();
    expect(screen.queryByRole('link', { name: 'legacy' })).toBeNull();
    expect(screen.getByRole('link', { name: 'New stack' }).getAttribute('href')).toBe('/stacks/new');
  });

  it('shows an explicit empty state and the list error', async () => {
    api.routes['GET /api/stacks'] = [];
    render(StacksScreen);
    expect(await screen.findByText('No stacks on this environment.')).toBeTruthy();
    cleanup();
    queryClient.clear();
    api.routes['GET /api/stacks'] = () => {
      throw new ApiError(404, 'Environment not found');
    };
    render(StacksScreen);
    expect((await screen.findByRole('alert')).textContent).toContain('Environment not found');
  });

  it('runs a lifecycle action and shows its output; a failure shows the server message', async () => {
    render(StacksScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Stop web' }));
    await waitFor(() => expect(api.called('POST /api/stacks/web/stop')[0]?.query).toEqual({ env: '1' }));
    const out = await screen.findByRole('log', { name: 'Stop web output' });
    await waitFor(() => expect(out.textContent).toContain('Container web-app-1 Stopped'));
    await waitFor(() => expect(screen.getAllByRole('status').some((s) => s.textContent === 'web stopped.')).toBe(true));

    api.routes['POST /api/stacks/legacy/start'] = () => {
      throw new ApiError(500, "start stack 'legacy': engine said no");
    };
    await fireEvent.click(screen.getByRole('button', { name: 'Start legacy' }));
    expect((await screen.findByRole('alert')).textContent).toContain('engine said no');
  });

  it('deploys with streamed output', async () => {
    vi.mocked(stacks.deployStack).mockImplementation(async (_env, _name, onLine) => {
      onLine('Network fresh_default Created');
      onLine('Container fresh-app-1 Started');
      return { success: true, started: true, output: '' };
    });
    render(StacksScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Deploy fresh' }));
    const out = await screen.findByRole('log', { name: 'Deploy fresh output' });
    await waitFor(() => expect(out.textContent).toBe('Network fresh_default Created\nContainer fresh-app-1 Started'));
    expect(screen.getByText('Deploy fresh: done.')).toBeTruthy();
  });

  it('asks before taking a stack down', async () => {
    render(StacksScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Down web' }));
    const dialog = screen.getByRole('dialog', { name: 'Take web down?' });
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Down' }));
    await waitFor(() => expect(api.called('POST /api/stacks/web/down')).toHaveLength(1));
  });

  it('deletes through the confirmation: force takes a running stack down first, remove volumes is force', async () => {
    render(StacksScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Delete web' }));
    let dialog = screen.getByRole('dialog', { name: 'Delete stack web?' });
    const force = within(dialog).getByRole('checkbox', { name: /Force/ }) as HTMLInputElement;
    expect(force.checked).toBe(true); // it runs
    await fireEvent.keyDown(dialog, { key: 'Escape' });
    expect(screen.queryByRole('dialog')).toBeNull();
    expect(api.called('DELETE /api/stacks/web')).toHaveLength(0);

    await fireEvent.click(screen.getByRole('button', { name: 'Delete web' }));
    dialog = screen.getByRole('dialog', { name: 'Delete stack web?' });
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Delete' }));
    await waitFor(() => expect(api.called('DELETE /api/stacks/web')[0]?.query).toEqual({ env: '1', force: 'false' }));
    expect(api.called('POST /api/stacks/web/down')).toHaveLength(1);

    await fireEvent.click(screen.getByRole('button', { name: 'Delete web' }));
    dialog = screen.getByRole('dialog', { name: 'Delete stack web?' });
    await fireEvent.click(within(dialog).getByRole('checkbox', { name: /Remove volumes/ }));
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Delete' }));
    await waitFor(() => expect(api.called('DELETE /api/stacks/web')[1]?.query).toEqual({ env: '1', force: 'true' }));
    expect(api.called('POST /api/stacks/web/down')).toHaveLength(1); // not a second time
  });

  it('shows the server message when a delete is refused', async () => {
    api.routes['DELETE /api/stacks/half'] = () => {
      throw new ApiError(400, "Stack 'half' is running. Stop it first or use force=true to delete it.");
    };
    render(StacksScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Delete half' }));
    const dialog = screen.getByRole('dialog', { name: 'Delete stack half?' });
    await fireEvent.click(within(dialog).getByRole('checkbox', { name: /Force/ })); // off
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Delete' }));
    expect((await screen.findByRole('alert')).textContent).toContain('Stop it first');
  });

  it('finds external stacks and adopts one', async () => {
    api.routes['POST /api/stacks/scan'] = {
      stacks: [
        { name: 'legacy', status: 'stopped', containers: 1, workingDir: '/srv/legacy', configFiles: ['/srv/legacy/compose.yaml'], adoptable: true },
        { name: 'ghost', status: 'running', containers: 2, workingDir: '', configFiles: [], adoptable: false },
      ],
    };
    render(StacksScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Find external stacks' }));
    const panel = await screen.findByRole('region', { name: 'External stacks' });
    expect(within(panel).getByText('/srv/legacy/compose.yaml')).toBeTruthy();
    expect((within(panel).getByRole('button', { name: 'Adopt ghost' }) as HTMLButtonElement).disabled).toBe(true);
    await fireEvent.click(within(panel).getByRole('button', { name: 'Adopt legacy' }));
    await waitFor(() => expect(api.called('POST /api/stacks/adopt')[0]?.body).toEqual({ name: 'legacy' }));
    await waitFor(() => expect(within(panel).queryByText('/srv/legacy/compose.yaml')).toBeNull());
  });

  it('badges a stack with the pending updates of its containers, and says its state is unknown when the environment stops answering', async () => {
    api.routes['GET /api/containers/check-updates'] = {
      environmentId: 1,
      pendingUpdates: [
        { containerId: 'a', containerName: 'web-app-1', currentImage: 'busybox' },
        { containerId: 'b', containerName: 'web-db-1', currentImage: 'busybox' },
        { containerId: 'c', containerName: 'half-app-1', currentImage: 'busybox' },
        { containerId: 'zzz', containerName: 'loose', currentImage: 'busybox' },
      ],
    };
    const { container } = render(StacksScreen);
    await screen.findByRole('table');
    expect(api.called('GET /api/containers/check-updates')[0].query).toEqual({ env: '1' });
    await within(row('web')).findByText('2 updates available');
    expect(within(row('half')).getByText('update available')).toBeTruthy();
    expect(within(row('legacy')).queryByText(/update/)).toBeNull();
    await expectNoSeriousAxeViolations(container);

    // The next read fails (the environment went offline): the list stays, its states are not claimed.
    api.routes['GET /api/stacks'] = () => {
      throw new ApiError(404, 'Environment unreachable');
    };
    await fireEvent.click(screen.getByRole('button', { name: 'Refresh' }));
    expect((await screen.findByRole('alert')).textContent).toContain('The environment did not answer; the states below are unknown');
    await waitFor(() => expect(within(row('web')).getAllByRole('cell')[1].textContent).toMatch(/^unknown/));
    expect(within(row('web')).queryByRole('button', { name: 'Stop web' })).toBeNull();
  }, 20_000);

  it('derives the state from the containers: all running, some, none', () => {
    const st = (states: string[], status = 'running') =>
      stackState({ status, containerDetails: states.map((s, i) => c(String(i), 'x', s)) }, false).state;
    expect(st(['running', 'running'])).toBe('running');
    expect(st(['running', 'exited'])).toBe('partial');
    expect(st(['exited'], 'running')).toBe('stopped');
    expect(st([], 'created')).toBe('created');
    expect(stackState({ status: 'running', containerDetails: [] }, true)).toEqual({ state: 'unknown', tone: 'bad', why: 'the environment is not answering' });
  });

  it('offers a Viewer no New, Find, Start, Stop, Deploy, Down or Delete', async () => {
    session.session = {
      authenticated: true,
      authEnabled: true,
      user: { id: 2, username: 'v', isAdmin: false, environmentPermissions: { '1': { stacks: ['view'], containers: ['view'] } } },
    };
    render(StacksScreen);
    await screen.findByRole('table');
    expect(screen.queryByRole('link', { name: 'New stack' })).toBeNull();
    expect(screen.queryByRole('button', { name: 'Find external stacks' })).toBeNull();
    expect(screen.queryByRole('button', { name: /^(Start|Stop|Restart|Deploy|Down|Delete|Adopt) / })).toBeNull();
    expect(screen.getByRole('link', { name: 'web' })).toBeTruthy();
  });

  it('has no serious or critical axe violations', async () => {
    const { container } = render(StacksScreen);
    await screen.findByRole('table');
    await expectNoSeriousAxeViolations(container);
  }, 20_000);
});
