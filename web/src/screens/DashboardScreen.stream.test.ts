import { cleanup, render, screen, waitFor } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../lib/api';
import * as infra from '../lib/api-infra';
import { queryClient } from '../lib/query';
import * as sse from '../lib/sse';
import { session } from '../lib/session.svelte';
import { stubApi, type StubApi } from '../test-api';
import DashboardScreen from './DashboardScreen.svelte';

vi.mock('../lib/api-infra', async (importOriginal) => {
  const real = await importOriginal<typeof import('../lib/api-infra')>();
  return { ...real, followEvents: vi.fn() };
});
vi.mock('../lib/sse', async (importOriginal) => {
  const real = await importOriginal<typeof import('../lib/sse')>();
  return { ...real, stream: vi.fn() };
});

const ev = (event: string, data: unknown): sse.SSEvent => ({ event, data: JSON.stringify(data) });

let api: StubApi;
beforeEach(() => {
  queryClient.clear();
  session.envId = 1;
  api = stubApi({ 'GET /api/dashboard/stats': [{ id: 1, name: 'local', online: true }], 'GET /api/containers/stats': [] });
  vi.mocked(infra.followEvents).mockImplementation(
    (_env, _emit, _status, signal) => new Promise<void>((resolve) => signal?.addEventListener('abort', () => resolve())),
  );
});
afterEach(() => {
  cleanup();
  vi.clearAllMocks();
  vi.unstubAllGlobals();
});

describe('DashboardScreen with the stats stream', () => {
  it('shows each environment as its figures arrive, before the slow one', async () => {
    let next: ((e: sse.SSEvent) => void) | null = null;
    let finish: () => void = () => {};
    vi.mocked(sse.stream).mockImplementation((method, path, onEvent) => {
      expect([method, path]).toEqual(['GET', '/api/dashboard/stats/stream']);
      next = onEvent;
      return new Promise<void>((resolve) => (finish = resolve));
    });
    render(DashboardScreen);
    await waitFor(() => expect(next).not.toBeNull());
    next!(ev('connected', {}));
    next!(ev('stats', { id: 2, name: 'edge', online: true, containers: { total: 1, running: 1 } }));
    expect(await screen.findByRole('heading', { level: 2, name: 'edge' })).toBeTruthy();
    expect(screen.queryByRole('heading', { level: 2, name: 'local' })).toBeNull();
    next!(ev('stats', { id: 1, name: 'local', online: false, error: 'context deadline exceeded' }));
    next!(ev('done', { environments: 2 }));
    finish();
    await waitFor(() =>
      expect(screen.getAllByRole('heading', { level: 2 }).map((h) => h.textContent)).toEqual(['local', 'edge', 'Recent events']),
    );
    expect(screen.getByText(/Engine unreachable: context deadline exceeded/)).toBeTruthy();
    expect(api.called('GET /api/dashboard/stats')).toHaveLength(0);
  });

  it('falls back to the plain request when the stream is unavailable', async () => {
    vi.mocked(sse.stream).mockRejectedValue(new ApiError(404, 'Not found'));
    render(DashboardScreen);
    expect(await screen.findByRole('heading', { level: 2, name: 'local' })).toBeTruthy();
    expect(api.called('GET /api/dashboard/stats')).toHaveLength(1);
  });
});
