import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { queryClient } from '../lib/query';
import { router } from '../lib/router.svelte';
import { session } from '../lib/session.svelte';
import { stubApi, type StubApi } from '../test-api';
import { expectNoSeriousAxeViolations } from '../test-axe';
import LogsScreen from './LogsScreen.svelte';

const container = (id: string, name: string, stack = '') => ({
  id,
  name,
  image: 'busybox',
  imageId: 'sha256:1',
  command: 'sh',
  created: 1,
  state: 'running',
  status: 'Up',
  restartCount: 0,
  labels: stack ? { 'com.docker.compose.project': stack } : {},
  mounts: [],
  networks: {},
  ports: [],
});

function sse(events: [string, unknown][]): Response {
  const body = events.map(([e, d]) => `event: ${e}\ndata: ${JSON.stringify(d)}\n\n`).join('');
  return new Response(body, { headers: { 'Content-Type': 'text/event-stream' } });
}

function go(path: string) {
  history.replaceState(null, '', path);
  router.navigate(path, { replace: true });
}

let server: StubApi;
beforeEach(() => {
  queryClient.clear();
  session.session = { authenticated: false, authEnabled: false };
  session.environments = [{ id: 1, name: 'local', connectionType: 'socket' }];
  session.envId = 1;
  go('/logs');
  server = stubApi({
    'GET /api/containers': [container('a1', 'web', 'shop'), container('b2', 'db', 'shop'), container('c3', 'cache')],
    'GET /api/logs/merged': (call: { query: Record<string, string> }) =>
      sse([
        ['connected', { containers: call.query.containers.split(',') }],
        ['log', { containerId: 'web', text: 'GET / 200', timestamp: '2026-11-27T10:00:00.100Z' }],
        ['log', { containerId: 'db', text: '\u001b[32mready\u001b[0m', timestamp: '2026-11-27T10:00:00.200Z', stream: 'stderr' }],
      ]),
  });
});
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

describe('LogsScreen', () => {
  it("merges the picked containers' logs, each line with its container", async () => {
    render(LogsScreen);
    await screen.findByLabelText(/web/);
    expect(screen.getByText('Pick the containers whose logs to show.')).toBeTruthy();
    expect(server.called('GET /api/logs/merged')).toHaveLength(0);

    // A stack picks its containers; the address keeps the selection.
    await fireEvent.change(screen.getByLabelText('Stack'), { target: { value: 'shop' } });
    await waitFor(() => expect(location.search).toBe('?containers=db,web'));
    await waitFor(() => expect(server.called('GET /api/logs/merged')).toHaveLength(1));
    expect(server.called('GET /api/logs/merged')[0].query).toEqual({ env: '1', containers: 'db,web', tail: '100' });
    const log = screen.getByRole('log', { name: 'Merged logs' });
    await waitFor(() => expect(log.querySelectorAll('.line')).toHaveLength(2));
    const [first, second] = [...log.querySelectorAll('.line')];
    expect(first.querySelector('.src')?.textContent).toBe('web');
    expect(first.querySelector('.text')?.textContent).toBe('GET / 200');
    expect(second.querySelector('.src')?.textContent).toBe('db');
    expect(second.querySelector('.text .c32')?.textContent).toBe('ready');
    expect(first.querySelector('.src')?.className).not.toBe(second.querySelector('.src')?.className);
    expect(await screen.findByText('The output of every container ended')).toBeTruthy();

    // One more container reconnects with it.
    await fireEvent.click(screen.getByRole('checkbox', { name: /cache/ }));
    await waitFor(() => expect(server.called('GET /api/logs/merged')).toHaveLength(2));
    expect(server.called('GET /api/logs/merged')[1].query.containers).toBe('db,web,cache');
  }, 20_000);

  it('copies the lines shown, each with its time and container', async () => {
    const writeText = vi.fn(async () => {});
    Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true });
    go('/logs?containers=web,db');
    render(LogsScreen);
    await waitFor(() => expect(screen.getByRole('log', { name: 'Merged logs' }).querySelectorAll('.line')).toHaveLength(2));
    await fireEvent.click(screen.getByRole('button', { name: 'Copy' }));
    await waitFor(() => expect(writeText).toHaveBeenCalledWith('2026-11-27T10:00:00.100Z web | GET / 200\n2026-11-27T10:00:00.200Z db | ready\n'));
    expect(await screen.findByText('Copied 2 lines.')).toBeTruthy();
    await fireEvent.click(screen.getByLabelText('Timestamps'));
    await fireEvent.click(screen.getByRole('button', { name: 'Copy' }));
    await waitFor(() => expect(writeText).toHaveBeenLastCalledWith('web | GET / 200\ndb | ready\n'));
  }, 20_000);

  it('has no serious or critical axe violations', async () => {
    go('/logs?containers=web,db');
    const { container: root } = render(LogsScreen);
    await waitFor(() => expect(screen.getByRole('log', { name: 'Merged logs' }).querySelectorAll('.line')).toHaveLength(2));
    await expectNoSeriousAxeViolations(root);
  }, 20_000);

  it('opens with the containers of its address and says why a stream failed', async () => {
    server.routes['GET /api/logs/merged'] = () => sse([['connected', { containers: ['web'] }], ['error', { error: 'Container not found' }]]);
    go('/logs?containers=web');
    render(LogsScreen);
    expect((await screen.findByRole('alert')).textContent).toBe('Merged logs: Container not found');
    expect(server.called('GET /api/logs/merged')[0].query.containers).toBe('web');
  });

  it('shows nothing to a user without containers:logs', async () => {
    session.session = {
      authenticated: true,
      authEnabled: true,
      user: { id: 3, username: 'x', isAdmin: false, environmentPermissions: { '1': { containers: ['view'] } } },
    };
    render(LogsScreen);
    expect((await screen.findByRole('alert')).textContent).toContain('You may not read container logs');
    expect(server.calls).toHaveLength(0);
  });
});
