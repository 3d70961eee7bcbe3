// The live stream of the Activity screen (GET /api/activity/events): the
// engine events Berth collects from environments whose collectActivity is
// on, as it stores them. The page (GET /api/activity) and clearing (DELETE
// /api/activity) go through the typed client.
import type { Query } from './api';
import { dataOf, stream } from './sse';

/** One collected engine event. */
export interface ActivityEvent {
  id: number;
  environmentId: number;
  environmentName: string;
  /** container, image, volume or network. */
  type: string;
  /** start, die, create, destroy, pull, health_status… */
  action: string;
  actorId: string;
  actorName: string;
  containerId?: string;
  containerName?: string;
  /** RFC 3339, UTC. */
  timestamp: string;
}

export interface ActivityFilter {
  env?: number;
  /** A container's name, or an id prefix of at least 12 characters. */
  container?: string;
  type?: string;
  action?: string;
  since?: string;
  until?: string;
}

function query(f: ActivityFilter): Query {
  return { env: f.env, container: f.container, type: f.type, action: f.action, since: f.since, until: f.until };
}

/**
 * Follows GET /api/activity/events: onEvent gets each event the filter
 * selects as Berth stores it, until signal aborts; onState tells whether the
 * stream is connected. When the stream breaks it reconnects after a pause.
 */
export async function followActivity(
  f: ActivityFilter,
  onEvent: (e: ActivityEvent) => void,
  onState: (connected: boolean) => void,
  signal: AbortSignal,
): Promise<void> {
  const q = query(f);
  delete q.since;
  delete q.until;
  while (!signal.aborted) {
    try {
      await stream(
        'GET',
        '/api/activity/events',
        (ev) => {
          if (ev.event === 'connected') onState(true);
          const e = ev.event === 'activity' ? dataOf<ActivityEvent>(ev) : undefined;
          if (e) onEvent(e);
        },
        { query: q, signal },
      );
    } catch {
      // offline, or aborted: the loop's condition tells which
    }
    onState(false);
    if (signal.aborted) return;
    await new Promise((resolve) => setTimeout(resolve, 5_000));
  }
}
