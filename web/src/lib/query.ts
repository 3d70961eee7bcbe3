// The console's one data layer: @tanstack/svelte-query with one client for
// every screen. Reads are cached per key, retried with back-off when the
// server or an engine failed (not when the answer was a 4xx: asking again
// changes nothing), refetched when the window regains focus, and refreshed by
// invalidation after a change, so a screen never hand-writes a loading flag,
// a request-sequence guard or a retry.
//
//   const vols = createQuery(() => ({
//     queryKey: envKey(env, 'volumes'),
//     queryFn: () => unwrap(client.GET('/api/volumes', { params: { query: { env } } })),
//     enabled: env !== null,
//   }), qc);
//   … vols.data, vols.isPending, vols.error (an ApiError), vols.refetch()
//   after a change: invalidateEnv(env, 'volumes')
import { QueryCache, QueryClient, type QueryKey } from '@tanstack/svelte-query';
import { ApiError, onMutated } from './api';

/** Whether a failed read is worth asking again: the server unreachable, 5xx, 408, 429. */
export function retryable(err: unknown): boolean {
  if (!(err instanceof ApiError)) return true;
  return err.status === 0 || err.status >= 500 || err.status === 408 || err.status === 429;
}

/** Back-off before retry n (0-based): 1 s, 2 s, 4 s … capped at 15 s. */
export function backoff(n: number): number {
  return Math.min(1000 * 2 ** n, 15_000);
}

export const MAX_RETRIES = 4;

export function newQueryClient(): QueryClient {
  const client: QueryClient = new QueryClient({
    // A read of an environment that failed on the server's side may mean its
    // engine went away: its status (EnvironmentBanner) is asked again now
    // rather than at its next interval.
    queryCache: new QueryCache({
      onError: (err, query) => {
        const [scope, env, what] = query.queryKey;
        if (scope === 'env' && what !== 'status' && retryable(err)) {
          client.invalidateQueries({ queryKey: ['env', env, 'status'] });
        }
      },
    }),
    defaultOptions: {
      queries: {
        retry: (n, err) => n < MAX_RETRIES && retryable(err),
        retryDelay: backoff,
        refetchOnWindowFocus: true,
        refetchOnReconnect: true,
        staleTime: 5_000,
      },
      mutations: { retry: false },
    },
  });
  return client;
}

/** The console's client (App.svelte provides it; screens pass `qc` so they also run alone in unit tests). */
export const queryClient = newQueryClient();

// Whatever a request changed, the cached reads may no longer say: they are
// marked stale (the shown ones read again now, the others when next shown).
onMutated(() => void queryClient.invalidateQueries());

/** Accessor form for createQuery/createMutation's second argument. */
export const qc = () => queryClient;

/** The key of a read of one environment: ['env', id, ...rest]. */
export function envKey(env: number | null, ...rest: unknown[]): QueryKey {
  return ['env', env, ...rest];
}

/** Refreshes every read of environment env under rest (all of them without rest). */
export function invalidateEnv(env: number | null, ...rest: unknown[]): Promise<void> {
  return queryClient.invalidateQueries({ queryKey: envKey(env, ...rest) });
}

/**
 * Drops what a change removed from the cached lists of environment env under
 * what (keeping the items keep accepts), so a list shown next, before it is
 * read again, never shows the removed item.
 */
export function forgetFromLists<T>(env: number | null, what: string, keep: (item: T) => boolean): void {
  queryClient.setQueriesData<unknown>({ queryKey: envKey(env, what), exact: true }, (old: unknown) => (Array.isArray(old) ? (old as T[]).filter(keep) : old));
}
