// Answer shapes of the remaining operations of the reference inventory
// (server side in server/internal/api/routes_inventory.go), for what the
// console reads of them through the typed client (client.ts).
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

export interface DetectedSocket {
  path: string;
  kind: 'docker' | 'podman';
  exists: boolean;
  reachable: boolean;
  serverVersion?: string;
  error?: string;
}

/** Where an environment's icon is served (404 when it has none). */
export const environmentIconUrl = (id: number) => `/api/environments/${id}/icon`;

/** Where the signed-in user's avatar is served (404 when they have none). */
export const avatarUrl = '/api/profile/avatar';

export interface PictureSaved {
  success: boolean;
  contentType: string;
  size: number;
  url: string;
}

export interface FavoriteGroup {
  name: string;
  containers: string[];
}

export type GridPreferences = Record<string, { columns: unknown[] }>;

export interface ChangelogEntry {
  version: string;
  date: string;
  changes: string[];
}
