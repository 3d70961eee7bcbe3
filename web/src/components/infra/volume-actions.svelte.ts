// The volume screens' shared change: removing a volume (the list and a
// volume's page run it the same way and say the same).
import { EnvAction } from '../../lib/action.svelte';
import { client, unwrap } from '../../lib/client';
import { forgetFromLists } from '../../lib/query';

/** Removes a volume of env() (force: even while a stopped container refers to it). */
export function removeVolumeAction(env: () => number | null): EnvAction<{ name: string; force: boolean }> {
  return new EnvAction<{ name: string; force: boolean }>(() => ({
    env: env(),
    refresh: ['volumes'],
    run: async (v) => {
      const r = await unwrap(
        client.DELETE('/api/volumes/{name}', { params: { path: { name: v.name }, query: { env: env() ?? undefined, force: v.force } } }),
      );
      forgetFromLists<{ name: string }>(env(), 'volumes', (x) => x.name !== v.name);
      return r;
    },
    done: (v) => `Volume ${v.name} removed.`,
    failed: (v) => `Remove ${v.name}`,
  }));
}
