import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../lib/api';
import * as sched from '../lib/api-schedules';
import { queryClient } from '../lib/query';
import { session } from '../lib/session.svelte';
import { stubApi, type StubApi } from '../test-api';
import { expectNoSeriousAxeViolations } from '../test-axe';
import SchedulesScreen from './SchedulesScreen.svelte';

vi.mock('../lib/api-schedules', async (importOriginal) => {
  const real = await importOriginal<typeof import('../lib/api-schedules')>();
  return {
    ...real,
    followExecutions: vi.fn(), // the event stream
  };
});

const run = (over: Partial<sched.Execution>): sched.Execution => ({
  id: 1,
  scheduleType: 'container_update',
  scheduleId: 7,
  environmentId: 1,
  entityName: 'web',
  triggeredBy: 'cron',
  triggeredAt: '2026-11-23T03:00:00Z',
  startedAt: '2026-11-23T03:00:00Z',
  completedAt: '2026-11-23T03:00:31Z',
  duration: 31000,
  status: 'success',
  errorMessage: null,
  details: null,
  logs: '',
  ...over,
});

const list: sched.Schedule[] = [
  {
    id: 7,
    type: 'container_update',
    name: 'Update container: web',
    entityName: 'web',
    description: 'Check for a newer image and update the container',
    environmentId: 1,
    environmentName: 'local',
    enabled: true,
    scheduleType: 'daily',
    cronExpression: '0 3 * * *',
    timezone: 'Europe/Berlin',
    nextRun: '2026-11-24T03:00:00+01:00',
    lastExecution: run({ status: 'skipped', errorMessage: 'blocked: the new image has 1 critical vulnerabilities (criteria: critical)' }),
    recentExecutions: [],
    isSystem: false,
    envHasScanning: true,
    vulnerabilityCriteria: 'critical',
  },
  {
    id: 3,
    type: 'git_stack_sync',
    name: 'Git sync: site',
    entityName: 'site',
    environmentId: 1,
    environmentName: 'local',
    enabled: false,
    scheduleType: 'custom',
    cronExpression: '*/15 * * * *',
    timezone: 'UTC',
    nextRun: null,
    lastExecution: null,
    recentExecutions: [],
    isSystem: false,
  },
  {
    id: 1,
    type: 'system_cleanup',
    name: 'Schedule execution cleanup',
    entityName: 'Schedule execution cleanup',
    environmentId: null,
    environmentName: null,
    enabled: true,
    scheduleType: 'daily',
    cronExpression: '0 3 * * *',
    timezone: 'UTC',
    nextRun: '2026-11-24T03:00:00Z',
    lastExecution: null,
    recentExecutions: [],
    isSystem: true,
  },
];

const executions = () => ({
  executions: [
    run({ id: 12, status: 'failed', triggeredBy: 'manual', errorMessage: 'Update rolled back: the new container exited with code 1 within the grace period', logs: '2026-11-23T03:00:00Z Pulling r/web@sha256:b\n', details: { rolledBack: true } }),
    run({ id: 11 }),
  ],
  total: 2,
  limit: 20,
  offset: 0,
});

let api: StubApi;
beforeEach(() => {
  queryClient.clear();
  session.session = { authenticated: false, authEnabled: false };
  api = stubApi({
    'GET /api/schedules': { schedules: list },
    'POST /api/schedules/container_update/7/run': { success: true, executionId: 9, execution: run({ id: 9, status: 'success' }) },
    'POST /api/schedules/container_update/7/toggle': { success: true, enabled: false },
    'POST /api/schedules/system/1/toggle': { success: true, enabled: false },
    'DELETE /api/schedules/git_stack_sync/3': { success: true },
    'GET /api/schedules/executions': executions(),
  });
});
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  vi.clearAllMocks();
});

const rowOf = (name: string) => screen.getByRole('row', { name: new RegExp(name) });

