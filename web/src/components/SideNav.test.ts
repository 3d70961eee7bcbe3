import { cleanup, render, screen } from '@testing-library/svelte';
import { afterEach, describe, expect, it } from 'vitest';
import { session } from '../lib/session.svelte';
import SideNav from './SideNav.svelte';

afterEach(() => cleanup());

describe('SideNav', () => {
  it('shows Backups only to a user who may view backups', () => {
    session.environments = [{ id: 1, name: 'local', connectionType: 'socket' }];
    session.envId = 1;
    session.session = { authenticated: true, authEnabled: true, user: { id: 3, username: 'n', isAdmin: false, permissions: { containers: ['view'] } } } as never;
    const r = render(SideNav);
    expect(screen.getByRole('link', { name: 'Containers' })).toBeTruthy();
    expect(screen.queryByRole('link', { name: 'Backups' })).toBeNull();
    r.unmount();

    session.session = {
      authenticated: true,
      authEnabled: true,
      user: { id: 2, username: 'v', isAdmin: false, permissions: {}, environmentPermissions: { '1': { backups: ['view'] } } },
    } as never;
    render(SideNav);
    expect(screen.getByRole('link', { name: 'Backups' }).getAttribute('href')).toBe('/backups');
  });
});
