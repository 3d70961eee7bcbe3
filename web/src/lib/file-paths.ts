// Paths inside a container or a volume as the file browsers show them
// (absolute, cleaned by the server): children, parents and breadcrumbs.

/** The path of a child of dir. */
export function childPath(dir: string, name: string): string {
  return dir === '/' ? `/${name}` : `${dir}/${name}`;
}

/** The parent directory of a path ("/" for the root). */
export function parentPath(p: string): string {
  const i = p.lastIndexOf('/');
  return i <= 0 ? '/' : p.slice(0, i);
}

/** The breadcrumbs of a path below the root: each part with the path up to it ("/" has none). */
export function breadcrumbs(p: string): { name: string; path: string }[] {
  const parts = p.split('/').filter(Boolean);
  return parts.map((name, i) => ({ name, path: '/' + parts.slice(0, i + 1).join('/') }));
}
