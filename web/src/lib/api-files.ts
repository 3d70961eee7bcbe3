// What of a container's file browser the typed client (client.ts) does not
// serve: the download address (a link the browser follows, a tar) and paths.
import { buildUrl } from './api';

const seg = encodeURIComponent;

/** The download address of a file or directory as a tar. */
export function downloadUrl(env: number, id: string, path: string): string {
  return buildUrl(`/api/containers/${seg(id)}/files/download`, { env, path });
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
