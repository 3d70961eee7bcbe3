// The console's typed API client: openapi-fetch over the types generated from
// the server's own OpenAPI document (api-schema.d.ts, from openapi.json by
// `make api-types`). A path, parameter or answer field the server does not
// have fails `npm run check`, not a user.
//
//   const vols = await unwrap(client.GET('/api/volumes', { params: { query: { env } } }));
//
// unwrap turns an error answer into the same ApiError as api.ts (the server's
// `error` message and status) and reports a 401 to the app.
import createClient from 'openapi-fetch';
import type { paths } from './api-schema';
import { ApiError, reportMutated, reportUnauthorized, toApiError } from './api';

export type { paths, components } from './api-schema';

/** The generated schema of a named component (an answer or body type). */
export type Schema<N extends keyof import('./api-schema').components['schemas']> =
  import('./api-schema').components['schemas'][N];

const options = {
  // A Request needs an absolute URL outside the browser (unit tests); the
  // console is served from the API's own origin.
  baseUrl: typeof location !== 'undefined' && location.origin !== 'null' ? location.origin : 'http://localhost',
  credentials: 'same-origin' as const,
  headers: { Accept: 'application/json' },
  // Late-bound, so a test's stubbed fetch is the one called.
  fetch: (req: Request) => globalThis.fetch(req),
};

export const client = createClient<paths>(options);

/**
 * The same client for the POSTs that only read (a path check, a preview):
 * they change nothing, so unlike client's they do not mark every cached read
 * stale — a createQuery may use them without reading itself again and again.
 */
export const readClient = createClient<paths>(options);

client.use({
  onResponse: ({ request }) => {
    reportMutated(request.method);
  },
});

interface Answer<D> {
  data?: D;
  error?: unknown;
  response: Response;
}

/** Options of unwrap. */
export interface UnwrapOptions {
  /** false for calls whose 401 is an answer to show (login), not an expired session. */
  redirectOn401?: boolean;
}

/** The answer's data, or an ApiError with the server's message. */
export async function unwrap<D>(call: Promise<Answer<D>>, opts: UnwrapOptions = {}): Promise<D> {
  let a: Answer<D>;
  try {
    a = await call;
  } catch (e) {
    if (e instanceof DOMException && e.name === 'AbortError') throw e;
    throw new ApiError(0, 'Cannot reach the Berth server');
  }
  if (!a.response.ok) {
    const err = toApiError(a.response.status, a.response.statusText, a.error);
    if (a.response.status === 401 && opts.redirectOn401 !== false) reportUnauthorized(err);
    throw err;
  }
  return a.data as D;
}

/**
 * The query of the sign-in methods, one definition for every screen that reads them (sign-in page, settings):
 * the cache holds the server's answer as it is, and a screen that wants a part of it selects it.
 */
export const authProvidersQuery = {
  queryKey: ['auth', 'providers'] as const,
  queryFn: () => unwrap(client.GET('/api/auth/providers'), { redirectOn401: false }),
};
