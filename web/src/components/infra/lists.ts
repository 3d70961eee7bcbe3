// Pure helpers of the volume and network lists: filtering, dates, sizes.
import type { Network, Volume } from '../../lib/api-infra';
import { subnetsOf } from './forms';

/** "2024-05-01T10:00:00Z" → a short local date and time; "" or invalid → "—". */
export function formatDate(s: string | null | undefined): string {
  if (!s) return '—';
  const d = new Date(s);
  if (Number.isNaN(d.getTime()) || d.getFullYear() < 1971) return '—';
  return d.toLocaleString(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
}

/** The volume's size when the server gave one (negative means unknown to the engine). */
export function volumeSize(v: Volume): number | undefined {
  const n = v.size ?? v.UsageData?.Size;
  return typeof n === 'number' && n >= 0 ? n : undefined;
}

function matches(hay: (string | undefined)[], query: string): boolean {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (!words.length) return true;
  const text = hay.filter(Boolean).join(' ').toLowerCase();
  return words.every((w) => text.includes(w));
}

/** Volumes matching every word of the query (name, driver, labels, users; "in use" and "unused"). */
export function filterVolumes(list: Volume[], query: string): Volume[] {
  return list.filter((v) => {
    const users = v.usedBy ?? [];
    return matches(
      [
        v.name,
        v.driver,
        users.length ? 'in use' : 'unused',
        ...users.map((u) => u.containerName),
        ...Object.entries(v.labels ?? {}).map(([k, val]) => `${k}=${val}`),
      ],
      query,
    );
  });
}

/** Networks matching every word of the query (name, driver, scope, subnet, containers, labels). */
export function filterNetworks(list: Network[], query: string): Network[] {
  return list.filter((n) =>
    matches(
      [
        n.name,
        n.id,
        n.driver,
        n.scope,
        subnetsOf(n.ipam),
        ...Object.values(n.containers ?? {}).map((c) => c.name),
        ...Object.entries(n.labels ?? {}).map(([k, v]) => `${k}=${v}`),
      ],
      query,
    ),
  );
}
