import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../../lib/api';
import * as sched from '../../lib/api-schedules';
import { expectNoSeriousAxeViolations } from '../../test-axe';
import ContainerAutoUpdate from './ContainerAutoUpdate.svelte';

vi.mock('../../lib/api-schedules', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../lib/api-schedules')>();
  return { ...real, getAutoUpdate: vi.fn(), saveAutoUpdate: vi.fn(), listSchedules: vi.fn(), runSchedule: vi.fn(), listExecutions: vi.fn() };
});

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

beforeEach(() => {
  vi.mocked(sched.getAutoUpdate).mockResolvedValue({ ...off });
  vi.mocked(sched.saveAutoUpdate).mockResolvedValue({ ...on });
  vi.mocked(sched.listSchedules).mockResolvedValue([]);
  vi.mocked(sched.runSchedule).mockResolvedValue({ success: true, executionId: 3 });
});
afterEach(() => {
  cleanup();
  vi.clearAllMocks();
});

describe('ContainerAutoUpdate', () => {
  it('turns auto-update on with a schedule and criteria', async () => {
    const { container } = render(ContainerAutoUpdate, { env: 1, name: 'web' });
    const box = (await screen.findByRole('checkbox', { name: 'Update this container automatically' })) as HTMLInputElement;
    expect(sched.getAutoUpdate).toHaveBeenCalledWith(1, 'web');
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

    vi.mocked(sched.getAutoUpdate).mockResolvedValueOnce({ ...on });
    vi.mocked(sched.listSchedules).mockResolvedValueOnce([schedule]);
    await fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    expect(sched.saveAutoUpdate).toHaveBeenCalledWith(1, 'web', { enabled: true, cronExpression: '0 4 * * 0', vulnerabilityCriteria: 'critical' });
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
    vi.mocked(sched.saveAutoUpdate).mockRejectedValueOnce(new ApiError(400, 'Invalid cron expression'));
    await fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    expect((await screen.findByRole('alert')).textContent).toBe('Invalid cron expression');
    expect(screen.getByLabelText(/^Schedule/).getAttribute('aria-invalid')).toBe('true');
  });

  it('turning it off deletes the configuration; update now runs the schedule', async () => {
    vi.mocked(sched.getAutoUpdate).mockResolvedValue({ ...on });
    vi.mocked(sched.listSchedules).mockResolvedValue([schedule]);
    render(ContainerAutoUpdate, { env: 1, name: 'web' });
    await fireEvent.click(await screen.findByRole('button', { name: 'Update now' }));
    expect(sched.runSchedule).toHaveBeenCalledWith('container_update', 4, true);
    await waitFor(() => expect(screen.getByRole('status').textContent).toContain('Update started.'));

    vi.mocked(sched.saveAutoUpdate).mockResolvedValueOnce({ success: true, deleted: true });
    await fireEvent.click(screen.getByRole('checkbox', { name: 'Update this container automatically' }));
    await fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    expect(sched.saveAutoUpdate).toHaveBeenCalledWith(1, 'web', { enabled: false });
    await waitFor(() => expect(screen.getByRole('status').textContent).toContain('Auto-update turned off.'));
  });
});
