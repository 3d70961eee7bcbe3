// Pure helpers of the container list: filtering, sorting and port labels.
import type { ContainerPort, ContainerSummary } from './api';

export type SortKey = 'name' | 'image' | 'state' | 'status' | 'ports';
export type SortDir = 'asc' | 'desc';

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

function text(c: ContainerSummary, key: SortKey): string {
  switch (key) {
    case 'name':
      return c.name ?? '';
    case 'image':
      return c.image ?? '';
    case 'state':
      return c.state ?? '';
    case 'status':
      return c.status ?? '';
    case 'ports':
      return formatPorts(c.ports).join(' ');
  }
}

/** Keeps the containers matching every word of the query (name, image, state, status, id, ports). */
export function filterContainers(list: ContainerSummary[], query: string): ContainerSummary[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (!words.length) return list;
  return list.filter((c) => {
    const hay = [c.name, c.image, c.state, c.status, c.id, ...formatPorts(c.ports)].join(' ').toLowerCase();
    return words.every((w) => hay.includes(w));
  });
}

const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });

/** A sorted copy; ties are broken by name so the order is stable across reloads. */
export function sortContainers(list: ContainerSummary[], key: SortKey, dir: SortDir): ContainerSummary[] {
  const sign = dir === 'asc' ? 1 : -1;
  return [...list].sort((a, b) => {
    const d = collator.compare(text(a, key), text(b, key));
    return sign * d || collator.compare(a.name ?? '', b.name ?? '');
  });
}

/** Next sort after clicking a column header: same column flips, another starts ascending. */
export function nextSort(cur: { key: SortKey; dir: SortDir }, key: SortKey): { key: SortKey; dir: SortDir } {
  if (cur.key === key) return { key, dir: cur.dir === 'asc' ? 'desc' : 'asc' };
  return { key, dir: 'asc' };
}

export function shortId(id: string): string {
  return id.replace(/^sha256:/, '').slice(0, 12);
}
