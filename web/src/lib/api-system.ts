// The system area of the API: Berth's own facts, database health, the
// environment's host and disk usage, prunes, and the live audit stream.
import { dataOf, stream } from './sse';

export interface SystemInfo {
  version: string;
  goVersion: string;
  database: string;
  startedAt: string;
  uptimeSeconds: number;
  enterprise: boolean;
  agentsConnected: number;
  counts: Record<string, number>;
  jobs: Record<string, number>;
}

export interface DatabaseHealth {
  status: 'ok' | 'error';
  healthy: boolean;
  dialect: string;
  latencyMs: number;
  error?: string;
}

export interface HostInfo {
  name: string;
  os: string;
  kernelVersion: string;
  architecture: string;
  cpus: number;
  memTotal: number;
  dockerVersion: string;
  apiVersion: string;
  storageDriver?: string;
}

export interface DiskUse {
  total: number;
  active: number;
  size: number;
  reclaimable: number;
}

export interface DiskUsage {
  images: DiskUse;
  containers: DiskUse;
  volumes: DiskUse;
  buildCache: DiskUse;
  totalSize: number;
}

export type PruneKind = 'containers' | 'networks' | 'volumes' | 'all';

export interface Pruned {
  deleted: string[];
  spaceReclaimed: number;
}

export interface PruneResult {
  success: boolean;
  deleted?: string[];
  spaceReclaimed: number;
  containers?: Pruned;
  networks?: Pruned;
  volumes?: Pruned;
  images?: Pruned;
}

/** How many objects a prune removed, over all its parts. */
export function prunedCount(r: PruneResult): number {
  if (r.deleted) return r.deleted.length;
  return [r.containers, r.networks, r.volumes, r.images].reduce((n, p) => n + (p?.deleted.length ?? 0), 0);
}

/** Human uptime: "3 d 4 h", "2 h 5 min", "40 s". */
export function formatUptime(seconds: number): string {
  const d = Math.floor(seconds / 86400);
  const h = Math.floor((seconds % 86400) / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  if (d > 0) return `${d} d ${h} h`;
  if (h > 0) return `${h} h ${m} min`;
  if (m > 0) return `${m} min`;
  return `${Math.floor(seconds)} s`;
}

/**
 * Follows the audit log (/api/audit/events): calls onEntry with each entry
 * written from now on that the filter selects, until signal aborts (rejects
 * with AbortError) or the server ends the stream.
 */
export function followAudit<E>(
  filter: { username?: string; action?: string; entityType?: string; environmentId?: number },
  onEntry: (e: E) => void,
  signal: AbortSignal,
): Promise<void> {
  return stream(
    'GET',
    '/api/audit/events',
    (ev) => {
      if (ev.event !== 'entry') return;
      const e = dataOf<E>(ev);
      if (e) onEntry(e);
    },
    { query: { ...filter }, signal },
  );
}
