import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import * as api from '../lib/api';
import * as containers from '../lib/api-containers';
import { router } from '../lib/router.svelte';
import type { Route } from '../lib/routes';
import { session } from '../lib/session.svelte';
import { queryClient } from '../lib/query';
import { stubApi, type StubApi } from '../test-api';
import { expectNoSeriousAxeViolations } from '../test-axe';
import ContainerDetailScreen from './ContainerDetailScreen.svelte';

vi.mock('../lib/api-containers', async (importOriginal) => {
  const real = await importOriginal<typeof import('../lib/api-containers')>();
  return {
    ...real,
    followLogs: vi.fn(),
  };
});

// xterm.js needs a real browser; the terminal tab is tested with a stand-in.
const terms: FakeTerminal[] = [];
class FakeTerminal {
  rows = 24;
  cols = 80;
  options: Record<string, unknown>;
  written: string[] = [];
  dataHandler: ((d: string) => void) | null = null;
  constructor(opts: Record<string, unknown>) {
    this.options = opts;
    terms.push(this);
  }
  loadAddon() {}
  open() {}
  attachCustomKeyEventHandler() {}
  onData(fn: (d: string) => void) {
    this.dataHandler = fn;
  }
  onResize() {}
  write(d: string) {
    this.written.push(d);
  }
  focus() {}
  reset() {}
  dispose() {}
}
vi.mock('@xterm/xterm', () => ({ Terminal: FakeTerminal }));
vi.mock('@xterm/addon-fit', () => ({ FitAddon: class { fit() {} } }));

class FakeSocket {
  static all: FakeSocket[] = [];
  url: string;
  readyState = 0;
  binaryType = 'blob';
  sent: string[] = [];
  onopen: (() => void) | null = null;
  onmessage: ((e: { data: unknown }) => void) | null = null;
  onclose: ((e: { reason: string }) => void) | null = null;
  constructor(url: string) {
    this.url = url;
    FakeSocket.all.push(this);
  }
  send(d: string) {
    this.sent.push(d);
  }
  close() {
    this.readyState = 3;
  }
}

const ID = 'abc123abc123abc123';
const inspect = (status = 'running'): containers.ContainerDetails => ({
  Id: ID,
  Name: '/web',
  Created: '2024-05-01T10:00:00Z',
  Path: 'sleep',
  Args: ['600'],
  Image: 'sha256:1',
  State: { Status: status, Running: status === 'running' || status === 'paused', Paused: status === 'paused', ExitCode: 0 },
  Config: { Image: 'berth-test/busybox:1', Labels: { 'berth.test': 'xyz' }, Env: ['PATH=/bin'] },
  HostConfig: { RestartPolicy: { Name: 'no' } },
  NetworkSettings: { Networks: { bridge: { IPAddress: '172.17.0.2' } } },
});

function selectTabByName(name: string) {
  fireEvent.click(screen.getByRole('tab', { name }));
}

const route = (id = 'web'): Route => ({ name: 'container', params: { id }, path: `/containers/${id}` });

function go(path: string) {
  history.replaceState(null, '', path);
  router.navigate(path, { replace: true });
}

const busyboxShells = {
  shells: ['/bin/sh'],
  defaultShell: '/bin/sh',
  allShells: [
    { path: '/bin/bash', label: 'Bash', available: false },
    { path: '/bin/sh', label: 'sh', available: true },
    { path: '/bin/ash', label: 'Ash', available: false },
  ],
};
let server: StubApi;
let t = 0;

