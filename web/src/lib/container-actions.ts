// The container lifecycle requests of the typed client, one place for the
// containers list and a container's page.
import { client } from './client';
import type { LifecycleAction } from './containers';

/** Starts, stops, restarts, pauses or unpauses container id (or name) of environment envId. */
export function lifecycleCall(envId: number, id: string, action: LifecycleAction) {
  const params = { params: { path: { id }, query: { env: envId } } };
  switch (action) {
    case 'start':
      return client.POST('/api/containers/{id}/start', params);
    case 'stop':
      return client.POST('/api/containers/{id}/stop', params);
    case 'restart':
      return client.POST('/api/containers/{id}/restart', params);
    case 'pause':
      return client.POST('/api/containers/{id}/pause', params);
    case 'unpause':
      return client.POST('/api/containers/{id}/unpause', params);
  }
}
