// What of volume content and image exports the typed client (client.ts) does
// not serve: the download addresses (links the browser follows, tars), paths
// and the order of a listing (server/internal/api/volumecontent.go).
import { buildUrl } from './api';
import type { Schema } from './client';

const seg = encodeURIComponent;

export type VolumeEntry = Schema<'volumes.Entry'>;

/** The download address of a volume's content as a tar (gzip-compressed when asked). */
export function volumeExportUrl(env: number, name: string, gzip = false): string {
  return buildUrl(`/api/volumes/${seg(name)}/export`, { env, compress: gzip ? 'gzip' : undefined });
}

/** The download address of an image as a `docker load`-able tar. */
export function imageExportUrl(env: number, id: string): string {
  return buildUrl(`/api/images/${seg(id)}/export`, { env });
}

// Paths inside a volume, as inside a container (file-paths.ts).
export { childPath, parentPath } from './file-paths';

/** Directories first, then by name. */
export function sortEntries(entries: readonly VolumeEntry[]): VolumeEntry[] {
  return [...entries].sort((a, b) => {
    const da = a.type === 'directory' ? 0 : 1;
    const db = b.type === 'directory' ? 0 : 1;
    return da - db || a.name.localeCompare(b.name);
  });
}