beforeEach(() => {
  t = 0;
  queryClient.clear();
  session.envHealth = null;
  session.session = { authenticated: false, authEnabled: false };
  // The inspection answers by name (the page opened as /containers/web) and by id.
  server = stubApi({
    [`GET /api/containers/${ID}/shells`]: busyboxShells,
    'GET /api/containers/web': inspect(),
    [`GET /api/containers/${ID}`]: inspect(),
    ...Object.fromEntries(['start', 'stop', 'restart', 'pause', 'unpause', 'rename'].map((a) => [`POST /api/containers/${ID}/${a}`, { success: true }])),
    [`DELETE /api/containers/${ID}`]: { success: true },
    [`GET /api/containers/${ID}/top`]: { Titles: ['PID', 'USER', 'CMD'], Processes: [['1', 'root', 'sleep 600']] },
    [`POST /api/containers/${ID}/exec`]: { execId: 'ex9', connectionInfo: { type: 'websocket' } },
    'POST /api/containers/exec/ex9/resize': { success: true },
    [`GET /api/containers/${ID}/stats`]: () => {
      t += 2000;
      return {
        cpuPercent: 12.5,
        memoryUsage: 32 * 1024 * 1024,
        memoryRaw: 0,
        memoryCache: 0,
        memoryLimit: 1024 ** 3,
        memoryPercent: 3.13,
        networkRx: t,
        networkTx: t / 2,
        blockRead: 0,
        blockWrite: 0,
        timestamp: t,
      };
    },
  });
  session.environments = [{ id: 1, name: 'local', connectionType: 'socket' }];
  session.envId = 1;
  session.session = { authenticated: false, authEnabled: false };
  go('/containers/web');
  terms.length = 0;
  FakeSocket.all = [];
  vi.stubGlobal('WebSocket', FakeSocket);
  vi.mocked(containers.followLogs).mockImplementation(() => new Promise(() => {}));
});
afterEach(() => {
  cleanup();
  vi.clearAllMocks();
  vi.unstubAllGlobals();
});

