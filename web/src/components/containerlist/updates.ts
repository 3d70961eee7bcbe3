// Updating containers to their newest images from the list: one job of
// POST /api/containers/batch-update-stream (the auto-update's recreate with
// its health-gated rollback, one container after the other), read as it
// runs: each container's outcome as it finishes.
import { dataOf, stream } from '../../lib/sse';

/** One container's outcome (autoupdate.BatchResult). */
export interface UpdateResult {
  container: string;
  name?: string;
  status: 'updated' | 'up_to_date' | 'skipped' | 'failed' | string;
  success: boolean;
  message?: string;
  error?: string;
}

/** What an outcome says in the list. */
export function updateWords(r: UpdateResult): { status: 'done' | 'failed' | 'skipped'; message: string } {
  switch (r.status) {
    case 'updated':
      return { status: 'done', message: 'updated' };
    case 'up_to_date':
      return { status: 'done', message: 'already up to date' };
    case 'skipped':
      return { status: 'skipped', message: r.message ?? '' };
    default:
      return { status: 'failed', message: r.error || r.message || 'failed' };
  }
}

/**
 * Updates the containers (ids) of env; onResult is called as each one
 * finishes (done counts them). Resolves with every outcome; rejects when the
 * batch is refused (an ApiError with the server's message) or the job ends
 * without its results.
 */
export async function runUpdates(
  env: number,
  ids: string[],
  onResult?: (r: UpdateResult, done: number) => void,
  signal?: AbortSignal,
): Promise<UpdateResult[]> {
  let done = 0;
  let results: UpdateResult[] | undefined;
  let failure = '';
  // POST …/batch-update answers only when every container is done: its
  // stream variant tells each one's outcome as it finishes.
  await stream(
    'POST',
    '/api/containers/batch-update-stream',
    (e) => {
      const d = dataOf<Record<string, unknown>>(e);
      if (!d) return;
      if (e.event === 'result' && d.result) {
        done++;
        onResult?.(d.result as UpdateResult, done);
      } else if (e.event === 'complete' && Array.isArray(d.results)) {
        results = d.results as UpdateResult[];
      } else if (typeof d.error === 'string') {
        failure = d.error;
      }
    },
    { query: { env }, body: { containerIds: ids }, signal },
  );
  if (!results) throw new Error(failure || 'The update ended without its results');
  return results;
}
