// Rates (bytes per second) between consecutive statistics snapshots, whose
// network and block figures are running totals.
import type { Snapshot } from '../../lib/api-containers';

export interface Rates {
  rx: number;
  tx: number;
  read: number;
  write: number;
}

/** One entry per pair of consecutive samples; a counter that went down (a restart) counts as 0. */
export function rates(samples: readonly Snapshot[]): Rates[] {
  const out: Rates[] = [];
  for (let i = 1; i < samples.length; i++) {
    const a = samples[i - 1];
    const b = samples[i];
    const secs = (b.timestamp - a.timestamp) / 1000;
    if (!(secs > 0)) continue;
    const per = (x: number, y: number) => Math.max(0, (y ?? 0) - (x ?? 0)) / secs;
    out.push({
      rx: per(a.networkRx, b.networkRx),
      tx: per(a.networkTx, b.networkTx),
      read: per(a.blockRead, b.blockRead),
      write: per(a.blockWrite, b.blockWrite),
    });
  }
  return out;
}
