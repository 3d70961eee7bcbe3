// Types of the Schedules screen and of a container's auto-update settings:
// the schedules list (spec "Schedule info"), executions (COMPAT.md), run
// results, and the auto-update configuration of a container (spec
// "Auto-update configuration" and its state table); the screens read and
// change them through the typed client. The types list only what the console
// reads. followExecutions follows the executions' event stream.
import { dataOf, stream } from './sse';

export type ScheduleType =
  | 'container_update' | 'git_stack_sync' | 'env_update_check' | 'image_prune' | 'system_cleanup'
  | 'backup' | 'backup_check' | 'backup_prune';
export type VulnerabilityCriteria = 'never' | 'any' | 'critical_high' | 'critical' | 'more_than_current';

/** One run of a schedule. */
export interface Execution {
  id: number;
  scheduleType: ScheduleType;
  scheduleId: number;
  environmentId: number | null;
  entityName: string;
  triggeredBy: 'cron' | 'manual' | 'webhook' | string;
  triggeredAt: string;
  startedAt: string | null;
  completedAt: string | null;
  /** Milliseconds. */
  duration: number | null;
  status: 'running' | 'success' | 'failed' | 'skipped' | string;
  errorMessage: string | null;
  details: Record<string, unknown> | null;
  logs: string;
}

/** A schedules list entry. */
export interface Schedule {
  id: number;
  type: ScheduleType;
  name: string;
  entityName: string;
  description?: string;
  environmentId: number | null;
  environmentName: string | null;
  enabled: boolean;
  scheduleType: 'daily' | 'weekly' | 'custom' | string;
  cronExpression: string | null;
  /** The zone the cron expression is read in (IANA name, or the server's). */
  timezone?: string;
  /** ISO 8601 with the zone's offset; null when disabled. */
  nextRun: string | null;
  lastExecution: Execution | null;
  recentExecutions: Execution[];
  isSystem: boolean;
  envHasScanning?: boolean;
  vulnerabilityCriteria?: VulnerabilityCriteria | null;
  autoUpdate?: boolean;
  pruneMode?: string;
}

export interface ExecutionPage {
  executions: Execution[];
  total: number;
  limit: number;
  offset: number;
}

export interface RunResult {
  success: boolean;
  message?: string;
  executionId: number;
  /** With wait: the finished execution. */
  execution?: Execution;
}

/**
 * Follows GET /api/schedules/stream: onExecution gets each execution (without
 * its logs) that starts or ends, on any Berth server, until signal aborts.
 * When the stream breaks it reconnects after a pause.
 */
export async function followExecutions(onExecution: (e: Execution) => void, signal: AbortSignal): Promise<void> {
  while (!signal.aborted) {
    try {
      await stream(
        'GET',
        '/api/schedules/stream',
        (ev) => {
          const e = ev.event === 'execution' ? dataOf<Execution>(ev) : undefined;
          if (e) onExecution(e);
        },
        { signal },
      );
    } catch {
      // offline, or aborted: the loop's condition tells which
    }
    if (signal.aborted) return;
    await new Promise((resolve) => setTimeout(resolve, 5_000));
  }
}

// ---------------------------------------------------------------- auto-update

/** A container's auto-update configuration; without one (enabled false) the defaults. */
export interface AutoUpdate {
  id?: number;
  containerName?: string;
  environmentId?: number | null;
  enabled: boolean;
  scheduleType: string;
  cronExpression: string;
  vulnerabilityCriteria: VulnerabilityCriteria;
  createdAt?: string;
  updatedAt?: string;
}

export interface AutoUpdateChange {
  enabled: boolean;
  cronExpression?: string;
  vulnerabilityCriteria?: VulnerabilityCriteria;
}

