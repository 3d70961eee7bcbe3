import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError, type DashboardStats } from '../lib/api';
import * as infra from '../lib/api-infra';
import { queryClient } from '../lib/query';
import { session } from '../lib/session.svelte';
import { stubApi, type StubApi, type StubCall } from '../test-api';
import { expectNoSeriousAxeViolations } from '../test-axe';
import DashboardScreen from './DashboardScreen.svelte';

// The engine events stay a stream (followEvents); the figures and samples are reads of the data layer (stubApi).
vi.mock('../lib/api-infra', async (importOriginal) => {
  const real = await importOriginal<typeof import('../lib/api-infra')>();
  return { ...real, followEvents: vi.fn() };
});

type Emit = (e: infra.EngineEvent) => void;
type Status = (s: { connected: boolean; error?: string }) => void;
let emitters: Record<number, { emit: Emit; status: Status; signal?: AbortSignal }>;

let api: StubApi;
const samples = (c: StubCall) =>
  c.query.env === '1'
    ? [
        { id: 'a', name: 'web', cpuPercent: 12.5, memoryUsage: 100 * 1024 * 1024 },
        { id: 'b', name: 'db', cpuPercent: 7.5, memoryUsage: 50 * 1024 * 1024 },
      ]
    : [{ id: 'c', name: 'edge-app', cpuPercent: 1, memoryUsage: 1024 }];

