// A stand-in for the Berth server in unit tests: answers the console's fetch
// calls (the typed client of client.ts and api.ts alike) from a table of
// "METHOD /path" → answer. An answer is a value (sent as JSON, 200), a
// function of the request, a Response, or a thrown ApiError (sent as the
// server sends errors). Unknown routes answer 404, so a screen calling what
// the test did not expect fails visibly. Every call is recorded.
import { vi } from 'vitest';
import { ApiError } from './lib/api';

export interface StubCall {
  method: string;
  path: string;
  query: Record<string, string>;
  body: unknown;
}

type Answer = unknown | ((call: StubCall) => unknown);

export interface StubApi {
  /** Answers by "METHOD /path" (path without the query); change them at will. */
  routes: Record<string, Answer>;
  calls: StubCall[];
  /** The calls of "METHOD /path". */
  called(route: string): StubCall[];
}

export function stubApi(routes: Record<string, Answer> = {}): StubApi {
  const api: StubApi = {
    routes,
    calls: [],
    called: (route) => api.calls.filter((c) => `${c.method} ${c.path}` === route),
  };
  vi.stubGlobal(
    'fetch',
    vi.fn(async (input: RequestInfo | URL, init?: RequestInit) => {
      const req = input instanceof Request ? input : new Request(new URL(String(input), 'http://localhost'), init);
      const url = new URL(req.url);
      const text = await req.text();
      let body: unknown = undefined;
      if (text) {
        try {
          body = JSON.parse(text);
        } catch {
          body = text;
        }
      }
      const call: StubCall = { method: req.method, path: decodeURIComponent(url.pathname), query: Object.fromEntries(url.searchParams), body };
      api.calls.push(call);
      const key = `${call.method} ${call.path}`;
      if (!(key in api.routes)) return json(404, { error: `No stub for ${key}` });
      try {
        const a = api.routes[key];
        const v = typeof a === 'function' ? await (a as (c: StubCall) => unknown)(call) : structuredClone(a);
        if (v instanceof Response) return v;
        return json(200, v ?? {});
      } catch (e) {
        if (e instanceof ApiError) return json(e.status, { error: e.message, ...(e.details ? { details: e.details } : {}) });
        throw e;
      }
    }),
  );
  return api;
}

function json(status: number, v: unknown): Response {
  return new Response(JSON.stringify(v), { status, headers: { 'Content-Type': 'application/json' } });
}
