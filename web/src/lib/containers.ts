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

// ------------------------------------------------------------ the list at fleet size

/** A column of the containers list that the user may show or hide. */
export type ColumnId = 'image' | 'state' | 'uptime' | 'cpu' | 'memory' | 'ports' | 'stack';

export interface ColumnDef {
  id: ColumnId;
  label: string;
  /** The sort key of its header, if it sorts. */
  sort?: SortKey;
  /** Shown until the user chooses otherwise. */
  default: boolean;
  num?: boolean;
}

/** Every optional column, in display order (name, selection and actions are always shown). */
export const COLUMNS: readonly ColumnDef[] = [
  { id: 'image', label: 'Image', sort: 'image', default: true },
  { id: 'state', label: 'State', sort: 'state', default: true },
  { id: 'uptime', label: 'Uptime', sort: 'uptime', default: false },
  { id: 'cpu', label: 'CPU', sort: 'cpu', default: true, num: true },
  { id: 'memory', label: 'Memory', sort: 'memory', default: true, num: true },
  { id: 'ports', label: 'Ports', sort: 'ports', default: true },
  { id: 'stack', label: 'Stack', sort: 'stack', default: true },
];

/** The grid id of the containers list in the grid preferences (GET/POST/DELETE /api/preferences/grid). */
export const CONTAINERS_GRID = 'containers';

/** A column as saved in the grid preferences: {id, visible}. */
export interface SavedColumn {
  id: string;
  visible: boolean;
}

export function defaultColumns(): ColumnId[] {
  return COLUMNS.filter((c) => c.default).map((c) => c.id);
}

/** The shown columns from a saved layout (unknown ids are ignored; columns it does not name keep their default). */
export function columnsFrom(saved: unknown): ColumnId[] {
  const cols = (saved as { columns?: unknown } | null | undefined)?.columns;
  if (!Array.isArray(cols)) return defaultColumns();
  const said = new Map<string, boolean>();
  for (const c of cols) {
    if (c && typeof c === 'object' && typeof (c as SavedColumn).id === 'string') said.set((c as SavedColumn).id, !!(c as SavedColumn).visible);
  }
  return COLUMNS.filter((c) => said.get(c.id) ?? c.default).map((c) => c.id);
}

/** The layout to save: every column with its visibility, in display order. */
export function columnsToSave(shown: readonly ColumnId[]): SavedColumn[] {
  return COLUMNS.map((c) => ({ id: c.id, visible: shown.includes(c.id) }));
}

/** One line of the list: a stack's group header or a container. */
export type ListItem =
  | { kind: 'group'; key: string; stack: string; count: number; running: number; collapsed: boolean }
  | { kind: 'row'; key: string; c: ContainerSummary };

/**
 * The lines of the list: the containers as they are, or grouped by compose
 * project (stacks by name, then the containers of no stack), each group a
 * header with its counts followed by its containers unless collapsed. The
 * containers keep their order (the sort) inside a group.
 */
export function listItems(list: readonly ContainerSummary[], group: boolean, collapsed: ReadonlySet<string> = new Set()): ListItem[] {
  if (!group) return list.map((c) => ({ kind: 'row', key: c.id, c }));
  const groups = new Map<string, ContainerSummary[]>();
  for (const c of list) {
    const s = stackOf(c);
    const g = groups.get(s);
    if (g) g.push(c);
    else groups.set(s, [c]);
  }
  const names = [...groups.keys()].sort((a, b) => (!a ? 1 : !b ? -1 : collator.compare(a, b)));
  const out: ListItem[] = [];
  for (const s of names) {
    const members = groups.get(s)!;
    const shut = collapsed.has(s);
    out.push({
      kind: 'group',
      key: `group:${s}`,
      stack: s,
      count: members.length,
      running: members.filter((c) => c.state === 'running').length,
      collapsed: shut,
    });
    if (!shut) for (const c of members) out.push({ kind: 'row', key: c.id, c });
  }
  return out;
}

/** A published port as a link: http://host:public, with the label shown for it. */
export interface PortLink {
  label: string;
  href?: string;
}

