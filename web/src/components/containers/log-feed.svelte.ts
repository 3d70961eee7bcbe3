// The lines of a live log view: lines arriving from a stream are batched
// (one render per 40 ms, not one per line), parsed into a bounded buffer
// (LogLines), and exposed as reactive state. Used by a container's Logs tab
// and the merged logs screen.
import { LogLines, type ParsedLine } from './log-lines';

type RawLine = { text: string; stream?: string; source?: string; ts?: string };

export class LogFeed {
  lines = $state.raw<readonly ParsedLine[]>([]);
  dropped = $state(0);
  readonly #buffer: LogLines;
  readonly #timestamps: boolean;
  #pending: RawLine[] = [];
  #timer: ReturnType<typeof setTimeout> | null = null;

  /** timestamps: whether raw texts start with the engine's timestamp (split off into its own column). */
  constructor(timestamps: boolean, limit = 10_000) {
    this.#timestamps = timestamps;
    this.#buffer = new LogLines(limit);
  }

  /** Queues a line; it is shown with the next batch. */
  add(l: RawLine): void {
    this.#pending.push(l);
    this.#timer ??= setTimeout(() => this.flush(), 40);
  }

  /** Shows the queued lines now. */
  flush(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    if (!this.#pending.length) return;
    this.lines = this.#buffer.push(this.#pending, this.#timestamps);
    this.dropped = this.#buffer.dropped;
    this.#pending = [];
  }

  /** Forgets every line, shown or queued. */
  clear(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    this.#pending = [];
    this.#buffer.clear();
    this.lines = [];
    this.dropped = 0;
  }
}
