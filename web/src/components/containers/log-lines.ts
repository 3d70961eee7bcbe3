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
  push(raw: { text: string; stream?: string }[], timestamps: boolean): ParsedLine[] {
    const added: ParsedLine[] = [];
    for (const r of raw) {
      const stream = r.stream ?? 'stdout';
      const { ts, text } = timestamps ? splitTimestamp(r.text) : { ts: '', text: r.text };
      const { segments, state } = parseAnsi(text, this.#states.get(stream) ?? plainState);
      this.#states.set(stream, state);
      added.push({ id: this.#next++, ts, segments, plain: segments.map((s) => s.text).join(''), stream });
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
