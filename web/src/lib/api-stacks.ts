// Stacks API (interface spec "Stacks", COMPAT.md "Stacks"): the list, compose
// file, env variables, lifecycle, adoption of external compose projects, and
// the deploys that answer with their job's event stream.
import { ApiError } from './api';
import { client, unwrap } from './client';
import { dataOf, followJob, stream, type SSEvent } from './sse';

export type StackStatus = 'running' | 'stopped' | 'partial' | 'created' | string;
export type StackSource = 'internal' | 'git' | 'external' | string;

export interface StackPort {
  publicPort: number;
  privatePort: number;
  type: string;
  display: string;
}

export interface StackContainer {
  id: string;
  name: string;
  service: string;
  state: string;
  status: string;
  health?: string;
  image: string;
  ports?: StackPort[];
  networks?: { name: string; ipAddress: string }[];
  volumeCount?: number;
  restartCount?: number;
  created?: number;
  labels?: Record<string, string>;
}

export interface StackEntry {
  name: string;
  containers: string[];
  containerDetails: StackContainer[];
  status: StackStatus;
  sourceType: StackSource;
  environmentId?: number;
  /** An external stack Berth has adopted (false: a compose project Berth does not manage). */
  adopted?: boolean;
  workingDir?: string;
  configFiles?: string[];
}

export interface ComposeFile {
  content: string;
  stackDir: string;
  composePath: string;
  envPath: string;
  suggestedEnvPath?: string;
  sourceType?: StackSource;
}

export interface StackVariable {
  key: string;
  value: string;
  isSecret: boolean;
}

/** A compose project on the engine that Berth neither created nor adopted (POST /api/stacks/scan). */
export interface DiscoveredStack {
  name: string;
  status: StackStatus;
  containers: number;
  workingDir: string;
  configFiles: string[];
  /** Berth can read its compose file. */
  adoptable: boolean;
}

/** The final payload of a deploy (create, deploy, save-and-redeploy). */
export interface DeployResult {
  success: boolean;
  started?: boolean;
  output?: string;
  error?: string;
}

export type StackAction = 'start' | 'stop' | 'restart' | 'down';

const path = (name: string, rest = '') => `/api/stacks/${encodeURIComponent(name)}${rest}`;

// ---------------------------------------------------------------- streamed deploys

/** Progress of a streamed operation: each compose output line. */
export type OnLine = (line: string) => void;

function isFinal(d: unknown): d is DeployResult {
  return !!d && typeof d === 'object' && 'success' in d;
}

/** Hands a job event to onLine, or returns the final payload when it is the last one. */
function readEvent(e: SSEvent, onLine: OnLine): DeployResult | undefined {
  const d = dataOf<Record<string, unknown>>(e);
  if (isFinal(d)) return d;
  if (d && typeof d.message === 'string') onLine(d.message);
  else if (d && typeof d.status === 'string') onLine(d.status);
  else if (!d && e.data) onLine(e.data);
  return undefined;
}

/**
 * Runs an operation that answers with its job's event stream and resolves
 * with the job's final payload. When the connection drops before the end,
 * it follows the job again (X-Job-Id) and skips the events already seen.
 */
export async function runStreamed(
  method: string,
  url: string,
  opts: { query?: Record<string, string | number | boolean>; body?: unknown; signal?: AbortSignal },
  onLine: OnLine,
): Promise<DeployResult> {
  let final: DeployResult | undefined;
  let jobId = '';
  let seen = 0;
  const onEvent = (e: SSEvent) => {
    seen++;
    final = readEvent(e, onLine) ?? final;
  };
  try {
    await stream(method, url, onEvent, { ...opts, onOpen: (res) => (jobId = res.headers.get('X-Job-Id') ?? '') });
  } catch (e) {
    if (e instanceof DOMException && e.name === 'AbortError') throw e;
    if (e instanceof ApiError && e.status !== 0) throw e; // refused before the job started
    if (!jobId) throw e;
  }
  if (!final && jobId) {
    let n = 0;
    const skip = seen;
    await followJob(
      jobId,
      (e) => {
        if (n++ < skip) return;
        final = readEvent(e, onLine) ?? final;
      },
      opts.signal,
    );
  }
  if (!final) throw new ApiError(0, 'The operation ended without a result');
  return final;
}

/** Brings a stack up again from its files, streaming compose's output. */
export function deployStack(env: number, name: string, onLine: OnLine, signal?: AbortSignal): Promise<DeployResult> {
  return runStreamed('POST', path(name, '/deploy'), { query: { env }, signal }, onLine);
}

/** Saves the compose file and recreates the stack's containers, streaming compose's output. */
export function saveComposeAndRedeploy(env: number, name: string, content: string, onLine: OnLine, signal?: AbortSignal): Promise<DeployResult> {
  return runStreamed('PUT', path(name, '/compose'), { query: { env }, body: { content, restart: true }, signal }, onLine);
}

export interface DeleteOptions {
  /** Delete even when it runs (its containers are torn down first). */
  force: boolean;
  /** Also remove the stack's named volumes. */
  removeVolumes: boolean;
}

export function isActive(status: StackStatus): boolean {
  return status === 'running' || status === 'partial';
}

/** Tone of a stack status badge (app.css .badge.ok/.warn/.bad). */
export function statusTone(status: StackStatus): string {
  return status === 'running' ? 'ok' : status === 'partial' ? 'warn' : '';
}

// ---------------------------------------------------------------- editor helpers (issue 15)

/** The compose file path of a location typed in the editor: a directory gets compose.yaml. */
export function composePathOf(location: string): string {
  const l = location.trim().replace(/\/+$/, '');
  if (!l) return '';
  return /\.ya?ml$/i.test(l) ? l : `${l}/compose.yaml`;
}

/** Runs a stack lifecycle action through the typed client (both stack screens use it). */
export async function runStackAction(name: string, env: number | null, a: StackAction): Promise<{ success: boolean; output?: string } | null> {
  const p = { params: { path: { name }, query: { env: env ?? undefined } } };
  const r =
    a === 'start'
      ? client.POST('/api/stacks/{name}/start', p)
      : a === 'stop'
        ? client.POST('/api/stacks/{name}/stop', p)
        : a === 'restart'
          ? client.POST('/api/stacks/{name}/restart', p)
          : client.POST('/api/stacks/{name}/down', p);
  return (await unwrap(r)) as { success: boolean; output?: string } | null;
}
