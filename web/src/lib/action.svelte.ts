// A change a screen makes and reports in words: a mutation of the data layer
// whose outcome becomes the screen's notice ("Volume x removed.") or error
// ("Remove x: <the server's message>"), after which the environment's reads
// under `refresh` are refreshed. Create it while the component initialises.
//
//   const remove = new EnvAction<Volume>(() => ({
//     env, refresh: ['volumes'],
//     run: (v) => unwrap(client.DELETE(…)),
//     done: (v) => `Volume ${v.name} removed.`,
//     failed: (v) => `Remove ${v.name}`,
//   }));
//   remove.run(v); remove.pending; remove.notice; remove.error
import { createMutation } from '@tanstack/svelte-query';
import { errorText } from '../components/infra/errors';
import { invalidateEnv, qc } from './query';

export interface EnvActionOptions<V> {
  env: number | null;
  /** The key parts (after the environment) of the reads the change affects. */
  refresh: unknown[];
  run: (v: V) => Promise<unknown>;
  done: (v: V) => string;
  failed: (v: V) => string;
}

export class EnvAction<V> {
  notice = $state<string | null>(null);
  error = $state<string | null>(null);
  readonly #m;

  constructor(opts: () => EnvActionOptions<V>) {
    this.#m = createMutation(() => {
      const o = opts();
      return {
        mutationFn: (v: V) => o.run(v),
        onSuccess: (_d: unknown, v: V) => {
          this.notice = o.done(v);
        },
        onError: (e: unknown, v: V) => {
          this.error = `${o.failed(v)}: ${errorText(e)}`;
        },
        onSettled: () => invalidateEnv(o.env, ...o.refresh),
      };
    }, qc);
  }

  get pending(): boolean {
    return this.#m.isPending;
  }

  /** The value the change is running for (undefined when none runs). */
  get running(): V | undefined {
    return this.#m.isPending ? this.#m.variables : undefined;
  }

  /** Runs the change; resolves once it settled (the outcome is in notice or error). */
  async run(v: V): Promise<void> {
    this.notice = null;
    this.error = null;
    await this.#m.mutateAsync(v).catch(() => {});
  }

  /** Says something else (a creation done by a form) in the same place. */
  say(notice: string | null, error: string | null = null): void {
    this.notice = notice;
    this.error = error;
  }
}
