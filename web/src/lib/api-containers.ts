// What of the containers the typed client (client.ts) does not serve: the log
// and stats streams (SSE), the exec session's WebSocket address, and shapes
// the screens share. Shapes follow server/internal/api/containers.go and the
// interface spec.
import { buildUrl, type ContainerInspect } from './api';
import { dataOf, stream } from './sse';

const path = (id: string) => `/api/containers/${encodeURIComponent(id)}`;

/** The inspection document with the parts the detail screen reads besides api.ContainerInspect's. */
export interface ContainerDetails extends ContainerInspect {
  Config?: ContainerInspect['Config'] & { Env?: string[] | null; WorkingDir?: string; User?: string; Tty?: boolean };
  HostConfig?: {
    RestartPolicy?: { Name?: string; MaximumRetryCount?: number };
    Memory?: number;
    NanoCpus?: number;
    NetworkMode?: string;
    Privileged?: boolean;
  };
}

/** A statistics snapshot (GET /api/containers/{id}/stats). */
export interface Snapshot {
  cpuPercent: number;
  memoryUsage: number;
  memoryRaw?: number;
  memoryCache?: number;
  memoryLimit: number;
  memoryPercent: number;
  networkRx: number;
  networkTx: number;
  blockRead: number;
  blockWrite: number;
  /** Unix milliseconds. */
  timestamp: number;
}

/** One container's figures in a pass over all running containers. */
export interface Stat extends Omit<Snapshot, 'timestamp'> {
  id: string;
  name: string;
}

/**
 * One pass of GET /api/containers/stats/stream: onStat for each running
 * container (of ids, when given) as its sample arrives; resolves after
 * `done`, rejects on `error`.
 */
export async function statsPass(env: number, onStat: (s: Stat) => void, signal?: AbortSignal, ids?: readonly string[]): Promise<void> {
  let failure: string | null = null;
  await stream(
    'GET',
    '/api/containers/stats/stream',
    (e) => {
      if (e.event === 'stat') {
        const s = dataOf<Stat>(e);
        if (s?.id) onStat(s);
      } else if (e.event === 'error') {
        failure = dataOf<{ error?: string }>(e)?.error ?? 'Container statistics failed';
      }
    },
    { query: ids ? { env, ids: ids.join(',') } : { env }, signal },
  );
  if (failure) throw new Error(failure);
}

export interface LogLine {
  text: string;
  stream?: string;
}

export interface LogStreamOptions {
  /** Number of past lines, or 'all'. */
  tail: string;
  timestamps: boolean;
  signal?: AbortSignal;
  onConnected?: () => void;
}

/**
 * Follows a container's output (GET /api/containers/{id}/logs/stream): the
 * last `tail` lines, then new ones. Resolves when the output ends (`end`, the
 * container stopped); rejects with the server's message on `error`.
 */
export async function followLogs(env: number, id: string, onLine: (l: LogLine) => void, opts: LogStreamOptions): Promise<void> {
  let failure: string | null = null;
  await stream(
    'GET',
    `${path(id)}/logs/stream`,
    (e) => {
      if (e.event === 'log') {
        const l = dataOf<LogLine>(e);
        if (l) onLine(l);
      } else if (e.event === 'connected') {
        opts.onConnected?.();
      } else if (e.event === 'error') {
        failure = dataOf<{ error?: string }>(e)?.error ?? 'The log stream failed';
      }
    },
    { query: { env, tail: opts.tail, timestamps: opts.timestamps || undefined }, signal: opts.signal },
  );
  if (failure) throw new Error(failure);
}

/** The WebSocket URL of an exec session: text frames carry terminal input and output. */
export function execAttachUrl(env: number, execId: string, loc: Pick<Location, 'protocol' | 'host'> = location): string {
  const scheme = loc.protocol === 'https:' ? 'wss:' : 'ws:';
  return `${scheme}//${loc.host}${buildUrl(`/api/containers/exec/${encodeURIComponent(execId)}/attach`, { envId: env })}`;
}
