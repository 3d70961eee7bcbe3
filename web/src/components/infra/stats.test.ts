import { describe, expect, it } from 'vitest';
import { aggregateStats, formatBytes, formatPercent, pushSample } from './stats';

describe('aggregateStats', () => {
  it('sums CPU and memory over the running containers of a pass', () => {
    expect(
      aggregateStats([
        { id: 'a', name: 'a', cpuPercent: 12.345, memoryUsage: 1000 },
        { id: 'b', name: 'b', cpuPercent: 0.01, memoryUsage: 24 },
      ]),
    ).toEqual({ cpu: 12.36, memory: 1024, containers: 2 });
  });

  it('counts missing, negative or non-finite figures as 0', () => {
    expect(
      aggregateStats([
        { id: 'a', name: 'a' },
        { id: 'b', name: 'b', cpuPercent: NaN, memoryUsage: -5 },
        { id: 'c', name: 'c', cpuPercent: 150, memoryUsage: 10 },
      ]),
    ).toEqual({ cpu: 150, memory: 10, containers: 3 });
    expect(aggregateStats(null)).toEqual({ cpu: 0, memory: 0, containers: 0 });
    expect(aggregateStats([])).toEqual({ cpu: 0, memory: 0, containers: 0 });
  });
});

describe('pushSample', () => {
  it('appends without changing the history and keeps the last max values', () => {
    const h = [1, 2, 3];
    expect(pushSample(h, 4)).toEqual([1, 2, 3, 4]);
    expect(h).toEqual([1, 2, 3]);
    expect(pushSample(h, 4, 3)).toEqual([2, 3, 4]);
  });
});

describe('formatting', () => {
  it('formats bytes in binary units', () => {
    expect(formatBytes(0)).toBe('0 B');
    expect(formatBytes(1536)).toBe('1.5 KiB');
    expect(formatBytes(150 * 1024 * 1024)).toBe('150 MiB');
    expect(formatBytes(3 * 1024 ** 3)).toBe('3.0 GiB');
    expect(formatBytes(undefined)).toBe('—');
    expect(formatBytes(-1)).toBe('—');
  });
  it('formats percentages', () => {
    expect(formatPercent(0.123)).toBe('0.1 %');
    expect(formatPercent(42.6)).toBe('43 %');
  });
});
