// Pure helpers of the container screens: filtering, sorting, port labels,
// uptime, figures, the compose project and which bulk action suits which state.
import type { ContainerPort, ContainerSummary } from './api';

export type SortKey = 'name' | 'image' | 'state' | 'health' | 'uptime' | 'cpu' | 'memory' | 'ports' | 'stack';
export type SortDir = 'asc' | 'desc';

/** The figures of one running container (a `stat` of the stats stream). */
export interface StatFigures {
  cpuPercent: number;
  memoryUsage: number;
  memoryLimit?: number;
  memoryPercent?: number;
}

/** The compose project label: containers of one stack share it. */
export const STACK_LABEL = 'com.docker.compose.project';

export function stackOf(c: Pick<ContainerSummary, 'labels'>): string {
  return c.labels?.[STACK_LABEL] ?? '';
}

/** "0.0.0.0:8080→80/tcp" style labels; IPv4 and IPv6 bindings of one port are shown once. */
export function formatPorts(ports: ContainerPort[] | null | undefined): string[] {
  if (!ports?.length) return [];
  const seen = new Set<string>();
  const out: string[] = [];
  const sorted = [...ports].sort(
    (a, b) => a.PrivatePort - b.PrivatePort || (a.PublicPort ?? 0) - (b.PublicPort ?? 0) || a.Type.localeCompare(b.Type),
  );
  for (const p of sorted) {
    const label = p.PublicPort ? `${p.PublicPort}→${p.PrivatePort}/${p.Type}` : `${p.PrivatePort}/${p.Type}`;
    if (!seen.has(label)) {
      seen.add(label);
      out.push(label);
    }
  }
  return out;
}

const UNIT_SECONDS: Record<string, number> = {
  second: 1,
  minute: 60,
  hour: 3600,
  day: 86400,
  week: 7 * 86400,
  month: 30 * 86400,
  year: 365 * 86400,
};

/**
 * How long a container has been up, from the engine's status text ("Up 2 hours
 * (healthy)", "Up About a minute", "Up 3 days (Paused)"): the duration as the
 * engine wrote it and approximate seconds for sorting; null when it is not up.
 */
export function uptimeOf(status: string | undefined): { label: string; seconds: number } | null {
  const m = /^Up\s+(.+?)(?:\s+\([^)]*\))*\s*$/.exec(status ?? '');
  if (!m) return null;
  const label = m[1];
  if (/^less than a second$/i.test(label)) return { label, seconds: 0 };
  const about = /^about an? (minute|hour)$/i.exec(label);
  if (about) return { label, seconds: UNIT_SECONDS[about[1].toLowerCase()] };
  const n = /^(\d+)\s+(second|minute|hour|day|week|month|year)s?$/i.exec(label);
  if (n) return { label, seconds: Number(n[1]) * UNIT_SECONDS[n[2].toLowerCase()] };
  return { label, seconds: 0 };
}

/** Health as shown: the engine's health status, or '' when the container has no health check. */
export function healthOf(c: Pick<ContainerSummary, 'health' | 'status'>): string {
  if (c.health && c.health !== 'none') return c.health;
  const m = /\((healthy|unhealthy|health: starting)\)/.exec(c.status ?? '');
  if (!m) return '';
  return m[1] === 'health: starting' ? 'starting' : m[1];
}

/** Bytes with a binary unit: 0 B, 512 B, 1.5 KiB, 12.3 MiB, 2.00 GiB. */
export function formatBytes(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return '—';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let v = Math.abs(n);
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  const digits = i === 0 ? 0 : v < 10 ? 2 : v < 100 ? 1 : 0;
  return `${n < 0 ? '-' : ''}${v.toFixed(digits)} ${units[i]}`;
}

/** A percentage with one decimal ("12.5 %"); '—' when unknown. */
export function formatPercent(v: number | null | undefined): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return '—';
  return `${v.toFixed(v >= 100 ? 0 : 1)} %`;
}

/** A rate in bytes per second. */
export function formatRate(bytesPerSecond: number): string {
  return `${formatBytes(bytesPerSecond)}/s`;
}

function text(c: ContainerSummary, key: SortKey): string {
  switch (key) {
    case 'name':
      return c.name ?? '';
    case 'image':
      return c.image ?? '';
    case 'state':
      return c.state ?? '';
    case 'health':
      return healthOf(c);
    case 'ports':
      return formatPorts(c.ports).join(' ');
    case 'stack':
      return stackOf(c);
    default:
      return '';
  }
}

/** The number a column sorts by; null sorts last whichever the direction. */
function figure(c: ContainerSummary, key: SortKey, stats?: ReadonlyMap<string, StatFigures>): number | null {
  switch (key) {
    case 'uptime':
      return uptimeOf(c.status)?.seconds ?? null;
    case 'cpu':
      return stats?.get(c.id)?.cpuPercent ?? null;
    case 'memory':
      return stats?.get(c.id)?.memoryUsage ?? null;
    default:
      return null;
  }
}

