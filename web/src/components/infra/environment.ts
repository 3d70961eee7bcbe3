// The data layer's read of one environment (GET /api/environments/{id}): the
// environment's page and its agent panels share it, so a panel that polls
// refreshes what the page shows.
import type { EnvironmentDetail } from '../../lib/api-infra';
import { client, unwrap } from '../../lib/client';
import { envKey } from '../../lib/query';

export function environmentRead(id: number) {
  return {
    queryKey: envKey(id, 'environment'),
    queryFn: async () => (await unwrap(client.GET('/api/environments/{id}', { params: { path: { id } } }))) as EnvironmentDetail,
  };
}
