// How the Schedules screen and the auto-update settings show times, statuses
// and schedule types.
import type { Execution, ScheduleType } from '../../lib/api-schedules';

/** A time in the zone tz (an IANA name; the browser's own when unknown). */
export function formatTime(iso: string | null | undefined, tz?: string): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const opts: Intl.DateTimeFormatOptions = { dateStyle: 'medium', timeStyle: 'short' };
  try {
    return d.toLocaleString(undefined, tz ? { ...opts, timeZone: tz } : opts);
  } catch {
    return d.toLocaleString(undefined, opts);
  }
}

/** A duration in milliseconds, short. */
export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—';
  if (ms < 1000) return `${ms} ms`;
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  return `${m} min ${s % 60} s`;
}

/** The badge class of an execution status. */
export function statusClass(status: Execution['status']): string {
  switch (status) {
    case 'success':
      return 'ok';
    case 'failed':
      return 'bad';
    case 'skipped':
      return 'warn';
  }
  return '';
}

export const typeLabels: Record<ScheduleType, string> = {
  container_update: 'Container update',
  git_stack_sync: 'Git sync',
  env_update_check: 'Update check',
  image_prune: 'Image prune',
  system_cleanup: 'System',
  backup: 'Backup',
  backup_check: 'Backup check',
  backup_prune: 'Backup prune',
};

export const criteriaLabels: Record<string, string> = {
  never: 'Never block',
  any: 'Block on any vulnerability',
  critical_high: 'Block on critical or high',
  critical: 'Block on critical',
  more_than_current: 'Block on more than the running image',
};
