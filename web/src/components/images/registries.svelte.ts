// The configured registries, read through the data layer (the key the
// Registries screen uses), for the pull and push dialogs.
import { createQuery } from '@tanstack/svelte-query';
import type * as images from '../../lib/api-images';
import { client, unwrap } from '../../lib/client';
import { qc } from '../../lib/query';

export function createRegistriesQuery() {
  return createQuery(
    () => ({
      queryKey: ['registries'],
      queryFn: async () => {
        const res = await unwrap(client.GET('/api/registries'));
        return (Array.isArray(res) ? res : []) as images.Registry[];
      },
    }),
    qc,
  );
}
