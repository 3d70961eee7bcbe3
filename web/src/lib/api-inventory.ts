// The remaining operations of the reference inventory (server side in
// server/internal/api/routes_inventory.go): update checks and batch updates
// of containers, engine socket detection, environment icons and the user's
// avatar, favourites and grid preferences, the changelog and the linked
// dependencies.
import { request } from './api';

export interface PendingUpdate {
  containerName: string;
  containerId: string;
  image: string;
  currentImageId: string;
  newDigest: string;
  checkedAt: string;
}

export interface CheckUpdatesResult {
  success: boolean;
  pendingUpdates: PendingUpdate[];
  count: number;
  notChecked: { container: string; error: string }[];
}

/** Checks the environment's containers for newer images and records them as pending (synchronous answer). */
export function checkUpdates(env: number): Promise<CheckUpdatesResult> {
  return request('POST', '/api/containers/check-updates', { query: { env } });
}

export interface BatchResult {
  container: string;
  name?: string;
  status: 'updated' | 'up_to_date' | 'skipped' | 'failed';
  success: boolean;
  newContainerId?: string;
  newImageId?: string;
  message?: string;
  error?: string;
}

export interface BatchUpdateResult {
  success: boolean;
  results: BatchResult[];
  summary: { total: number; updated: number; upToDate: number; skipped: number; failed: number };
}

/** Updates the containers (ids or names) one after the other; answers when all are done. */
export function batchUpdate(env: number, containerIds: string[]): Promise<BatchUpdateResult> {
  return request('POST', '/api/containers/batch-update', { query: { env }, body: { containerIds } });
}

export interface DetectedSocket {
  path: string;
  kind: 'docker' | 'podman';
  exists: boolean;
  reachable: boolean;
  serverVersion?: string;
  error?: string;
}

export function detectSocket(): Promise<{ sockets: DetectedSocket[]; recommended: string }> {
  return request('GET', '/api/environments/detect-socket');
}

/** Where an environment's icon is served (404 when it has none). */
export const environmentIconUrl = (id: number) => `/api/environments/${id}/icon`;

/** Where the signed-in user's avatar is served (404 when they have none). */
export const avatarUrl = '/api/profile/avatar';

/** Reads a file as a data URL, the form the picture uploads take. */
export function fileToDataUrl(file: Blob): Promise<string> {
  return new Promise((resolve, reject) => {
    const r = new FileReader();
    r.onload = () => resolve(String(r.result));
    r.onerror = () => reject(r.error);
    r.readAsDataURL(file);
  });
}

export interface PictureSaved {
  success: boolean;
  contentType: string;
  size: number;
  url: string;
}

export function setEnvironmentIcon(id: number, dataUrl: string): Promise<PictureSaved> {
  return request('POST', environmentIconUrl(id), { body: { icon: dataUrl } });
}

export function deleteEnvironmentIcon(id: number): Promise<{ success: boolean }> {
  return request('DELETE', environmentIconUrl(id));
}

export function setAvatar(dataUrl: string): Promise<PictureSaved> {
  return request('POST', avatarUrl, { body: { avatar: dataUrl } });
}

export function deleteAvatar(): Promise<{ success: boolean }> {
  return request('DELETE', avatarUrl);
}

export function getFavorites(env: number): Promise<{ favorites: string[] }> {
  return request('GET', '/api/preferences/favorites', { query: { env } });
}

export function changeFavorites(
  environmentId: number,
  change: { action: 'add' | 'remove' | 'toggle'; containerName: string } | { action: 'reorder' | 'set'; favorites: string[] },
): Promise<{ success: boolean; favorites: string[] }> {
  return request('POST', '/api/preferences/favorites', { body: { environmentId, ...change } });
}

export interface FavoriteGroup {
  name: string;
  containers: string[];
}

export function getFavoriteGroups(env: number): Promise<{ groups: FavoriteGroup[] }> {
  return request('GET', '/api/preferences/favorite-groups', { query: { env } });
}

export function changeFavoriteGroups(
  environmentId: number,
  change:
    | { action: 'add' | 'update'; name: string; containers: string[] }
    | { action: 'rename'; name: string; newName: string }
    | { action: 'remove'; name: string }
    | { action: 'reorder' | 'set'; groups: FavoriteGroup[] },
): Promise<{ success: boolean; groups: FavoriteGroup[] }> {
  return request('POST', '/api/preferences/favorite-groups', { body: { environmentId, ...change } });
}

export type GridPreferences = Record<string, { columns: unknown[] }>;

export function getGridPreferences(): Promise<{ preferences: GridPreferences }> {
  return request('GET', '/api/preferences/grid');
}

export function setGridColumns(gridId: string, columns: unknown[]): Promise<{ success: boolean; preferences: GridPreferences }> {
  return request('POST', '/api/preferences/grid', { body: { gridId, columns } });
}

export function resetGrid(gridId?: string): Promise<{ success: boolean; preferences: GridPreferences }> {
  return request('DELETE', '/api/preferences/grid', { query: gridId ? { gridId } : undefined });
}

export interface ChangelogEntry {
  version: string;
  date: string;
  changes: string[];
}