describe('ContainerDetailScreen', () => {
  it('shows the container with the actions of its state', async () => {
    render(ContainerDetailScreen, { route: route() });
    expect(screen.getByRole('heading', { level: 1, name: 'web' })).toBeTruthy();
    expect(screen.getByText('Loading…')).toBeTruthy();
    const actions = await screen.findByRole('group', { name: 'Container actions' });
    expect(server.called('GET /api/containers/web')[0].query).toEqual({ env: '1' });
    expect(within(actions).getAllByRole('button').map((b) => b.textContent?.trim())).toEqual([
      'Stop',
      'Restart',
      'Pause',
      'Kill',
      'Recreate',
      'Rename',
      'Remove',
    ]);
    expect(within(actions).getByRole('link', { name: 'Edit' }).getAttribute('href')).toBe(`/containers/new?edit=${ID}`);
    expect(within(actions).getByRole('link', { name: 'Duplicate' }).getAttribute('href')).toBe(`/containers/new?duplicate=${ID}`);
    expect(screen.getByText('berth-test/busybox:1')).toBeTruthy();
    expect(screen.getByText('berth.test')).toBeTruthy();
    expect(screen.getByRole('tab', { name: 'Overview', selected: true })).toBeTruthy();
  });

  it('runs a lifecycle action and reloads the state', async () => {
    render(ContainerDetailScreen, { route: route() });
    await screen.findByRole('group', { name: 'Container actions' });
    server.routes['GET /api/containers/web'] = inspect('paused');
    await fireEvent.click(screen.getByRole('button', { name: 'Pause' }));
    await waitFor(() => expect(server.called(`POST /api/containers/${ID}/pause`)).toHaveLength(1));
    expect(server.called(`POST /api/containers/${ID}/pause`)[0].query).toEqual({ env: '1' });
    expect(await screen.findByRole('button', { name: 'Unpause' })).toBeTruthy();
    expect(screen.getByRole('status').textContent).toBe('web paused.');
  });

  it('shows the server message of a failed action', async () => {
    server.routes[`POST /api/containers/${ID}/stop`] = () => {
      throw new api.ApiError(500, 'Failed to stop container');
    };
    render(ContainerDetailScreen, { route: route() });
    await fireEvent.click(await screen.findByRole('button', { name: 'Stop' }));
    expect((await screen.findByRole('alert')).textContent).toBe('Stop web: Failed to stop container');
  });

  it('moves between tabs with the arrow keys and shows the inspection JSON', async () => {
    render(ContainerDetailScreen, { route: route() });
    const overview = await screen.findByRole('tab', { name: 'Overview' });
    await fireEvent.keyDown(overview, { key: 'ArrowRight' });
    await waitFor(() => expect(screen.getByRole('tab', { name: 'Inspect' }).getAttribute('aria-selected')).toBe('true'));
    expect(location.search).toBe('?tab=inspect');
    const panel = screen.getByRole('tabpanel', { name: 'Inspect' });
    expect(within(panel).getByLabelText('Inspection of web').textContent).toContain(`"Id": "${ID}"`);
    expect(within(panel).getByRole('button', { name: 'Copy JSON' })).toBeTruthy();
    // End goes to the last tab, Files.
    await fireEvent.keyDown(screen.getByRole('tab', { name: 'Inspect' }), { key: 'End' });
    await waitFor(() => expect(location.search).toBe('?tab=files'));
  });

  it('follows the logs live with colours, a timestamp column, search with next/previous, wrap and download', async () => {
    let push: (l: containers.LogLine) => void = () => {};
    vi.mocked(containers.followLogs).mockImplementation((_env, _id, onLine, opts) => {
      push = onLine;
      opts.onConnected?.();
      return new Promise(() => {});
    });
    go('/containers/web?tab=logs');
    render(ContainerDetailScreen, { route: route() });
    const log = await screen.findByRole('log', { name: 'Logs of web' });
    expect(containers.followLogs).toHaveBeenCalledWith(1, ID, expect.any(Function), expect.objectContaining({ tail: '100', timestamps: true }));
    push({ text: '2024-05-01T10:00:00.123456789Z plain line', stream: 'stdout' });
    push({ text: '2024-05-01T10:00:01.000000000Z \x1b[31mred error\x1b[0m done\x1b[2K', stream: 'stderr' });
    push({ text: '2024-05-01T10:00:02.000000000Z another error', stream: 'stdout' });
    await waitFor(() => expect(log.textContent).toContain('red error done'));
    expect(log.querySelector('.c31')?.textContent).toBe('red error');
    expect(screen.getByText('Live')).toBeTruthy();
    // The timestamp is a column of its own, apart from the text, and can be hidden.
    const first = log.querySelector('.line')!;
    expect(first.querySelector('.ts')?.textContent).toBe('2024-05-01 10:00:00.123');
    expect(first.querySelector('.text')?.textContent).toBe('plain line');
    await fireEvent.click(screen.getByLabelText('Timestamps'));
    expect(log.querySelector('.ts')).toBeNull();
    expect(containers.followLogs).toHaveBeenCalledTimes(1); // no reconnect for that

    // Search: a counter, next and previous (wrapping around), the current line marked.
    await fireEvent.input(screen.getByLabelText('Search logs'), { target: { value: 'ERROR' } });
    expect(log.querySelector('mark')?.textContent).toBe('error');
    expect(screen.getByText('2 matches')).toBeTruthy();
    await fireEvent.click(screen.getByRole('button', { name: 'Next match' }));
    expect(screen.getByText('1 of 2')).toBeTruthy();
    expect(log.querySelector('.line.current')?.textContent).toContain('red error done');
    await fireEvent.keyDown(screen.getByLabelText('Search logs'), { key: 'Enter' });
    expect(screen.getByText('2 of 2')).toBeTruthy();
    expect(log.querySelector('.line.current')?.textContent).toContain('another error');
    await fireEvent.click(screen.getByRole('button', { name: 'Previous match' }));
    expect(screen.getByText('1 of 2')).toBeTruthy();
    await fireEvent.click(screen.getByLabelText('Only matching lines'));
    expect(log.textContent).not.toContain('plain line');
    await fireEvent.click(screen.getByLabelText('Only matching lines'));

    // Wrap off keeps long lines on one line; full screen and back.
    expect(log.classList.contains('nowrap')).toBe(false);
    await fireEvent.click(screen.getByLabelText('Wrap lines'));
    expect(log.classList.contains('nowrap')).toBe(true);
    await fireEvent.click(screen.getByRole('button', { name: 'Full screen' }));
    expect(screen.getByRole('region', { name: 'Logs of web, full screen' })).toBeTruthy();
    await fireEvent.keyDown(window, { key: 'Escape' });
    expect(screen.queryByRole('region', { name: 'Logs of web, full screen' })).toBeNull();

    // Download: every line shown, with its full timestamp, as a .log file.
    const blobs: Blob[] = [];
    vi.stubGlobal('URL', Object.assign(URL, { createObjectURL: (b: Blob) => (blobs.push(b), 'blob:x'), revokeObjectURL: () => {} }));
    await fireEvent.click(screen.getByRole('button', { name: 'Download' }));
    expect(await blobs[0].text()).toBe(
      '2024-05-01T10:00:00.123456789Z plain line\n2024-05-01T10:00:01.000000000Z red error done\n2024-05-01T10:00:02.000000000Z another error\n',
    );
    expect(screen.getByText(/^Downloaded web-\d{8}-\d{6}\.log \(3 lines\)\.$/)).toBeTruthy();

    // The tail reconnects; follow off stops the stream.
    await fireEvent.change(screen.getByLabelText('Lines'), { target: { value: '500' } });
    await waitFor(() => expect(containers.followLogs).toHaveBeenCalledTimes(2));
    expect(vi.mocked(containers.followLogs).mock.calls[1][3]).toMatchObject({ tail: '500', timestamps: true });
    const signal = vi.mocked(containers.followLogs).mock.calls[1][3].signal!;
    await fireEvent.click(screen.getByLabelText('Follow'));
    expect(signal.aborted).toBe(true);
    expect(screen.getByText(/Paused \(follow is off\)/)).toBeTruthy();
  });

  it('keeps the log stream open when the state is reloaded', async () => {
    go('/containers/web?tab=logs');
    render(ContainerDetailScreen, { route: route() });
    await screen.findByRole('log', { name: 'Logs of web' });
    await waitFor(() => expect(containers.followLogs).toHaveBeenCalledTimes(1));
    await fireEvent.click(screen.getByRole('button', { name: 'Restart' }));
    await waitFor(() => expect(server.called(`POST /api/containers/${ID}/restart`)).toHaveLength(1));
    await waitFor(() => expect(server.called('GET /api/containers/web').length).toBeGreaterThanOrEqual(2));
    await new Promise((r) => setTimeout(r, 20));
    expect(containers.followLogs).toHaveBeenCalledTimes(1);
    expect(vi.mocked(containers.followLogs).mock.calls[0][3].signal!.aborted).toBe(false);
  });

  it('follows the logs again when a stopped container starts', async () => {
    server.routes['GET /api/containers/web'] = inspect('exited');
    vi.mocked(containers.followLogs).mockImplementationOnce(async (_e, _i, onLine, opts) => {
      opts.onConnected?.();
      onLine({ text: 'last words' });
    });
    go('/containers/web?tab=logs');
    render(ContainerDetailScreen, { route: route() });
    expect(await screen.findByText('The container is not running: no new output')).toBeTruthy();
    expect(screen.getByRole('log').textContent).toContain('last words');
    server.routes['GET /api/containers/web'] = inspect('running');
    await fireEvent.click(screen.getByRole('button', { name: 'Start' }));
    await waitFor(() => expect(server.called(`POST /api/containers/${ID}/start`)).toHaveLength(1));
    await waitFor(() => expect(containers.followLogs).toHaveBeenCalledTimes(2));
  });

  it('shows a log stream error', async () => {
    vi.mocked(containers.followLogs).mockRejectedValue(new api.ApiError(403, 'Permission denied'));
    go('/containers/web?tab=logs');
    render(ContainerDetailScreen, { route: route() });
    expect((await screen.findByRole('alert')).textContent).toContain('Logs of web: Permission denied');
  });

  it('lists the processes', async () => {
    go('/containers/web?tab=processes');
    render(ContainerDetailScreen, { route: route() });
    const table = await screen.findByRole('table', { name: 'Processes' });
    expect(within(table).getByText('sleep 600')).toBeTruthy();
    expect(server.called(`GET /api/containers/${ID}/top`)[0].query).toEqual({ env: '1' });
    expect(screen.getByText('1 process')).toBeTruthy();
    // Refresh reads them again.
    server.routes[`GET /api/containers/${ID}/top`] = { Titles: ['PID', 'USER', 'CMD'], Processes: [['1', 'root', 'sleep 600'], ['7', 'root', 'top']] };
    await fireEvent.click(screen.getByRole('button', { name: 'Refresh' }));
    expect(await screen.findByText('2 processes')).toBeTruthy();
  });

  it('says why the processes could not be listed, with Retry', async () => {
    server.routes[`GET /api/containers/${ID}/top`] = () => {
      throw new api.ApiError(403, 'Permission denied');
    };
    go('/containers/web?tab=processes');
    render(ContainerDetailScreen, { route: route() });
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain('Processes could not be listed: Permission denied');
    server.routes[`GET /api/containers/${ID}/top`] = { Titles: ['PID', 'CMD'], Processes: [['1', 'sleep 600']] };
    await fireEvent.click(within(alert).getByRole('button', { name: 'Retry' }));
    expect(await screen.findByRole('table', { name: 'Processes' })).toBeTruthy();
    expect(screen.queryByRole('alert')).toBeNull();
  });

  it('says the container is not running in the processes, stats and terminal tabs, and reads nothing', async () => {
    server.routes['GET /api/containers/web'] = inspect('exited');
    go('/containers/web?tab=processes');
    render(ContainerDetailScreen, { route: route() });
    expect(await screen.findByText('Container is not running: its processes are listed while it runs.')).toBeTruthy();
    selectTabByName('Stats');
    expect(await screen.findByText('Container is not running: statistics are sampled while it runs.')).toBeTruthy();
    selectTabByName('Terminal');
    expect(await screen.findByText('Container is not running: start web to open a terminal.')).toBeTruthy();
    expect(screen.queryByRole('alert')).toBeNull();
    expect(server.called(`GET /api/containers/${ID}/top`)).toHaveLength(0);
    expect(server.called(`GET /api/containers/${ID}/stats`)).toHaveLength(0);
    expect(server.called(`POST /api/containers/${ID}/exec`)).toHaveLength(0);
  });

  it('samples the statistics', async () => {
    go('/containers/web?tab=stats');
    render(ContainerDetailScreen, { route: route() });
    expect(await screen.findByText('12.5 %', { selector: 'dd' })).toBeTruthy();
    expect(screen.getByRole('img', { name: /CPU usage: CPU 12.5 %/ })).toBeTruthy();
    expect(server.called(`GET /api/containers/${ID}/stats`)[0].query).toEqual({ env: '1' });
  });

  it('retries statistics the server failed to read, and recovers by itself', async () => {
    const answer = server.routes[`GET /api/containers/${ID}/stats`];
    server.routes[`GET /api/containers/${ID}/stats`] = () => {
      throw new api.ApiError(500, 'Failed to read the container stats');
    };
    go('/containers/web?tab=stats');
    render(ContainerDetailScreen, { route: route() });
    expect(await screen.findByText('Statistics could not be read: Failed to read the container stats. Retrying…')).toBeTruthy();
    server.routes[`GET /api/containers/${ID}/stats`] = answer;
    expect(await screen.findByText('12.5 %', { selector: 'dd' }, { timeout: 3000 })).toBeTruthy();
    expect(screen.queryByText(/Retrying/)).toBeNull();
  });

  it('opens a terminal over the exec WebSocket with a shell the container has', async () => {
    go('/containers/web?tab=terminal');
    render(ContainerDetailScreen, { route: route() });
    await waitFor(() => expect(FakeSocket.all).toHaveLength(1));
    expect(server.called(`GET /api/containers/${ID}/shells`)[0].query).toEqual({ env: '1' });
    expect(server.called(`POST /api/containers/${ID}/exec`)[0]).toMatchObject({ query: { envId: '1' }, body: { shell: '/bin/sh' } });
    // Only the shells that exist are offered (no bash on busybox), and a command of one's own.
    const picker = screen.getByLabelText('Shell') as HTMLSelectElement;
    expect([...picker.options].map((o) => o.textContent)).toEqual(['sh (/bin/sh)', 'Custom command…']);
    const ws = FakeSocket.all[0];
    expect(ws.url).toBe(`ws://${location.host}/api/containers/exec/ex9/attach?envId=1`);
    ws.readyState = 1;
    ws.onopen?.();
    await waitFor(() => expect(screen.getByText('Connected to web (/bin/sh)')).toBeTruthy());
    await waitFor(() => expect(server.called('POST /api/containers/exec/ex9/resize')[0]?.query).toEqual({ envId: '1', h: '24', w: '80' }));
    ws.onmessage?.({ data: '/ # ' });
    expect(terms[0].written).toContain('/ # ');
    terms[0].dataHandler?.('echo hi\r');
    expect(ws.sent).toEqual(['echo hi\r']);
    expect(screen.getByRole('link', { name: 'Open in a new tab' }).getAttribute('href')).toBe(`/containers/${ID}/terminal`);

    // Another tab: the session stays open (same socket, not closed), and is there on return.
    selectTabByName('Logs');
    await screen.findByRole('log', { name: 'Logs of web' });
    expect(ws.readyState).toBe(1);
    expect(screen.getByRole('group', { name: 'Terminal of web', hidden: true })).toBeTruthy();
    selectTabByName('Terminal');
    await waitFor(() => expect(screen.getByText('Connected to web (/bin/sh)')).toBeTruthy());
    expect(FakeSocket.all).toHaveLength(1);
    expect(terms).toHaveLength(1);

    await fireEvent.click(screen.getByRole('button', { name: 'Disconnect' }));
    expect(ws.readyState).toBe(3);
    expect(screen.getByRole('button', { name: 'Reconnect' })).toBeTruthy();

    // A custom command.
    await fireEvent.change(picker, { target: { value: 'custom' } });
    await fireEvent.input(screen.getByLabelText('Command'), { target: { value: 'python3 -i' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Reconnect' }));
    await waitFor(() => expect(server.called(`POST /api/containers/${ID}/exec`).at(-1)?.body).toEqual({ shell: 'python3 -i' }));
  });

  it('says so in words when the shell cannot be started', async () => {
    go('/containers/web?tab=terminal');
    render(ContainerDetailScreen, { route: route() });
    await waitFor(() => expect(FakeSocket.all).toHaveLength(1));
    const ws = FakeSocket.all[0];
    ws.readyState = 1;
    ws.onopen?.();
    ws.onmessage?.({ data: 'OCI runtime exec failed: exec failed: unable to start container process: exec: "/bin/sh": stat /bin/sh: no such file or directory: unknown\r\n' });
    ws.readyState = 3;
    ws.onclose?.({ reason: 'session ended' });
    expect((await screen.findByRole('alert')).textContent).toBe(
      'Terminal: The command “/bin/sh” could not be started: it does not exist in the container. Pick another shell or enter a command that exists there.',
    );
  });

  it('offers no shell but a command when the container has none', async () => {
    server.routes[`GET /api/containers/${ID}/shells`] = { shells: [], defaultShell: '', allShells: busyboxShells.allShells.map((s) => ({ ...s, available: false })) };
    go('/containers/web?tab=terminal');
    render(ContainerDetailScreen, { route: route() });
    expect(await screen.findByText(/No shell was found in web \(looked for \/bin\/bash, \/bin\/sh, \/bin\/ash\)/)).toBeTruthy();
    expect((screen.getByLabelText('Shell') as HTMLSelectElement).value).toBe('custom');
    expect(server.called(`POST /api/containers/${ID}/exec`)).toHaveLength(0);
  });

  it('shows a Viewer the logs but no terminal', async () => {
    session.session = {
      authenticated: true,
      authEnabled: true,
      user: { id: 2, username: 'val', isAdmin: false, environmentPermissions: { '1': { containers: ['view', 'logs', 'inspect'] } } },
    };
    go('/containers/web?tab=terminal');
    render(ContainerDetailScreen, { route: route() });
    await screen.findByRole('tab', { name: 'Logs' });
    expect(screen.queryByRole('tab', { name: 'Terminal' })).toBeNull();
    expect(screen.getByRole('tab', { name: 'Overview', selected: true })).toBeTruthy();
    expect(server.called(`POST /api/containers/${ID}/exec`)).toHaveLength(0);
  });

  it('asks before removing, then goes back to the list', async () => {
    render(ContainerDetailScreen, { route: route() });
    await fireEvent.click(await screen.findByRole('button', { name: 'Remove' }));
    const dialog = screen.getByRole('dialog', { name: 'Remove web?' });
    expect((within(dialog).getByRole('checkbox') as HTMLInputElement).checked).toBe(true);
    expect(server.called(`DELETE /api/containers/${ID}`)).toHaveLength(0);
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Remove' }));
    await waitFor(() => expect(server.called(`DELETE /api/containers/${ID}`)).toHaveLength(1));
    expect(server.called(`DELETE /api/containers/${ID}`)[0].query).toEqual({ env: '1', force: 'true' });
    await waitFor(() => expect(location.pathname).toBe('/containers'));
  });

  it('renames, checking the name first', async () => {
    render(ContainerDetailScreen, { route: route() });
    await fireEvent.click(await screen.findByRole('button', { name: 'Rename' }));
    const dialog = screen.getByRole('dialog', { name: 'Rename web' });
    const field = within(dialog).getByLabelText('New name');
    await fireEvent.input(field, { target: { value: 'no spaces allowed' } });
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Rename' }));
    expect(within(dialog).getByRole('alert').textContent).toContain('Use letters');
    expect(server.called(`POST /api/containers/${ID}/rename`)).toHaveLength(0);
    await fireEvent.input(field, { target: { value: 'web-2' } });
    await fireEvent.keyDown(field, { key: 'Enter' });
    await waitFor(() => expect(server.called(`POST /api/containers/${ID}/rename`)).toHaveLength(1));
    expect(server.called(`POST /api/containers/${ID}/rename`)[0]).toMatchObject({ query: { env: '1' }, body: { name: 'web-2' } });
    // Opened by name: the page moves to the id, which the new name does not change.
    await waitFor(() => expect(location.pathname).toBe(`/containers/${ID}`));
  });

  it('offers no change while the environment is offline, and shows a rename refused by the server in its dialog', async () => {
    session.envHealth = { envId: 1, state: 'offline', reason: 'The engine cannot be reached' };
    render(ContainerDetailScreen, { route: route() });
    const actions = await screen.findByRole('group', { name: 'Container actions' });
    for (const b of within(actions).getAllByRole('button')) {
      expect((b as HTMLButtonElement).disabled).toBe(true);
      expect(b.getAttribute('title')).toBe('The environment is offline');
    }
    session.envHealth = { envId: 1, state: 'online' };
    server.routes[`POST /api/containers/${ID}/rename`] = () => {
      throw new api.ApiError(409, 'Conflict. The container name "/db" is already in use');
    };
    await waitFor(() => expect((screen.getByRole('button', { name: 'Rename' }) as HTMLButtonElement).disabled).toBe(false));
    await fireEvent.click(screen.getByRole('button', { name: 'Rename' }));
    const dialog = screen.getByRole('dialog', { name: 'Rename web' });
    await fireEvent.input(within(dialog).getByLabelText('New name'), { target: { value: 'db' } });
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Rename' }));
    expect((await within(dialog).findByRole('alert')).textContent).toBe('Rename web: Conflict. The container name "/db" is already in use');
    expect(location.pathname).toBe('/containers/web');
  });

  it('says when the container does not exist', async () => {
    server.routes['GET /api/containers/gone'] = () => {
      throw new api.ApiError(404, 'Container not found');
    };
    render(ContainerDetailScreen, { route: route('gone') });
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain('No container “gone” on this environment: Container not found');
    expect(within(alert).getByRole('link', { name: 'Back to the containers' })).toBeTruthy();
  });

  it('has no serious or critical axe violations', async () => {
    const { container } = render(ContainerDetailScreen, { route: route() });
    await screen.findByRole('group', { name: 'Container actions' });
    await expectNoSeriousAxeViolations(container);
  });
});
