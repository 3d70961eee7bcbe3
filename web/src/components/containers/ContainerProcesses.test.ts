import { cleanup, render, screen, waitFor } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { queryClient } from '../../lib/query';
import { stubApi, type StubApi } from '../../test-api';
import ContainerProcesses from './ContainerProcesses.svelte';

let server: StubApi;
let n = 0;

beforeEach(() => {
  queryClient.clear();
  n = 0;
  server = stubApi({
    'GET /api/containers/c1/top': () => ({ Titles: ['PID', 'CMD'], Processes: Array.from({ length: ++n }, (_, i) => [String(i + 1), 'sleep 600']) }),
  });
});
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

describe('ContainerProcesses', () => {
  it('reads the processes again while it is shown, and no more once it is gone', async () => {
    const { unmount } = render(ContainerProcesses, { env: 1, id: 'c1', running: true, interval: 100 });
    expect(await screen.findByText('1 process')).toBeTruthy();
    expect(await screen.findByText('2 processes')).toBeTruthy();
    expect(server.called('GET /api/containers/c1/top')[0].query).toEqual({ env: '1' });
    unmount();
    const calls = server.calls.length;
    await new Promise((r) => setTimeout(r, 250));
    expect(server.calls.length).toBe(calls);
  });

  it('reads nothing of a container that is not running', async () => {
    render(ContainerProcesses, { env: 1, id: 'c1', running: false, interval: 100 });
    expect(screen.getByText('Container is not running: its processes are listed while it runs.')).toBeTruthy();
    await new Promise((r) => setTimeout(r, 150));
    await waitFor(() => expect(server.calls).toHaveLength(0));
  });
});
