// Client-side routes. The server answers index.html for these paths, so they are
// plain History API paths (no hash).

export type Route =
  | { name: 'dashboard' }
  | { name: 'containers' }
  | { name: 'container'; id: string }
  | { name: 'login' }
  | { name: 'setup' }
  | { name: 'notfound'; path: string };

/** Routes shown without signing in (they render outside the app shell). */
export const publicRoutes: ReadonlySet<Route['name']> = new Set(['login', 'setup']);

export function matchRoute(pathname: string): Route {
  let p = pathname.replace(/\/+$/, '') || '/';
  if (p === '/' || p === '/dashboard') return { name: 'dashboard' };
  if (p === '/containers') return { name: 'containers' };
  if (p === '/login') return { name: 'login' };
  if (p === '/setup') return { name: 'setup' };
  const m = /^\/containers\/([^/]+)$/.exec(p);
  if (m) {
    try {
      return { name: 'container', id: decodeURIComponent(m[1]) };
    } catch {
      return { name: 'notfound', path: pathname };
    }
  }
  return { name: 'notfound', path: pathname };
}

export function containerPath(id: string): string {
  return `/containers/${encodeURIComponent(id)}`;
}

/** Accepts only a same-site path for post-login redirects ("next"), never another origin. */
export function safeNext(next: string | null | undefined): string {
  if (!next || !next.startsWith('/') || next.startsWith('//') || next.startsWith('/\\')) return '/';
  if (next.startsWith('/login') || next.startsWith('/setup') || next.startsWith('/api')) return '/';
  return next;
}