/**
 * The ports of a container as links where a port is published on the host
 * (TCP): to the environment's public host, or the browser's own host when the
 * environment has none (a local socket). Bindings to 127.0.0.1 are not
 * reachable from elsewhere: they are shown without a link.
 */
export function portLinks(ports: ContainerPort[] | null | undefined, host: string): PortLink[] {
  if (!ports?.length) return [];
  const seen = new Set<string>();
  const out: PortLink[] = [];
  const sorted = [...ports].sort(
    (a, b) => a.PrivatePort - b.PrivatePort || (a.PublicPort ?? 0) - (b.PublicPort ?? 0) || a.Type.localeCompare(b.Type),
  );
  for (const p of sorted) {
    const label = p.PublicPort ? `${p.PublicPort}→${p.PrivatePort}/${p.Type}` : `${p.PrivatePort}/${p.Type}`;
    if (seen.has(label)) continue;
    seen.add(label);
    const local = p.IP === '127.0.0.1' || p.IP === '::1';
    const h = host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
    out.push(p.PublicPort && p.Type === 'tcp' && !local && h ? { label, href: `http://${h}:${p.PublicPort}` } : { label });
  }
  return out;
}

/** The host of a published port's link: the environment's public address, else the browser's host. */
export function publicHost(env: { publicIp?: string | null } | undefined, browserHost: string): string {
  const ip = env?.publicIp?.trim();
  return ip || browserHost;
}

/** The recent samples of a running container's CPU % and memory bytes, oldest first. */
export interface StatHistory {
  cpu: number[];
  memory: number[];
}

/** Samples kept per container for its sparklines. */
export const HISTORY = 20;

/**
 * The histories after one pass of the stats: each sampled container's figures
 * appended (at most HISTORY kept); containers the pass did not sample (stopped,
 * gone) dropped.
 */
export function addSamples(
  prev: ReadonlyMap<string, StatHistory>,
  pass: ReadonlyMap<string, StatFigures>,
): Map<string, StatHistory> {
  const next = new Map<string, StatHistory>();
  for (const [id, s] of pass) {
    const h = prev.get(id);
    next.set(id, {
      cpu: [...(h?.cpu ?? []), s.cpuPercent].slice(-HISTORY),
      memory: [...(h?.memory ?? []), s.memoryUsage].slice(-HISTORY),
    });
  }
  return next;
}

/**
 * The SVG path of a sparkline of values in a w×h box (y grows down): the
 * values spread over the width, scaled to max (at least the largest value);
 * '' when there are fewer than two values.
 */
export function sparkPath(values: readonly number[], w: number, h: number, max = 0): string {
  if (values.length < 2) return '';
  const top = Math.max(max, ...values.map((v) => (Number.isFinite(v) ? v : 0)));
  const step = w / (values.length - 1);
  return values
    .map((v, i) => {
      const y = top > 0 ? h - (Math.max(0, Number.isFinite(v) ? v : 0) / top) * h : h;
      return `${i ? 'L' : 'M'}${(i * step).toFixed(1)} ${y.toFixed(1)}`;
    })
    .join(' ');
}

/** A pending update of the last check (GET /api/containers/check-updates). */
export interface PendingUpdate {
  containerId: string;
  containerName: string;
  currentImage?: string;
  checkedAt?: string;
}

/** The containers with a pending update, by id and by name (a recreated container keeps its name). */
export function pendingOf(list: readonly PendingUpdate[] | null | undefined): { ids: Set<string>; names: Set<string> } {
  const ids = new Set<string>();
  const names = new Set<string>();
  for (const p of list ?? []) {
    if (p.containerId) ids.add(p.containerId);
    if (p.containerName) names.add(p.containerName.replace(/^\//, ''));
  }
  return { ids, names };
}

export function hasUpdate(c: Pick<ContainerSummary, 'id' | 'name'>, pending: { ids: Set<string>; names: Set<string> }): boolean {
  return pending.ids.has(c.id) || pending.names.has(c.name);
}
