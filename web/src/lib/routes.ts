// Client-side routes. The server answers index.html for these paths, so they are
// plain History API paths (no hash). One table: the path pattern of every screen,
// the API areas it serves (checked against the server's route table by
// server/internal/api/console_test.go through areas.json) and its place in the
// main navigation.

/** Every screen of the console, in navigation order. `:x` is a path parameter. */
export const routeTable = [
  { name: 'dashboard', pattern: '/', nav: { label: 'Dashboard', group: '' } },
  { name: 'dashboardAlias', pattern: '/dashboard' },
  { name: 'containers', pattern: '/containers', nav: { label: 'Containers', group: 'Docker' } },
  { name: 'containerNew', pattern: '/containers/new', parent: 'containers' },
  { name: 'container', pattern: '/containers/:id', parent: 'containers' },
  { name: 'containerTerminal', pattern: '/containers/:id/terminal', parent: 'containers', bare: true },
  { name: 'images', pattern: '/images', nav: { label: 'Images', group: 'Docker' } },
  { name: 'image', pattern: '/images/:id', parent: 'images' },
  { name: 'vulnerabilities', pattern: '/vulnerabilities', nav: { label: 'Vulnerabilities', group: 'Docker' } },
  { name: 'volumes', pattern: '/volumes', nav: { label: 'Volumes', group: 'Docker' } },
  { name: 'volume', pattern: '/volumes/:name', parent: 'volumes' },
  { name: 'networks', pattern: '/networks', nav: { label: 'Networks', group: 'Docker' } },
  { name: 'network', pattern: '/networks/:id', parent: 'networks' },
  { name: 'logs', pattern: '/logs', nav: { label: 'Logs', group: 'Docker' } },
  { name: 'stacks', pattern: '/stacks', nav: { label: 'Stacks', group: 'Docker' } },
  { name: 'stackNew', pattern: '/stacks/new', parent: 'stacks' },
  { name: 'stack', pattern: '/stacks/:name', parent: 'stacks' },
  { name: 'templates', pattern: '/templates', nav: { label: 'Templates', group: 'Docker' } },
  { name: 'configSets', pattern: '/config-sets', nav: { label: 'Config sets', group: 'Docker' } },
  { name: 'gitStack', pattern: '/git/stacks/:id', parent: 'stacks' },
  { name: 'schedules', pattern: '/schedules', nav: { label: 'Schedules', group: 'Docker' } },
  { name: 'activity', pattern: '/activity', nav: { label: 'Activity', group: 'Docker' } },
  { name: 'backups', pattern: '/backups', nav: { label: 'Backups', group: 'Docker', perm: 'backups:view' } },
  { name: 'git', pattern: '/git', nav: { label: 'Git', group: 'Sources' } },
  { name: 'registries', pattern: '/registries', nav: { label: 'Registries', group: 'Sources' } },
  { name: 'registryBrowse', pattern: '/registries/:id/browse', parent: 'registries' },
  { name: 'notifications', pattern: '/notifications', nav: { label: 'Notifications', group: 'Administration' } },
  { name: 'environments', pattern: '/environments', nav: { label: 'Environments', group: 'Administration' } },
  { name: 'environmentNew', pattern: '/environments/new', parent: 'environments' },
  { name: 'environment', pattern: '/environments/:id', parent: 'environments' },
  { name: 'labels', pattern: '/labels', nav: { label: 'Labels', group: 'Administration' } },
  { name: 'users', pattern: '/users', nav: { label: 'Users', group: 'Administration', admin: true } },
  { name: 'roles', pattern: '/roles', nav: { label: 'Roles', group: 'Administration', admin: true } },
  { name: 'audit', pattern: '/audit', nav: { label: 'Audit log', group: 'Administration', admin: true } },
  { name: 'settings', pattern: '/settings', nav: { label: 'Settings', group: 'Administration', admin: true } },
  { name: 'license', pattern: '/license', nav: { label: 'License', group: 'Administration', admin: true } },
  { name: 'system', pattern: '/system', nav: { label: 'System', group: 'Administration', admin: true } },
  { name: 'profile', pattern: '/profile' },
  { name: 'login', pattern: '/login', public: true },
  { name: 'setup', pattern: '/setup', public: true },
] as const satisfies readonly RouteDef[];

interface RouteDef {
  name: string;
  pattern: string;
  /** In the main navigation, under a group heading ('' = no heading). */
  nav?: { label: string; group: string; admin?: boolean; perm?: string };
  /** The navigation entry that is current while this screen is shown. */
  parent?: string;
  /** Shown without signing in, outside the app shell. */
  public?: boolean;
  /** Signed in, but the whole window (no top bar or menu): the standalone terminal. */
  bare?: boolean;
}

export type RouteName = (typeof routeTable)[number]['name'] | 'notfound';

export interface Route {
  name: RouteName;
  /** Decoded path parameters, by the names of the pattern. */
  params: Record<string, string>;
  /** The path as asked (for the not-found page). */
  path: string;
}

/** Routes shown without signing in (they render outside the app shell). */
export const publicRoutes: ReadonlySet<RouteName> = new Set(
  routeTable.filter((r) => 'public' in r && r.public).map((r) => r.name),
);

/** Routes that fill the window without the app shell (signed in). */
export const bareRoutes: ReadonlySet<RouteName> = new Set(routeTable.filter((r) => 'bare' in r && r.bare).map((r) => r.name));

const compiled = routeTable.map((r) => {
  const keys: string[] = [];
  const src = r.pattern.replace(/:([A-Za-z]+)/g, (_, k: string) => {
    keys.push(k);
    return '([^/]+)';
  });
  return { name: r.name as RouteName, re: new RegExp(`^${src}$`), keys };
});

export function matchRoute(pathname: string): Route {
  const p = pathname.replace(/\/+$/, '') || '/';
  for (const c of compiled) {
    const m = c.re.exec(p);
    if (!m) continue;
    const params: Record<string, string> = {};
    try {
      c.keys.forEach((k, i) => (params[k] = decodeURIComponent(m[i + 1])));
    } catch {
      return { name: 'notfound', params: {}, path: pathname };
    }
    return { name: c.name === 'dashboardAlias' ? 'dashboard' : c.name, params, path: pathname };
  }
  return { name: 'notfound', params: {}, path: pathname };
}

/** The navigation entry current on a screen: itself or its parent. */
export function navOwner(name: RouteName): string {
  const def = routeTable.find((r) => r.name === name);
  return def && 'parent' in def ? def.parent : name;
}

export function containerPath(id: string): string {
  return `/containers/${encodeURIComponent(id)}`;
}

/** Path of a screen with a parameter, e.g. pathTo('/images/:id', {id}). */
export function pathTo(pattern: string, params: Record<string, string | number>): string {
  return pattern.replace(/:([A-Za-z]+)/g, (_, k: string) => encodeURIComponent(String(params[k] ?? '')));
}

/** Accepts only a same-site path for post-login redirects ("next"), never another origin. */
export function safeNext(next: string | null | undefined): string {
  if (!next || !next.startsWith('/') || next.startsWith('//') || next.startsWith('/\\')) return '/';
  if (next.startsWith('/login') || next.startsWith('/setup') || next.startsWith('/api')) return '/';
  return next;
}
