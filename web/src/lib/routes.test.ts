import { describe, expect, it } from 'vitest';
import { containerPath, matchRoute, navOwner, pathTo, routeTable, safeNext } from './routes';
import areas from './areas.json';

describe('matchRoute', () => {
  it.each([
    ['/', 'dashboard', {}],
    ['/dashboard', 'dashboard', {}],
    ['/containers', 'containers', {}],
    ['/containers/', 'containers', {}],
    ['/containers/new', 'containerNew', {}],
    ['/containers/abc123', 'container', { id: 'abc123' }],
    ['/containers/my%20app', 'container', { id: 'my app' }],
    ['/stacks/web', 'stack', { name: 'web' }],
    ['/git/stacks/3', 'gitStack', { id: '3' }],
    ['/login', 'login', {}],
    ['/setup', 'setup', {}],
    ['/containers/a/b', 'notfound', {}],
    ['/nope', 'notfound', {}],
    ['/containers/%E0%A4%A', 'notfound', {}],
  ])('%s', (path, name, params) => {
    const r = matchRoute(path);
    expect(r.name).toBe(name);
    expect(r.params).toEqual(params);
    expect(r.path).toBe(path);
  });

  it('round-trips container paths', () => {
    expect(matchRoute(containerPath('a/b c')).params).toEqual({ id: 'a/b c' });
    expect(matchRoute(pathTo('/volumes/:name', { name: 'x y' })).params).toEqual({ name: 'x y' });
  });

  it('names the navigation entry of a detail screen', () => {
    expect(navOwner('container')).toBe('containers');
    expect(navOwner('images')).toBe('images');
  });
});

describe('areas.json', () => {
  it('names only screens that exist', () => {
    for (const [area, paths] of Object.entries(areas.screens)) {
      for (const p of paths) {
        expect(matchRoute(p).name, `${area}: ${p}`).not.toBe('notfound');
      }
    }
  });

  it('every navigation entry is a screen of some area', () => {
    const covered = new Set(Object.values(areas.screens).flat().map((p) => matchRoute(p).name));
    for (const r of routeTable) {
      if ('nav' in r) expect(covered.has(r.name), r.name).toBe(true);
    }
  });
});

describe('safeNext', () => {
  it('keeps same-site paths only', () => {
    expect(safeNext('/containers?x=1')).toBe('/containers?x=1');
    expect(safeNext('https://evil.example/')).toBe('/');
    expect(safeNext('//evil.example/')).toBe('/');
    expect(safeNext('/\\evil.example')).toBe('/');
    expect(safeNext('/login?next=/x')).toBe('/');
    expect(safeNext('/api/auth/logout')).toBe('/');
    expect(safeNext(null)).toBe('/');
  });
});
