import { cleanup, render, screen, waitFor } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../lib/api';
import { queryClient } from '../lib/query';
import type { Route } from '../lib/routes';
import { session } from '../lib/session.svelte';
import { stubApi, type StubApi } from '../test-api';
import { expectNoSeriousAxeViolations } from '../test-axe';
import TerminalScreen from './TerminalScreen.svelte';

// xterm.js needs a real browser: a stand-in.
vi.mock('@xterm/xterm', () => ({
  Terminal: class {
    rows = 24;
    cols = 80;
    options = {};
    loadAddon() {}
    open() {}
    attachCustomKeyEventHandler() {}
    onData() {}
    onResize() {}
    write() {}
    focus() {}
    reset() {}
    dispose() {}
  },
}));
vi.mock('@xterm/addon-fit', () => ({ FitAddon: class { fit() {} } }));

class FakeSocket {
  static all: FakeSocket[] = [];
  readyState = 0;
  binaryType = 'blob';
  onopen: (() => void) | null = null;
  onmessage: ((e: { data: unknown }) => void) | null = null;
  onclose: ((e: { reason: string }) => void) | null = null;
  constructor(public url: string) {
    FakeSocket.all.push(this);
  }
  send() {}
  close() {
    this.readyState = 3;
  }
}

const ID = 'abc123abc123';
const route: Route = { name: 'containerTerminal', params: { id: 'web' }, path: '/containers/web/terminal' };
let server: StubApi;

beforeEach(() => {
  queryClient.clear();
  session.session = { authenticated: false, authEnabled: false };
  session.environments = [{ id: 1, name: 'local', connectionType: 'socket' }];
  session.envId = 1;
  FakeSocket.all = [];
  vi.stubGlobal('WebSocket', FakeSocket);
  server = stubApi({
    [`POST /api/containers/${ID}/exec`]: { execId: 'ex1', connectionInfo: { type: 'websocket' } },
    'POST /api/containers/exec/ex1/resize': { success: true },
    'GET /api/containers/web': { Id: ID, Name: '/web', State: { Running: true, Status: 'running' } },
    [`GET /api/containers/${ID}/shells`]: {
      shells: ['/bin/sh'],
      defaultShell: '/bin/sh',
      allShells: [
        { path: '/bin/bash', label: 'Bash', available: false },
        { path: '/bin/sh', label: 'sh', available: true },
      ],
    },
  });
});
afterEach(() => {
  cleanup();
  vi.clearAllMocks();
  vi.unstubAllGlobals();
});

describe('TerminalScreen', () => {
  it('opens the default shell of the container in the whole window', async () => {
    const { container } = render(TerminalScreen, { route });
    expect(await screen.findByRole('heading', { level: 1, name: 'Terminal: web' })).toBeTruthy();
    await waitFor(() => expect(FakeSocket.all).toHaveLength(1));
    expect(server.called(`POST /api/containers/${ID}/exec`)[0]).toMatchObject({ query: { envId: '1' }, body: { shell: '/bin/sh' } });
    expect(FakeSocket.all[0].url).toBe(`ws://${location.host}/api/containers/exec/ex1/attach?envId=1`);
    expect(server.called('GET /api/containers/web')[0].query).toEqual({ env: '1' });
    expect(screen.getByRole('link', { name: 'Container page' }).getAttribute('href')).toBe('/containers/web');
    expect(screen.queryByRole('link', { name: 'Open in a new tab' })).toBeNull();
    await expectNoSeriousAxeViolations(container);
  });

  it('says when the container does not exist', async () => {
    server.routes['GET /api/containers/web'] = () => {
      throw new ApiError(404, 'Container not found');
    };
    render(TerminalScreen, { route });
    expect((await screen.findByRole('alert')).textContent).toContain('No container “web” on this environment: Container not found.');
  });

  it('opens nothing for a Viewer', async () => {
    session.session = {
      authenticated: true,
      authEnabled: true,
      user: { id: 2, username: 'val', isAdmin: false, environmentPermissions: { '1': { containers: ['view', 'logs', 'inspect'] } } },
    };
    render(TerminalScreen, { route });
    expect((await screen.findByRole('alert')).textContent).toContain('You may not open a terminal on this environment');
    expect(server.calls).toHaveLength(0);

  });
});
