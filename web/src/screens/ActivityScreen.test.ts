import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../lib/api';
import * as api from '../lib/api-activity';
import { queryClient } from '../lib/query';
import { session } from '../lib/session.svelte';
import { stubApi, type StubApi } from '../test-api';
import { expectNoSeriousAxeViolations } from '../test-axe';
import ActivityScreen from './ActivityScreen.svelte';

// The page and clearing go to the stubbed server; the live stream stays a function of api-activity.
vi.mock('../lib/api-activity', async (importOriginal) => {
  const real = await importOriginal<typeof import('../lib/api-activity')>();
  return { ...real, followActivity: vi.fn() };
});

const mk = (id: number, extra: Partial<api.ActivityEvent> = {}): api.ActivityEvent => ({
  id,
  environmentId: 1,
  environmentName: 'local',
  type: 'container',
  action: 'start',
  actorId: `${id}`.padStart(64, 'a'),
  actorName: `web${id}`,
  containerId: `${id}`.padStart(64, 'a'),
  containerName: `web${id}`,
  timestamp: '2026-11-23T10:00:00Z',
  ...extra,
});

let pushLive: ((e: api.ActivityEvent) => void) | null = null;
let server: StubApi;
const pages = () => server.called('GET /api/activity').map((c) => c.query);

beforeEach(() => {
  session.session = { authenticated: true, authEnabled: true, user: { id: 1, username: 'admin', isAdmin: true } };
  session.environments = [
    { id: 1, name: 'local', connectionType: 'socket' },
    { id: 2, name: 'edge', connectionType: 'socket' },
  ];
  server = stubApi({ 'GET /api/activity': { events: [mk(2, { action: 'die' }), mk(1)], total: 2, limit: 50, offset: 0 } });
  vi.mocked(api.followActivity).mockImplementation(async (_f, onEvent, onState, signal) => {
    pushLive = onEvent;
    onState(true);
    await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
  });
});
afterEach(async () => {
  cleanup();
  await queryClient.cancelQueries(); // no retry outlives the test
  queryClient.clear();
  vi.clearAllMocks();
  vi.unstubAllGlobals();
  pushLive = null;
  session.session = null;
  session.environments = [];
});

describe('ActivityScreen', () => {
  it('lists the collected events newest first and has no serious accessibility violation', async () => {
    const { container } = render(ActivityScreen);
    expect(screen.getByRole('heading', { level: 1, name: 'Activity' })).toBeTruthy();
    const table = await screen.findByRole('table');
    expect(pages()).toEqual([{ limit: '50', offset: '0' }]);
    const rows = within(table).getAllByRole('row').slice(1);
    expect(rows).toHaveLength(2);
    expect(within(rows[0]).getByText('Exited')).toBeTruthy();
    expect(within(rows[0]).getByText('web2')).toBeTruthy();
    expect(within(rows[1]).getByText('Started')).toBeTruthy();
    await waitFor(() => expect(screen.getByText('Live')).toBeTruthy());
    await expectNoSeriousAxeViolations(container);
  });

  it('shows a live event at the top as it arrives', async () => {
    render(ActivityScreen);
    const table = await screen.findByRole('table');
    await waitFor(() => expect(pushLive).not.toBeNull());
    pushLive!(mk(3, { action: 'restart', actorName: 'fresh' }));
    await waitFor(() => expect(within(table).getAllByRole('row')).toHaveLength(4));
    const first = within(table).getAllByRole('row')[1];
    expect(within(first).getByText('fresh')).toBeTruthy();
    expect(within(first).getByText('Restarted')).toBeTruthy();
    // The same event twice shows once.
    pushLive!(mk(3, { action: 'restart', actorName: 'fresh' }));
    await new Promise((r) => setTimeout(r, 0));
    expect(within(table).getAllByRole('row')).toHaveLength(4);
  });

  it('sends the filters to the server and follows the stream with them', async () => {
    render(ActivityScreen);
    await screen.findByRole('table');
    await fireEvent.change(screen.getByLabelText('Environment'), { target: { value: '2' } });
    await fireEvent.input(screen.getByLabelText('Container'), { target: { value: 'web1' } });
    await fireEvent.input(screen.getByLabelText('Action'), { target: { value: 'start' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Apply filters' }));
    await waitFor(() => expect(pages().at(-1)).toEqual({ env: '2', container: 'web1', action: 'start', limit: '50', offset: '0' }));
    expect(vi.mocked(api.followActivity).mock.calls.at(-1)![0]).toEqual({ env: 2, container: 'web1', action: 'start' });
  });

  it('refuses a time range that ends before it starts', async () => {
    render(ActivityScreen);
    await screen.findByRole('table');
    await fireEvent.input(screen.getByLabelText('From'), { target: { value: '2026-11-23T12:00' } });
    await fireEvent.input(screen.getByLabelText('Until'), { target: { value: '2026-11-23T10:00' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Apply filters' }));
    expect((await screen.findByRole('alert')).textContent).toContain('must come after its start');
    expect(pages()).toHaveLength(1);
  });

  it('clears the activity after confirmation', async () => {
    server.routes['DELETE /api/activity'] = { success: true, deleted: 2 };
    render(ActivityScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Clear…' }));
    const dialog = await screen.findByRole('dialog');
    expect(within(dialog).getByText(/every environment/)).toBeTruthy();
    server.routes['GET /api/activity'] = { events: [], total: 0, limit: 50, offset: 0 };
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Clear' }));
    await waitFor(() => expect(server.called('DELETE /api/activity')[0]?.query).toEqual({}));
    expect(await screen.findByText(/No activity collected yet/)).toBeTruthy();
    expect(screen.getByText('2 events of every environment cleared.')).toBeTruthy();
  });

  it('clears the events of the environment filtered on, and says why a clear failed', async () => {
    server.routes['DELETE /api/activity'] = () => {
      throw new ApiError(403, 'Permission denied');
    };
    render(ActivityScreen);
    await screen.findByRole('table');
    await fireEvent.change(screen.getByLabelText('Environment'), { target: { value: '2' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Apply filters' }));
    await fireEvent.click(screen.getByRole('button', { name: 'Clear…' }));
    const dialog = await screen.findByRole('dialog');
    expect(within(dialog).getByText(/of edge are deleted/)).toBeTruthy();
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Clear' }));
    await waitFor(() => expect(server.called('DELETE /api/activity')[0]?.query).toEqual({ env: '2' }));
    expect((await screen.findByRole('alert')).textContent).toContain('Permission denied');
    expect(screen.queryByRole('dialog')).toBeNull();
  });

  it('says so when the caller may not see the activity', async () => {
    server.routes['GET /api/activity'] = () => {
      throw new ApiError(403, 'Permission denied');
    };
    render(ActivityScreen);
    expect(await screen.findByText(/not available to you/)).toBeTruthy();
  });
});
