import { describe, expect, it } from 'vitest';
import { containerPath, matchRoute, safeNext } from './routes';

describe('matchRoute', () => {
  it.each([
    ['/', { name: 'dashboard' }],
    ['/dashboard', { name: 'dashboard' }],
    ['/containers', { name: 'containers' }],
    ['/containers/', { name: 'containers' }],
    ['/containers/abc123', { name: 'container', id: 'abc123' }],
    ['/containers/my%20app', { name: 'container', id: 'my app' }],
    ['/login', { name: 'login' }],
    ['/setup', { name: 'setup' }],
    ['/containers/a/b', { name: 'notfound', path: '/containers/a/b' }],
    ['/nope', { name: 'notfound', path: '/nope' }],
    ['/containers/%E0%A4%A', { name: 'notfound', path: '/containers/%E0%A4%A' }],
  ])('%s', (path, route) => {
    expect(matchRoute(path)).toEqual(route);
  });

  it('round-trips container paths', () => {
    expect(matchRoute(containerPath('a/b c'))).toEqual({ name: 'container', id: 'a/b c' });
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
