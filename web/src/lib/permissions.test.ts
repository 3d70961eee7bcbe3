import { describe, expect, it } from 'vitest';
import type { Session } from './api';
import { allows } from './session.svelte';

const operatorOn2: Session = {
  authenticated: true,
  authEnabled: true,
  user: {
    id: 2,
    username: 'op',
    isAdmin: false,
    permissions: { containers: ['view', 'stop'], settings: [] },
    environmentPermissions: { '2': { containers: ['view', 'stop'] } },
  },
};

describe('allows', () => {
  it('uses the permissions of the environment asked about', () => {
    expect(allows(operatorOn2, 'containers:stop', 2)).toBe(true);
    expect(allows(operatorOn2, 'containers:stop', 1)).toBe(false); // no grant covers 1
    expect(allows(operatorOn2, 'containers:remove', 2)).toBe(false);
  });

  it('uses the union for what is bound to no environment', () => {
    expect(allows(operatorOn2, 'containers:stop', null)).toBe(true);
    expect(allows(operatorOn2, 'settings:edit', null)).toBe(false);
  });

  it('allows everything to an admin, and to everyone while authentication is off', () => {
    const admin: Session = { authenticated: true, authEnabled: true, user: { id: 1, username: 'a', isAdmin: true } };
    expect(allows(admin, 'settings:edit', 7)).toBe(true);
    expect(allows({ authenticated: false, authEnabled: false }, 'containers:remove', 1)).toBe(true);
  });

  it('allows nothing without a session or a signed-in user', () => {
    expect(allows(null, 'containers:view', 1)).toBe(false);
    expect(allows({ authenticated: false, authEnabled: true }, 'containers:view', 1)).toBe(false);
  });

  it('honours a wildcard action', () => {
    const s: Session = { authenticated: true, authEnabled: true, user: { id: 3, username: 'w', isAdmin: false, permissions: { images: ['*'] } } };
    expect(allows(s, 'images:push', null)).toBe(true);
  });
});
