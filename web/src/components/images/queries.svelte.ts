// The image screens' shared reads (the list and its image page), so both ask
// under the same keys and share one cached answer.
import { createQuery } from '@tanstack/svelte-query';
import type * as images from '../../lib/api-images';
import { client, unwrap } from '../../lib/client';
import { envKey, qc } from '../../lib/query';
import { countContainers } from './grouping';

/** The images of env (enabled: whether to read now). */
export function createImagesQuery(env: () => number | null, enabled: () => boolean = () => true) {
  return createQuery(
    () => ({
      queryKey: envKey(env(), 'images'),
      queryFn: async () => {
        const imgs = await unwrap(client.GET('/api/images', { params: { query: { env: env() ?? undefined } } }));
        return (Array.isArray(imgs) ? imgs : []) as images.ImageSummary[];
      },
      enabled: env() !== null && enabled(),
    }),
    qc,
  );
}

/** How many containers use each image of env (by image id): a nicety the engine may not count, never retried. */
export function createImageUsesQuery(env: () => number | null, enabled: () => boolean = () => true) {
  return createQuery(
    () => ({
      queryKey: envKey(env(), 'images', 'uses'),
      queryFn: async () => {
        const ctrs = await unwrap(client.GET('/api/containers', { params: { query: { env: env() ?? undefined, all: true } } }));
        return countContainers(Array.isArray(ctrs) ? (ctrs as images.ContainerImageRef[]) : []);
      },
      enabled: env() !== null && enabled(),
      retry: false,
    }),
    qc,
  );
}