describe('SchedulesScreen', () => {
  it('reads the list again when the stream announces an execution', async () => {
    let announce: ((e: sched.Execution) => void) | undefined;
    vi.mocked(sched.followExecutions).mockImplementation(async (fn) => {
      announce = fn;
    });
    render(SchedulesScreen);
    await screen.findByRole('table');
    expect(api.called('GET /api/schedules')).toHaveLength(1);
    expect(announce).toBeTypeOf('function');
    announce?.(run({ id: 13, status: 'running' }));
    await waitFor(() => expect(api.called('GET /api/schedules')).toHaveLength(2));
  });

  it('lists every schedule with its cron in words, next and last run, and a switch', async () => {
    const { container } = render(SchedulesScreen);
    expect(screen.getByRole('heading', { level: 1, name: 'Schedules' })).toBeTruthy();
    await screen.findByRole('table');
    expect(screen.getAllByRole('row')).toHaveLength(4);
    const web = rowOf('Update container: web');
    expect(within(web).getByText('Every day at 03:00')).toBeTruthy();
    expect(within(web).getByText('0 3 * * *')).toBeTruthy();
    expect(within(web).getByText('Europe/Berlin')).toBeTruthy();
    expect(within(web).getByText('skipped').className).toContain('warn');
    expect(within(web).getByText(/blocked: the new image has 1 critical/)).toBeTruthy();
    expect(within(web).getByRole('link', { name: 'Update container: web' }).getAttribute('href')).toBe('/containers/web?tab=autoupdate');
    expect((within(web).getByRole('switch', { name: 'Enabled: Update container: web' }) as HTMLInputElement).checked).toBe(true);
    const git = rowOf('Git sync: site');
    expect(within(git).getByText('Every 15 minutes')).toBeTruthy();
    expect(within(git).getByText('Disabled')).toBeTruthy();
    expect(within(git).getByText('Never')).toBeTruthy();
    expect((within(git).getByRole('switch') as HTMLInputElement).checked).toBe(false);
    // System schedules cannot be deleted.
    const sys = rowOf('Schedule execution cleanup');
    expect(within(sys).queryByRole('button', { name: /Delete/ })).toBeNull();
    expect(within(web).getByRole('button', { name: 'Delete Update container: web' })).toBeTruthy();
    await expectNoSeriousAxeViolations(container);

    await fireEvent.input(screen.getByLabelText('Filter'), { target: { value: 'git' } });
    expect(screen.getAllByRole('row')).toHaveLength(2);
  });

  it('runs a schedule now and says how it ended', async () => {
    render(SchedulesScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Run now: Update container: web' }));
    await waitFor(() => expect(screen.getByRole('status').textContent).toContain('Update container: web: success'));
    expect(api.called('POST /api/schedules/container_update/7/run').map((c) => c.query)).toEqual([{ wait: 'true' }]);
    await waitFor(() => expect(api.called('GET /api/schedules')).toHaveLength(2));
  });

  it('switches a schedule off, system ones through their own endpoint', async () => {
    render(SchedulesScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('switch', { name: 'Enabled: Update container: web' }));
    await waitFor(() => expect(screen.getByRole('status').textContent).toContain('Update container: web disabled.'));
    expect(api.called('POST /api/schedules/container_update/7/toggle')).toHaveLength(1);
    await waitFor(() => expect((screen.getByRole('switch', { name: 'Enabled: Schedule execution cleanup' }) as HTMLInputElement).disabled).toBe(false));
    await fireEvent.click(screen.getByRole('switch', { name: 'Enabled: Schedule execution cleanup' }));
    await waitFor(() => expect(api.called('POST /api/schedules/system/1/toggle')).toHaveLength(1));
  });

  it('deletes after asking, and shows refusals', async () => {
    render(SchedulesScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Delete Git sync: site' }));
    const dialog = screen.getByRole('dialog', { name: 'Delete Git sync: site?' });
    expect(within(dialog).getByText(/The stack stays/)).toBeTruthy();
    api.routes['DELETE /api/schedules/git_stack_sync/3'] = () => {
      throw new ApiError(403, 'Permission denied');
    };
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Delete' }));
    expect((await screen.findByRole('alert')).textContent).toContain('Delete Git sync: site: Permission denied');
  });

  it('removes the deleted schedule from the list as it says so, before the list is read again', async () => {
    render(SchedulesScreen);
    await screen.findByRole('table');
    let answer: (v: unknown) => void = () => {};
    api.routes['GET /api/schedules'] = () => new Promise((r) => (answer = r));
    await fireEvent.click(screen.getByRole('button', { name: 'Delete Git sync: site' }));
    const dialog = screen.getByRole('dialog', { name: 'Delete Git sync: site?' });
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Delete' }));
    await waitFor(() => expect(screen.getByRole('status').textContent).toContain('Git sync: site deleted.'));
    expect(screen.queryByRole('button', { name: 'Delete Git sync: site' })).toBeNull();
    expect(screen.getByRole('button', { name: 'Delete Update container: web' })).toBeTruthy();
    answer({ schedules: [] });
  });

  it('shows the execution log of a schedule', async () => {
    const { container } = render(SchedulesScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Execution log of Update container: web' }));
    const dialog = screen.getByRole('dialog', { name: 'Execution log: Update container: web' });
    expect(await within(dialog).findByText(/Update rolled back: the new container exited/)).toBeTruthy();
    expect(api.called('GET /api/schedules/executions').map((c) => c.query)).toEqual([{ scheduleType: 'container_update', scheduleId: '7', limit: '20' }]);
    expect(within(dialog).getByLabelText('Log of run 12').textContent).toContain('Pulling r/web@sha256:b');
    expect(within(dialog).getByText('2 of 2 runs, newest first')).toBeTruthy();
    await expectNoSeriousAxeViolations(container);
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Close' }));
    expect(screen.queryByRole('dialog')).toBeNull();
  });

  it('shows an empty state and the list error', async () => {
    api.routes['GET /api/schedules'] = { schedules: [] };
    render(SchedulesScreen);
    expect(await screen.findByText('No schedules yet.')).toBeTruthy();
    cleanup();
    queryClient.clear();
    api.routes['GET /api/schedules'] = () => {
      throw new ApiError(403, 'Permission denied');
    };
    render(SchedulesScreen);
    expect((await screen.findByRole('alert')).textContent).toContain('Schedules could not be listed: Permission denied');
  });
});
