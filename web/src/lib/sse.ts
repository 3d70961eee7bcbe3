// Server-Sent Events over fetch: the API's event streams (jobs, logs, stats,
// events, stack deploys) read with the session cookie, for any method (a
// stack deploy is a POST that answers with its job's stream). EventSource is
// not used: it cannot POST, and it reconnects on its own, which replays jobs.
import { ApiError, buildUrl, reportMutated, type Query } from './api';

export interface SSEvent {
  /** The event's name ("message" when the server sent none). */
  event: string;
  /** The data lines joined with "\n". */
  data: string;
}

export interface StreamOptions {
  query?: Query;
  body?: unknown;
  signal?: AbortSignal;
  /** Called with the answer's headers before the first event (e.g. X-Job-Id). */
  onOpen?: (res: Response) => void;
}

/** Splits a text stream into events; feed() returns the events complete so far. */
export class SSEParser {
  #buf = '';
  #event = '';
  #data: string[] = [];

  feed(chunk: string): SSEvent[] {
    this.#buf += chunk;
    const out: SSEvent[] = [];
    let nl: number;
    while ((nl = this.#buf.search(/\r\n|\r|\n/)) >= 0) {
      const line = this.#buf.slice(0, nl);
      this.#buf = this.#buf.slice(nl + (this.#buf.startsWith('\r\n', nl) ? 2 : 1));
      if (line === '') {
        if (this.#data.length) out.push({ event: this.#event || 'message', data: this.#data.join('\n') });
        this.#event = '';
        this.#data = [];
        continue;
      }
      if (line.startsWith(':')) continue; // comment (keepalive)
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? '' : line.slice(colon + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'event') this.#event = value;
      else if (field === 'data') this.#data.push(value);
    }
    return out;
  }
}

/**
 * Opens an event stream and calls onEvent for each event until the server
 * ends it (resolves) or signal aborts (rejects with AbortError). An error
 * answer rejects with ApiError carrying the server's message.
 */
export async function stream(
  method: string,
  path: string,
  onEvent: (e: SSEvent) => void,
  opts: StreamOptions = {},
): Promise<void> {
  const headers: Record<string, string> = { Accept: 'text/event-stream' };
  let body: string | undefined;
  if (opts.body !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(opts.body);
  }
  let res: Response;
  try {
    res = await fetch(buildUrl(path, opts.query), { method, headers, body, credentials: 'same-origin', signal: opts.signal });
  } catch (e) {
    if (e instanceof DOMException && e.name === 'AbortError') throw e;
    throw new ApiError(0, 'Cannot reach the Berth server');
  }
  reportMutated(method);
  if (!res.ok) {
    const text = await res.text();
    let msg = res.statusText || `Request failed (${res.status})`;
    try {
      const o = JSON.parse(text);
      if (o && typeof o.error === 'string' && o.error) msg = o.error;
    } catch {
      // not JSON
    }
    throw new ApiError(res.status, msg);
  }
  opts.onOpen?.(res);
  if (!res.body) return;
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  const parser = new SSEParser();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      for (const e of parser.feed(value)) onEvent(e);
    }
  } finally {
    reportMutated(method); // a streamed change (deploy, pull) is done when its stream ends
  }
}

/** Parses an event's data as JSON (undefined when it is not JSON). */
export function dataOf<T = unknown>(e: SSEvent): T | undefined {
  try {
    return JSON.parse(e.data) as T;
  } catch {
    return undefined;
  }
}

/** Follows a job (/api/jobs/{id}): replay of its past events, then live, until it ends. */
export function followJob(jobId: string, onEvent: (e: SSEvent) => void, signal?: AbortSignal): Promise<void> {
  // A job's end is a change (batch updates, removals): cached reads are refreshed.
  return stream('GET', `/api/jobs/${encodeURIComponent(jobId)}`, onEvent, { signal }).finally(() => reportMutated('POST'));
}
