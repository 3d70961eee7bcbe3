// Typed calls of a container's file browser, shells and in-place update
// (server/internal/api/files.go). Same rules as api.ts.
import { ApiError, buildUrl, request } from './api';

const seg = encodeURIComponent;

export type FileType = 'file' | 'directory' | 'symlink' | 'other';

export interface FileEntry {
  name: string;
  path: string;
  type: FileType;
  size: number;
  /** Octal permission bits: "0644". */
  mode: string;
  /** As ls shows them: -rw-r--r--. */
  permissions: string;
  modified: string;
  /** As written in the link; never followed. */
  linkTarget?: string;
  uid: number;
  gid: number;
}

export interface FileListing {
  path: string;
  entries: FileEntry[];
  truncated: boolean;
}

export interface FileContent {
  path: string;
  content: string;
  size: number;
  mode: string;
  modified: string;
}

export function listFiles(env: number, id: string, path: string, signal?: AbortSignal): Promise<FileListing> {
  return request('GET', `/api/containers/${seg(id)}/files`, { query: { env, path }, signal });
}

export function readFile(env: number, id: string, path: string): Promise<FileContent> {
  return request('GET', `/api/containers/${seg(id)}/files/content`, { query: { env, path } });
}

export function writeFile(env: number, id: string, path: string, content: string): Promise<{ success: boolean }> {
  return request('PUT', `/api/containers/${seg(id)}/files/content`, { query: { env }, body: { path, content } });
}

export function createFile(env: number, id: string, path: string, type: 'file' | 'directory'): Promise<{ success: boolean }> {
  return request('POST', `/api/containers/${seg(id)}/files/create`, { query: { env }, body: { path, type } });
}

export function deleteFile(env: number, id: string, path: string): Promise<{ success: boolean }> {
  return request('DELETE', `/api/containers/${seg(id)}/files/delete`, { query: { env, path } });
}

export function renameFile(env: number, id: string, path: string, newPath: string): Promise<{ success: boolean }> {
  return request('POST', `/api/containers/${seg(id)}/files/rename`, { query: { env }, body: { path, newPath } });
}

/** The download address of a file or directory as a tar. */
export function downloadUrl(env: number, id: string, path: string): string {
  return buildUrl(`/api/containers/${seg(id)}/files/download`, { env, path });
}

/** Uploads files into directory dir (multipart; the server's limit answers 413). */
export async function uploadFiles(env: number, id: string, dir: string, files: File[]): Promise<{ success: boolean; files: string[] }> {
  const form = new FormData();
  for (const f of files) form.append('file', f, f.name);
  let res: Response;
  try {
    res = await fetch(buildUrl(`/api/containers/${seg(id)}/files/upload`, { env, path: dir }), {
      method: 'POST',
      body: form,
      credentials: 'same-origin',
      headers: { Accept: 'application/json' },
    });
  } catch {
    throw new ApiError(0, 'Cannot reach the Berth server');
  }
  const data = await res.json().catch(() => ({}));
  if (!res.ok) throw new ApiError(res.status, (data as { error?: string }).error || `Upload failed (${res.status})`, data);
  return data as { success: boolean; files: string[] };
}

// Paths inside a container, as inside a volume (file-paths.ts).
export { childPath, parentPath } from './file-paths';

/** Where a link leads, as a path: its target resolved against its directory. */
export function linkPath(dir: string, target: string): string {
  const parts = (target.startsWith('/') ? target : `${dir}/${target}`).split('/');
  const out: string[] = [];
  for (const p of parts) {
    if (p === '' || p === '.') continue;
    if (p === '..') out.pop();
    else out.push(p);
  }
  return '/' + out.join('/');
}
