// Live figures of the dashboard: one pass of container samples summed per
// environment, kept as a short history for the charts.
import type { ContainerStat } from '../../lib/api-infra';

export interface EnvSample {
  /** Sum of the containers' CPU percentages (100 = one busy core). */
  cpu: number;
  /** Sum of the containers' memory in use (bytes, page cache excluded). */
  memory: number;
  /** Running containers sampled. */
  containers: number;
}

/** Sums one pass of samples; missing or non-finite figures count as 0. */
export function aggregateStats(stats: ContainerStat[] | null | undefined): EnvSample {
  let cpu = 0;
  let memory = 0;
  let containers = 0;
  for (const s of stats ?? []) {
    containers++;
    if (Number.isFinite(s.cpuPercent)) cpu += Math.max(0, s.cpuPercent as number);
    if (Number.isFinite(s.memoryUsage)) memory += Math.max(0, s.memoryUsage as number);
  }
  return { cpu: Math.round(cpu * 100) / 100, memory, containers };
}

/** Number of samples a chart keeps (at one pass every ~5 s: the last few minutes). */
export const HISTORY = 36;

/** A copy of history with v appended, keeping the last max values. */
export function pushSample(history: readonly number[], v: number, max = HISTORY): number[] {
  const out = [...history, v];
  return out.length > max ? out.slice(out.length - max) : out;
}

const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

/** 1536 → "1.5 KiB"; undefined → "—". */
export function formatBytes(n: number | null | undefined): string {
  if (typeof n !== 'number' || !Number.isFinite(n) || n < 0) return '—';
  let v = n;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${i === 0 ? v : v < 10 ? v.toFixed(1) : Math.round(v)} ${units[i]}`;
}

export function formatPercent(v: number): string {
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} %`;
}
