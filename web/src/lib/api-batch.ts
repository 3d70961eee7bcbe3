// POST /api/batch: one operation over several containers, images, volumes,
// networks or stacks, run by the server as a job (the reference's
// {operation, entityType, items, options} → {jobId}); the job's events say
// each item's progress and its final "complete" event each item's outcome.
// Shapes follow server/internal/api/batch.go.
import { client, unwrap } from './client';
import { dataOf, followJob } from './sse';

export type BatchEntity = 'containers' | 'images' | 'volumes' | 'networks' | 'stacks';

export interface BatchItem {
  /** The engine id (a stack's or volume's is its name). */
  id: string;
  /** Shown in the outcome. */
  name: string;
}

export interface BatchRequest {
  operation: string;
  entityType: BatchEntity;
  items: BatchItem[];
  options?: { force?: boolean; removeVolumes?: boolean };
}

export interface BatchItemResult {
  id: string;
  name: string;
  status: 'success' | 'error';
  error?: string;
  details?: string;
}

export interface BatchAnswer {
  type: 'complete';
  summary: { total: number; success: number; failed: number };
  results: BatchItemResult[];
}

/** A progress event of a batch job: an item is processing or finished. */
export interface BatchProgress {
  type: 'progress';
  id: string;
  name: string;
  status: 'processing' | 'success' | 'error';
  error?: string;
  current: number;
  total: number;
}

/**
 * Runs a batch and follows its job to the end: onItem is called when an
 * item finishes (done counts the finished ones). Resolves with each item's
 * outcome; rejects when the batch is refused (ApiError) or the job ends
 * without its summary.
 */
export async function runBatch(
  env: number,
  req: BatchRequest,
  onItem?: (p: BatchProgress, done: number) => void,
  signal?: AbortSignal,
): Promise<BatchAnswer> {
  // Not Accept: application/json, which would wait for the whole batch: the job's id comes at once.
  const started = await unwrap(client.POST('/api/batch', { params: { query: { env } }, body: req, headers: { Accept: '*/*' } }));
  const jobId = started && 'jobId' in started ? started.jobId : '';
  if (!jobId) throw new Error('The batch did not start a job');
  let done = 0;
  let answer: BatchAnswer | undefined;
  let failure = '';
  await followJob(
    jobId,
    (e) => {
      const d = dataOf<Record<string, unknown>>(e);
      if (!d) return;
      if (e.event === 'progress' && d.status !== 'processing') {
        done++;
        onItem?.(d as unknown as BatchProgress, done);
      } else if (e.event === 'complete' && Array.isArray(d.results)) {
        answer = d as unknown as BatchAnswer;
      } else if (typeof d.error === 'string') {
        failure = d.error;
      }
    },
    signal,
  );
  if (!answer) throw new Error(failure || 'The batch ended without its results');
  return answer;
}
