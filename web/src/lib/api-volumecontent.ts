// Typed calls of volume browsing, cloning and exports and of image exports
// (server/internal/api/volumecontent.go). Same rules as api.ts.
import { buildUrl, request } from './api';

const seg = encodeURIComponent;

export type EntryType = 'file' | 'directory' | 'symlink' | 'other';

export interface VolumeEntry {
  name: string;
  type: EntryType;
  size: number;
  /** As ls shows it: drwxr-xr-x. */
  mode: string;
  /** RFC 3339. */
  modified: string;
  linkTarget: string;
}

export interface VolumeListing {
  path: string;
  entries: VolumeEntry[];
}

export interface VolumeFile {
  path: string;
  size: number;
  modified: string;
  content: string;
}

export function browseVolume(env: number, name: string, path: string, signal?: AbortSignal): Promise<VolumeListing> {
  return request('GET', `/api/volumes/${seg(name)}/browse`, { query: { env, path }, signal });
}

export function readVolumeFile(env: number, name: string, path: string): Promise<VolumeFile> {
  return request('GET', `/api/volumes/${seg(name)}/browse/content`, { query: { env, path } });
}

export function releaseVolumeBrowse(env: number, name: string): Promise<{ success: boolean; released: boolean }> {
  return request('POST', `/api/volumes/${seg(name)}/browse/release`, { query: { env } });
}

export function cloneVolume(env: number, name: string, target: string): Promise<{ success: boolean; name: string }> {
  return request('POST', `/api/volumes/${seg(name)}/clone`, { query: { env }, body: { name: target } });
}

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
export function sortEntries(entries: VolumeEntry[]): VolumeEntry[] {
  return [...entries].sort((a, b) => {
    const da = a.type === 'directory' ? 0 : 1;
    const db = b.type === 'directory' ? 0 : 1;
    return da - db || a.name.localeCompare(b.name);
  });
}