const numeric: ReadonlySet<SortKey> = new Set(['uptime', 'cpu', 'memory']);

/** The state filter of the list. */
export type StateFilter = 'all' | 'running' | 'stopped' | 'paused' | 'unhealthy';

export function matchesState(c: ContainerSummary, f: StateFilter): boolean {
  switch (f) {
    case 'all':
      return true;
    case 'running':
      return c.state === 'running' || c.state === 'restarting';
    case 'stopped':
      return c.state === 'exited' || c.state === 'created' || c.state === 'dead';
    case 'paused':
      return c.state === 'paused';
    case 'unhealthy':
      return healthOf(c) === 'unhealthy';
  }
}

/** Keeps the containers matching every word of the query (name, image, state, status, health, id, ports, stack). */
export function filterContainers(list: ContainerSummary[], query: string, state: StateFilter = 'all'): ContainerSummary[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (!words.length && state === 'all') return list;
  return list.filter((c) => {
    if (!matchesState(c, state)) return false;
    const hay = [c.name, c.image, c.state, c.status, healthOf(c), c.id, stackOf(c), ...formatPorts(c.ports)].join(' ').toLowerCase();
    return words.every((w) => hay.includes(w));
  });
}

const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });

/** A sorted copy; ties are broken by name so the order is stable across reloads. */
export function sortContainers(
  list: ContainerSummary[],
  key: SortKey,
  dir: SortDir,
  stats?: ReadonlyMap<string, StatFigures>,
): ContainerSummary[] {
  const sign = dir === 'asc' ? 1 : -1;
  const byName = (a: ContainerSummary, b: ContainerSummary) => collator.compare(a.name ?? '', b.name ?? '');
  if (numeric.has(key)) {
    return [...list].sort((a, b) => {
      const x = figure(a, key, stats);
      const y = figure(b, key, stats);
      if (x === null || y === null) return x === y ? byName(a, b) : x === null ? 1 : -1;
      return sign * (x - y) || byName(a, b);
    });
  }
  return [...list].sort((a, b) => {
    const x = text(a, key);
    const y = text(b, key);
    // Empty values (no stack, no health check) go last.
    if (!x || !y) return x === y ? byName(a, b) : !x ? 1 : -1;
    return sign * collator.compare(x, y) || byName(a, b);
  });
}

/** Next sort after clicking a column header: same column flips, another starts ascending. */
export function nextSort(cur: { key: SortKey; dir: SortDir }, key: SortKey): { key: SortKey; dir: SortDir } {
  if (cur.key === key) return { key, dir: cur.dir === 'asc' ? 'desc' : 'asc' };
  return { key, dir: numeric.has(key) ? 'desc' : 'asc' };
}

export function shortId(id: string): string {
  return id.replace(/^sha256:/, '').slice(0, 12);
}

/** The lifecycle operations of a container. */
export type LifecycleAction = 'start' | 'stop' | 'restart' | 'pause' | 'unpause';

/** Whether an action makes sense in a state (bulk actions skip the others). */
export function canDo(state: string, action: LifecycleAction | 'remove'): boolean {
  switch (action) {
    case 'start':
      return state !== 'running' && state !== 'paused' && state !== 'restarting';
    case 'stop':
      return state === 'running' || state === 'paused' || state === 'restarting';
    case 'pause':
      return state === 'running';
    case 'unpause':
      return state === 'paused';
    case 'restart':
    case 'remove':
      return true;
  }
}

/** Past participles for messages ("web stopped."). */
export const actionDone: Record<LifecycleAction | 'remove', string> = {
  start: 'started',
  stop: 'stopped',
  restart: 'restarted',
  pause: 'paused',
  unpause: 'unpaused',
  remove: 'removed',
};

/** Progressive forms for progress messages ("Stopping 2 of 5…"). */
export const actionDoing: Record<LifecycleAction | 'remove', string> = {
  start: 'Starting',
  stop: 'Stopping',
  restart: 'Restarting',
  pause: 'Pausing',
  unpause: 'Unpausing',
  remove: 'Removing',
};

export function capitalize(s: string): string {
  return s ? s[0].toUpperCase() + s.slice(1) : s;
}

/**
 * Runs fn over items with at most `limit` calls at once and returns each
 * item's outcome in the items' order; onProgress is called after each.
 */
export async function runEach<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T) => Promise<R>,
  onProgress?: (done: number) => void,
): Promise<({ ok: true; value: R } | { ok: false; error: unknown })[]> {
  const out: ({ ok: true; value: R } | { ok: false; error: unknown })[] = new Array(items.length);
  let next = 0;
  let done = 0;
  async function worker() {
    while (next < items.length) {
      const i = next++;
      try {
        out[i] = { ok: true, value: await fn(items[i]) };
      } catch (error) {
        out[i] = { ok: false, error };
      }
      done++;
      onProgress?.(done);
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return out;
}
