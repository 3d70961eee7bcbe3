import { describe, expect, it } from 'vitest';
import { breadcrumbs, childPath, parentPath } from './file-paths';

describe('file paths', () => {
  it('joins a child to its directory, the root included', () => {
    expect(childPath('/', 'a')).toBe('/a');
    expect(childPath('/a', 'b')).toBe('/a/b');
  });
  it('finds the parent, the root being its own', () => {
    expect(parentPath('/a/b')).toBe('/a');
    expect(parentPath('/a')).toBe('/');
    expect(parentPath('/')).toBe('/');
  });
  it('lists the breadcrumbs below the root', () => {
    expect(breadcrumbs('/')).toEqual([]);
    expect(breadcrumbs('/srv/data/x')).toEqual([
      { name: 'srv', path: '/srv' },
      { name: 'data', path: '/srv/data' },
      { name: 'x', path: '/srv/data/x' },
    ]);
  });
});