beforeEach(() => {
  queryClient.clear();
  emitters = {};
  session.envId = 1;
  // no stats stream here (answered 404): the plain request (DashboardScreen.stream.test.ts has the stream)
  api = stubApi({ 'GET /api/dashboard/stats': () => structuredClone(twoEnvs), 'GET /api/containers/stats': samples });
  vi.mocked(infra.followEvents).mockImplementation((env, emit, status, signal) => {
    emitters[env] = { emit, status, signal };
    status({ connected: true });
    return new Promise<void>((_, reject) => signal?.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError'))));
  });
});

afterEach(() => {
  cleanup();
  vi.clearAllMocks();
  vi.unstubAllGlobals();
  vi.useRealTimers();
});

const twoEnvs: DashboardStats[] = [
  {
    id: 1,
    name: 'local',
    online: true,
    containers: { total: 5, running: 3, stopped: 2, paused: 0, unhealthy: 1, pendingUpdates: 2 },
    images: { total: 7 },
    volumes: { total: 2 },
    networks: { total: 4 },
    stacks: { total: 1 },
  },
  { id: 2, name: 'edge', online: true, containers: { total: 4, running: 1 } },
  { id: 3, name: 'far', online: false, error: 'connection refused' },
];

const figure = (tile: HTMLElement, label: string) =>
  within(tile).getByText(label, { selector: 'dt' }).parentElement?.querySelector('dd')?.textContent;

describe('DashboardScreen', () => {
  it('shows a tile per environment and tolerates missing fields', async () => {
    const { container } = render(DashboardScreen);
    const local = await screen.findByRole('article', { name: 'local' });
    expect(figure(local, 'Running')).toBe('3');
    expect(figure(local, 'Stopped')).toBe('2');
    expect(figure(local, 'Paused')).toBe('0');
    expect(figure(local, 'Unhealthy')).toBe('1');
    expect(figure(local, 'Updates')).toBe('2');
    expect(figure(local, 'Images')).toBe('7');
    expect(figure(local, 'Networks')).toBe('4');
    expect(within(local).getByText('Online')).toBeTruthy();

    const edge = screen.getByRole('article', { name: 'edge' });
    expect(figure(edge, 'Stopped')).toBe('3'); // derived from total - running
    expect(figure(edge, 'Images')).toBe('—');

    const far = screen.getByRole('article', { name: 'far' });
    expect(within(far).getByText('Offline')).toBeTruthy();
    expect(within(far).getByText(/connection refused/)).toBeTruthy();
    expect(within(far).queryByText('Running')).toBeNull();

    await expectNoSeriousAxeViolations(container);
  });

  it('charts the summed CPU and memory of the online environments only', async () => {
    render(DashboardScreen);
    const local = await screen.findByRole('article', { name: 'local' });
    const cpu = await within(local).findByRole('img', { name: /^CPU of local/ });
    expect(cpu.getAttribute('aria-label')).toBe('CPU of local: CPU 20 %');
    expect(within(local).getByRole('img', { name: /^Memory of local/ }).getAttribute('aria-label')).toBe(
      'Memory of local: Memory 150 MiB',
    );
    await within(screen.getByRole('article', { name: 'edge' })).findByRole('img', { name: /^CPU of edge/ });
    expect(api.called('GET /api/containers/stats').map((c) => c.query.env).sort()).toEqual(['1', '2']);
    expect(within(screen.getByRole('article', { name: 'far' })).queryByRole('img')).toBeNull();
  });

  it('samples every 5 s, and stops sampling and following events when the page is left', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    const { unmount } = render(DashboardScreen);
    await waitFor(() => expect(emitters[1]).toBeTruthy());
    expect(emitters[3]).toBeUndefined(); // offline: not followed
    const signals = Object.values(emitters).map((e) => e.signal!);
    expect(signals.every((s) => !s.aborted)).toBe(true);
    await waitFor(() => expect(api.called('GET /api/containers/stats')).toHaveLength(2));
    await vi.advanceTimersByTimeAsync(5000);
    await waitFor(() => expect(api.called('GET /api/containers/stats')).toHaveLength(4));
    unmount();
    expect(signals.every((s) => s.aborted)).toBe(true);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(api.called('GET /api/containers/stats')).toHaveLength(4);
  });

  it('lists the latest engine events, newest first, without exec noise', async () => {
    render(DashboardScreen);
    await waitFor(() => expect(emitters[1]).toBeTruthy());
    expect(await screen.findByText(/Listening on local/)).toBeTruthy();
    expect(screen.getByText(/No events yet/)).toBeTruthy();
    emitters[1].emit({ event: 'container-start', id: 'abc', name: 'web' });
    emitters[1].emit({ event: 'container-exec_start: sh -c true', id: 'abc', name: 'web' });
    emitters[2].emit({ event: 'volume-create', id: 'data' });
    const section = screen.getByRole('region', { name: 'Recent events' });
    await waitFor(() => expect(within(section).getAllByRole('row')).toHaveLength(3));
    const rows = within(section)
      .getAllByRole('row')
      .slice(1)
      .map((r) => within(r).getAllByRole('cell').slice(1).map((c) => c.textContent?.trim()));
    expect(rows).toEqual([
      ['edge', 'volume', 'create', 'data'],
      ['local', 'container', 'start', 'web'],
    ]);
  });

  it('says why events are unavailable and does not retry a refusal', async () => {
    api.routes['GET /api/dashboard/stats'] = [twoEnvs[0]];
    vi.mocked(infra.followEvents).mockRejectedValue(new ApiError(403, 'Permission denied'));
    render(DashboardScreen);
    expect(await screen.findByText('local: events unavailable (Permission denied)')).toBeTruthy();
    expect(infra.followEvents).toHaveBeenCalledTimes(1);
  });

  it('selects the environment when its containers link is followed', async () => {
    render(DashboardScreen);
    const link = await screen.findByRole('link', { name: 'Containers of edge' });
    expect(link.getAttribute('href')).toBe('/containers');
    link.addEventListener('click', (e) => e.preventDefault()); // jsdom would navigate
    await fireEvent.click(link);
    expect(session.envId).toBe(2);
  });

  it('shows an explicit empty state', async () => {
    api.routes['GET /api/dashboard/stats'] = [];
    render(DashboardScreen);
    expect(await screen.findByText('No environments yet.')).toBeTruthy();
  });

  it('shows a refusal, and retries a failure by itself until the figures come', async () => {
    api.routes['GET /api/dashboard/stats'] = () => {
      throw new ApiError(403, 'Permission denied');
    };
    render(DashboardScreen);
    expect((await screen.findByRole('alert')).textContent).toContain("The dashboard's figures could not be read: Permission denied");
    cleanup();
    queryClient.clear();

    vi.useFakeTimers({ shouldAdvanceTime: true });
    api.routes['GET /api/dashboard/stats'] = () => {
      throw new ApiError(500, 'boom');
    };
    render(DashboardScreen);
    expect(await screen.findByText("The dashboard's figures could not be read: boom. Retrying…")).toBeTruthy();
    api.routes['GET /api/dashboard/stats'] = () => structuredClone(twoEnvs);
    await vi.advanceTimersByTimeAsync(3000);
    expect(await screen.findByRole('article', { name: 'local' })).toBeTruthy();
    expect(screen.queryByText(/could not be read/)).toBeNull();
  });

  it('reads the figures again shortly after an event that changes them', async () => {
    render(DashboardScreen);
    await waitFor(() => expect(emitters[1]).toBeTruthy());
    const before = api.called('GET /api/dashboard/stats').length;
    api.routes['GET /api/dashboard/stats'] = () => {
      const next = structuredClone(twoEnvs);
      next[0].containers = { ...next[0].containers, total: 6, running: 4 };
      return next;
    };
    emitters[1].emit({ event: 'container-start', id: 'abc', name: 'web' });
    await waitFor(() => expect(api.called('GET /api/dashboard/stats').length).toBe(before + 1), { timeout: 4000 });
    await waitFor(() => expect(figure(screen.getByRole('article', { name: 'local' }), 'Running')).toBe('4'));
  });
});
