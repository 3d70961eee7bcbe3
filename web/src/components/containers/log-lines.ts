// The lines of a log view: each raw line parsed once (timestamp, ANSI styles
// carried from the previous line of the same stream), kept up to a limit.
import { parseAnsi, plainState, splitTimestamp, type AnsiState, type Segment } from './ansi';

export interface ParsedLine {
  /** Increasing, unique within a buffer (a key for rendering). */
  id: number;
  /** The engine's timestamp when asked for ('' otherwise). */
  ts: string;
  segments: Segment[];
  /** The text without escapes (searched by the filter). */
  plain: string;
  stream: string;
  /** The container the line came from (merged logs), '' otherwise. */
  source: string;
}

export class LogLines {
  readonly limit: number;
  lines: ParsedLine[] = [];
  /** How many lines were dropped from the front to stay within limit. */
  dropped = 0;
  #next = 1;
  #states = new Map<string, AnsiState>();

  constructor(limit = 10_000) {
    this.limit = limit;
  }

  /** Parses and appends lines; returns the new array (a fresh reference for reactive views). */
  push(raw: { text: string; stream?: string; source?: string; ts?: string }[], timestamps: boolean): ParsedLine[] {
    const added: ParsedLine[] = [];
    for (const r of raw) {
      const stream = r.stream ?? 'stdout';
      const source = r.source ?? '';
      const { ts, text } = r.ts !== undefined ? { ts: r.ts, text: r.text } : timestamps ? splitTimestamp(r.text) : { ts: '', text: r.text };
      const key = `${source}\u0000${stream}`;
      const { segments, state } = parseAnsi(text, this.#states.get(key) ?? plainState);
      this.#states.set(key, state);
      added.push({ id: this.#next++, ts, segments, plain: segments.map((s) => s.text).join(''), stream, source });
    }
    let all = this.lines.concat(added);
    if (all.length > this.limit) {
      this.dropped += all.length - this.limit;
      all = all.slice(all.length - this.limit);
    }
    this.lines = all;
    return all;
  }

  clear(): void {
    this.lines = [];
    this.dropped = 0;
    this.#states.clear();
  }
}

/** The lines whose text contains query (case-insensitive), or all when onlyMatches is off or query empty. */
export function visibleLines(lines: readonly ParsedLine[], query: string, onlyMatches: boolean): readonly ParsedLine[] {
  const q = query.trim().toLowerCase();
  if (!q || !onlyMatches) return lines;
  return lines.filter((l) => l.plain.toLowerCase().includes(q));
}

/** Number of lines containing query. */
export function countMatches(lines: readonly ParsedLine[], query: string): number {
  const q = query.trim().toLowerCase();
  if (!q) return 0;
  let n = 0;
  for (const l of lines) if (l.plain.toLowerCase().includes(q)) n++;
  return n;
}

/** The indexes (in lines) of the lines containing query, case-insensitive. */
export function matchIndexes(lines: readonly ParsedLine[], query: string): number[] {
  const q = query.trim().toLowerCase();
  if (!q) return [];
  const out: number[] = [];
  lines.forEach((l, i) => {
    if (l.plain.toLowerCase().includes(q)) out.push(i);
  });
  return out;
}

/** The next (step 1) or previous (step -1) of n matches after current (-1: none yet), wrapping around. */
export function stepMatch(current: number, n: number, step: 1 | -1): number {
  if (n <= 0) return -1;
  if (current < 0 || current >= n) return step === 1 ? 0 : n - 1;
  return (current + step + n) % n;
}

/** Lines as plain text (no escapes), one a line: the timestamp and the container first when asked for. */
export function logText(lines: readonly ParsedLine[], opts: { timestamps?: boolean; sources?: boolean } = {}): string {
  return lines
    .map((l) => [opts.timestamps && l.ts ? l.ts : '', opts.sources && l.source ? `${l.source} |` : '', l.plain].filter(Boolean).join(' '))
    .join('\n')
    .concat(lines.length ? '\n' : '');
}

/** A file name for a downloaded log: the name made safe, and the time (berth-web-20261127-2310.log). */
export function logFileName(name: string, now = new Date()): string {
  const safe = name.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '') || 'logs';
  const p = (n: number) => String(n).padStart(2, '0');
  const stamp = `${now.getFullYear()}${p(now.getMonth() + 1)}${p(now.getDate())}-${p(now.getHours())}${p(now.getMinutes())}${p(now.getSeconds())}`;
  return `${safe}-${stamp}.log`;
}
