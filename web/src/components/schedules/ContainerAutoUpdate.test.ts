import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../../lib/api';
import type * as sched from '../../lib/api-schedules';
import { queryClient } from '../../lib/query';
import { stubApi, type StubApi } from '../../test-api';
import { expectNoSeriousAxeViolations } from '../../test-axe';
import ContainerAutoUpdate from './ContainerAutoUpdate.svelte';

const off: sched.AutoUpdate = { enabled: false, scheduleType: 'daily', cronExpression: '0 3 * * *', vulnerabilityCriteria: 'never' };
const on: sched.AutoUpdate = {
  id: 4,
  containerName: 'web',
  environmentId: 1,
  enabled: true,
  scheduleType: 'weekly',
  cronExpression: '0 4 * * 0',
  vulnerabilityCriteria: 'critical',
};
const schedule: sched.Schedule = {
  id: 4,
  type: 'container_update',
  name: 'Update container: web',
  entityName: 'web',
  environmentId: 1,
  environmentName: 'local',
  enabled: true,
  scheduleType: 'weekly',
  cronExpression: '0 4 * * 0',
  timezone: 'UTC',
  nextRun: '2026-11-29T04:00:00Z',
  lastExecution: {
    id: 2, scheduleType: 'container_update', scheduleId: 4, environmentId: 1, entityName: 'web', triggeredBy: 'cron',
    triggeredAt: '2026-11-22T04:00:00Z', startedAt: '2026-11-22T04:00:00Z', completedAt: '2026-11-22T04:00:05Z',
    duration: 5000, status: 'failed', errorMessage: 'Update rolled back: the new container exited with code 1 within the grace period',
    details: null, logs: '',
  },
  recentExecutions: [],
  isSystem: false,
  envHasScanning: false,
  vulnerabilityCriteria: 'critical',
};

let api: StubApi;
beforeEach(() => {
  queryClient.clear();
  api = stubApi({
    'GET /api/auto-update/web': { ...off },
    'POST /api/auto-update/web': { ...on },
    'GET /api/schedules': { schedules: [] },
    'POST /api/schedules/container_update/4/run': { success: true, executionId: 3 },
  });
});
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  vi.clearAllMocks();
});

describe('ContainerAutoUpdate', () => {
  it('turns auto-update on with a schedule and criteria', async () => {
    const { container } = render(ContainerAutoUpdate, { env: 1, name: 'web' });
    const box = (await screen.findByRole('checkbox', { name: 'Update this container automatically' })) as HTMLInputElement;
    expect(api.called('GET /api/auto-update/web').map((c) => c.query)).toEqual([{ env: '1' }]);
    expect(box.checked).toBe(false);
    expect((screen.getByRole('button', { name: 'Save' }) as HTMLButtonElement).disabled).toBe(true);
    await fireEvent.click(box);
    const cron = screen.getByLabelText(/^Schedule/) as HTMLInputElement;
    expect(cron.value).toBe('0 3 * * *');
    expect(screen.getByText('Every day at 03:00', { selector: 'span' })).toBeTruthy();
    await fireEvent.click(screen.getByRole('button', { name: 'Every Sunday at 04:00' }));
    expect(cron.value).toBe('0 4 * * 0');
    expect(screen.getByText('Every Sunday at 04:00', { selector: 'span' })).toBeTruthy();
    await fireEvent.change(screen.getByLabelText('Vulnerabilities that block an update'), { target: { value: 'critical' } });
    await expectNoSeriousAxeViolations(container);

    api.routes['GET /api/auto-update/web'] = { ...on };
    api.routes['GET /api/schedules'] = { schedules: [schedule] };
    await fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() =>
      expect(api.called('POST /api/auto-update/web').map((c) => [c.query, c.body])).toEqual([
        [{ env: '1' }, { enabled: true, cronExpression: '0 4 * * 0', vulnerabilityCriteria: 'critical' }],
      ]),
    );
    await waitFor(() => expect(screen.getByRole('status').textContent).toContain('Auto-update saved: Every Sunday at 04:00.'));
    // Its schedule: next and last run, and the note that this environment does not scan.
    expect(await screen.findByText(/Update rolled back: the new container exited/)).toBeTruthy();
    expect(screen.getByText(/Scanning is off in this environment/)).toBeTruthy();
    expect(screen.getByRole('link', { name: 'All schedules' }).getAttribute('href')).toBe('/schedules');
  });

  it("shows the server's refusal of a cron expression", async () => {
    render(ContainerAutoUpdate, { env: 1, name: 'web' });
    await fireEvent.click(await screen.findByRole('checkbox', { name: 'Update this container automatically' }));
    await fireEvent.input(screen.getByLabelText(/^Schedule/), { target: { value: '61 * * * *' } });
    api.routes['POST /api/auto-update/web'] = () => {
      throw new ApiError(400, 'Invalid cron expression');
    };
    await fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    expect((await screen.findByRole('alert')).textContent).toBe('Invalid cron expression');
    expect(screen.getByLabelText(/^Schedule/).getAttribute('aria-invalid')).toBe('true');
  });

  it('turning it off deletes the configuration; update now runs the schedule', async () => {
    api.routes['GET /api/auto-update/web'] = { ...on };
    api.routes['GET /api/schedules'] = { schedules: [schedule] };
    render(ContainerAutoUpdate, { env: 1, name: 'web' });
    await fireEvent.click(await screen.findByRole('button', { name: 'Update now' }));
    await waitFor(() => expect(screen.getByRole('status').textContent).toContain('Update started.'));
    expect(api.called('POST /api/schedules/container_update/4/run').map((c) => c.query)).toEqual([{ wait: 'true' }]);

    api.routes['POST /api/auto-update/web'] = { success: true, deleted: true };
    await waitFor(() => expect((screen.getByRole('checkbox', { name: 'Update this container automatically' }) as HTMLInputElement).checked).toBe(true));
    await fireEvent.click(screen.getByRole('checkbox', { name: 'Update this container automatically' }));
    await fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(api.called('POST /api/auto-update/web').map((c) => c.body)).toEqual([{ enabled: false }]));
    await waitFor(() => expect(screen.getByRole('status').textContent).toContain('Auto-update turned off.'));
  });
});
