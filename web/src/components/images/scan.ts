// A scan job from start to results: POST /api/images/scan, then its events
// ({stage, message, progress}) until {stage: complete, results} or
// {stage: error, error}.
import { ApiError } from '../../lib/api';
import type * as images from '../../lib/api-images';
import { client, unwrap } from '../../lib/client';
import { dataOf, followJob } from '../../lib/sse';

export interface ScanStep {
  stage: string;
  message: string;
  /** 0..100, null while unknown. */
  progress: number | null;
}

interface ScanEvent {
  stage?: string;
  message?: string;
  progress?: number;
  error?: string;
  result?: images.ScanResult;
  results?: images.ScanResult[];
}

/** Runs a scan and resolves with every scanner's result; rejects with the job's error. */
export async function runScan(
  env: number,
  image: string,
  scanner: images.ScannerName | '',
  onStep: (s: ScanStep) => void,
  signal?: AbortSignal,
): Promise<images.ScanResult[]> {
  onStep({ stage: 'starting', message: `Starting the scan of ${image}`, progress: null });
  // Accept without application/json: the server starts a job ({jobId}) rather than answering its end.
  const { jobId } = (await unwrap(
    client.POST('/api/images/scan', {
      params: { query: { env } },
      body: scanner ? { imageName: image, scanner } : { imageName: image },
      headers: { Accept: '*/*' },
    }),
  )) as { jobId?: string };
  if (!jobId) throw new ApiError(0, 'The server did not start a scan job');
  let results: images.ScanResult[] | null = null;
  let failure: string | null = null;
  await followJob(
    jobId,
    (ev) => {
      const d = dataOf<ScanEvent>(ev);
      if (!d) return;
      if (d.stage === 'complete') {
        results = d.results ?? (d.result ? [d.result] : []);
        onStep({ stage: 'complete', message: d.message ?? 'Scan complete', progress: 100 });
      } else if (d.stage === 'error') {
        failure = d.error ? `${d.message ?? 'Scan failed'}: ${d.error}` : (d.message ?? 'Scan failed');
      } else {
        onStep({ stage: d.stage ?? '', message: d.message ?? d.stage ?? '', progress: typeof d.progress === 'number' ? d.progress : null });
      }
    },
    signal,
  );
  if (failure) throw new ApiError(0, failure);
  if (!results) throw new ApiError(0, 'The scan ended without a result');
  return results;
}

/** The newest stored result of an image (id or name), of one scanner or any; never scans. */
export async function storedScan(env: number, image: string, scanner?: images.ScannerName, signal?: AbortSignal): Promise<images.ScanResult | null> {
  const res = (await unwrap(client.GET('/api/images/scan', { params: { query: { env, image, scanner } }, signal }))) as {
    found?: boolean;
    result?: images.ScanResult;
  };
  return res?.found && res.result ? res.result : null;
}
