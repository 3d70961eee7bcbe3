// The containers list follows the engine's events (GET /api/events): a
// container created, started, stopped or removed outside Berth shows within
// about a second, and a burst of events (a stack coming up, a bulk action)
// is one refetch.
import { ApiError } from '../../lib/api';
import { followEvents } from '../../lib/api-infra';

/** Events of a container that do not change the list (its processes, files, terminal). */
const QUIET = /^container-(exec_|attach|detach|resize|top|archive-path|extract-to-dir|export|copy|commit)/;

/** Whether an engine event (named like container-start) changes what the list shows. */
export function changesList(event: string): boolean {
  return event.startsWith('container-') && !QUIET.test(event);
}

export interface WatchOptions {
  /** Quiet time after the last event before the refetch. */
  debounceMs?: number;
  /** Longest wait for a refetch while events keep coming. */
  maxWaitMs?: number;
  /** Pause before following again after the stream ended or failed. */
  retryMs?: number;
}

/**
 * Follows env's engine events until signal aborts and calls onChange once
 * per burst of events that change the list (debounced), and once when the
 * stream connects again after a break (events may have been missed). A
 * refusal (4xx) ends the watch: it does not heal by retrying.
 */
export async function watchContainerEvents(env: number, onChange: () => void, signal: AbortSignal, opts: WatchOptions = {}): Promise<void> {
  const debounceMs = opts.debounceMs ?? 400;
  const maxWaitMs = opts.maxWaitMs ?? 1500;
  const retryMs = opts.retryMs ?? 3000;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let first = 0; // when the pending burst began
  const fire = () => {
    timer = undefined;
    first = 0;
    if (!signal.aborted) onChange();
  };
  const soon = () => {
    const now = Date.now();
    if (!first) first = now;
    clearTimeout(timer);
    timer = setTimeout(fire, Math.max(0, Math.min(debounceMs, first + maxWaitMs - now)));
  };
  signal.addEventListener('abort', () => clearTimeout(timer), { once: true });
  let connectedBefore = false;
  while (!signal.aborted) {
    try {
      await followEvents(
        env,
        (e) => {
          if (changesList(e.event)) soon();
        },
        (s) => {
          if (!s.connected) return;
          if (connectedBefore) soon(); // what happened during the break
          connectedBefore = true;
        },
        signal,
      );
    } catch (e) {
      if (signal.aborted) return;
      if (e instanceof ApiError && e.status >= 400 && e.status < 500) return;
    }
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, retryMs);
      signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
    });
  }
}
