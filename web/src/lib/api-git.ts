// Git (COMPAT.md "Git"): what the typed client (client.ts) does not do —
// following a git job's or deploy's event stream — and small helpers. The
// reads and changes of credentials, repositories and git stacks go through
// the typed client; their types are the generated schema's (Schema<'api.git…'>).
import { runStreamed, type DeployResult, type OnLine } from './api-stacks';
import type { Schema } from './client';
import { dataOf, followJob } from './sse';

export type AuthType = 'none' | 'password' | 'ssh';

/** A git stack as the API answers it. */
export type GitStack = Schema<'api.gitStackJSON'>;

/** The final payload of a git deploy or sync job. */
export interface GitDeployResult extends DeployResult {
  deployed?: boolean;
  commit?: string;
  message?: string;
}

/** Follows a git job to its end, handing each output line to onLine. */
export async function followGitJob(jobId: string, onLine: OnLine, signal?: AbortSignal): Promise<GitDeployResult> {
  let final: GitDeployResult | undefined;
  await followJob(
    jobId,
    (e) => {
      const d = dataOf<Record<string, unknown>>(e);
      if (d && 'success' in d) final = d as unknown as GitDeployResult;
      else if (d && typeof d.message === 'string') onLine(d.message);
    },
    signal,
  );
  if (!final) throw new Error('The job ended without a result');
  return final;
}

/** The absolute webhook URL of a path the API gives (webhookPath). */
export function webhookUrl(webhookPath: string, origin = location.origin): string {
  return origin + webhookPath;
}

/** A random webhook secret (hex, 32 bytes). */
export function newSecret(): string {
  const b = new Uint8Array(32);
  crypto.getRandomValues(b);
  return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
}

/** Deploys a git stack, streaming its progress lines, and resolves with the final payload. */
export function deployGitStackStream(id: number, onLine: OnLine, signal?: AbortSignal): Promise<GitDeployResult> {
  return runStreamed('POST', `/api/git/stacks/${id}/deploy-stream`, { signal }, onLine) as Promise<GitDeployResult>;
}

