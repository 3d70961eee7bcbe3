import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../lib/api';
import type * as admin from '../lib/api-admin';
import { session } from '../lib/session.svelte';
import { stubApi, type StubApi } from '../test-api';
import { expectNoSeriousAxeViolations } from '../test-axe';
import UsersScreen from './UsersScreen.svelte';

const base = { mfaEnabled: false, isActive: true, authProvider: 'local', lastLogin: null, createdAt: '2025-01-01T00:00:00Z' };
const users: admin.AdminUser[] = [
  { ...base, id: 1, username: 'admin', displayName: 'The Admin', email: 'admin@example.com', isAdmin: true, lastLogin: '2025-02-01T10:00:00Z' },
  { ...base, id: 2, username: 'alice', displayName: '', email: 'alice@example.com', isAdmin: false, authProvider: 'ldap:Corp' },
];
const roles: admin.Role[] = [
  { id: 1, name: 'Admin', description: '', permissions: {}, environmentIds: null, isSystem: true },
  { id: 3, name: 'Viewer', description: '', permissions: { containers: ['view'] }, environmentIds: null, isSystem: true },
];

beforeEach(() => {
  session.session = { authenticated: true, authEnabled: true, user: { id: 1, username: 'admin', isAdmin: true } };
  session.environments = [
    { id: 1, name: 'local', connectionType: 'socket' },
    { id: 2, name: 'prod', connectionType: 'direct' },
  ];
  api = stubApi({
    'GET /api/users': users,
    'GET /api/roles': roles,
    'DELETE /api/users/2': { success: true },
    'GET /api/users/2/roles': [],
  });
});
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  session.session = null;
  session.environments = [];
});

let api: StubApi;
const one = (route: string) => {
  const c = api.called(route);
  expect(c).toHaveLength(1);
  return c[0];
};

const rowOf = (name: string) =>
  screen.getAllByRole('row').find((r) => (r as HTMLTableRowElement).cells[0].textContent?.trim().split(/\s+/)[0] === name)!;

describe('UsersScreen', () => {
  it('lists the users with provider, status and last sign-in', async () => {
    render(UsersScreen);
    expect(screen.getByRole('heading', { level: 1, name: 'Users' })).toBeTruthy();
    await screen.findByRole('table');
    const admin1 = within(rowOf('admin'));
    expect(admin1.getByText('(you)')).toBeTruthy();
    expect(admin1.getByText('Admin')).toBeTruthy();
    const alice = within(rowOf('alice'));
    expect(alice.getByText('LDAP (Corp)')).toBeTruthy();
    expect(alice.getByText('never')).toBeTruthy();
    // nobody deletes themselves from here
    expect(screen.queryByRole('button', { name: 'Delete admin' })).toBeNull();
    expect(screen.getByRole('button', { name: 'Delete alice' })).toBeTruthy();
  });

  it('creates a user with a first role on one environment', async () => {
    const created = { ...base, id: 9, username: 'bob', displayName: 'Bob', email: '', isAdmin: false };
    api.routes['POST /api/users'] = created;
    api.routes['POST /api/users/9/roles'] = { id: 1, roleId: 3, roleName: 'Viewer', environmentId: 2, source: 'manual' };
    render(UsersScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'New user' }));
    const form = screen.getByRole('form', { name: 'New user' });
    const f = within(form);
    await fireEvent.input(f.getByLabelText('Username'), { target: { value: ' bob ' } });
    await fireEvent.input(f.getByLabelText('Display name'), { target: { value: 'Bob' } });
    await fireEvent.input(f.getByLabelText('Password'), { target: { value: 'bob-password-1' } });
    await fireEvent.change(f.getByLabelText('Role'), { target: { value: '3' } });
    await fireEvent.change(f.getByLabelText('On'), { target: { value: '2' } });
    api.routes['GET /api/users'] = [...users, created];
    await fireEvent.click(f.getByRole('button', { name: 'Create user' }));
    await waitFor(() => expect(api.called('POST /api/users/9/roles')).toHaveLength(1));
    expect(one('POST /api/users').body).toEqual({ username: 'bob', password: 'bob-password-1', displayName: 'Bob', isAdmin: false });
    expect(one('POST /api/users/9/roles').body).toEqual({ roleId: 3, environmentId: 2 });
    expect((await screen.findByRole('status', { name: '' })).textContent).toContain('bob created.');
    expect(screen.queryByRole('form', { name: 'New user' })).toBeNull();
    // the list is read again after the change
    expect(await screen.findByText('Bob')).toBeTruthy();
  });

  it('shows the server message when the user cannot be created', async () => {
    api.routes['POST /api/users'] = () => {
      throw new ApiError(409, 'A user with this username already exists');
    };
    render(UsersScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'New user' }));
    const f = within(screen.getByRole('form', { name: 'New user' }));
    await fireEvent.input(f.getByLabelText('Username'), { target: { value: 'alice' } });
    await fireEvent.input(f.getByLabelText('Password'), { target: { value: 'alice-password' } });
    await fireEvent.click(f.getByRole('button', { name: 'Create user' }));
    expect((await f.findByRole('alert')).textContent).toContain('A user with this username already exists');
  });

  it('edits a user and sends only what changed', async () => {
    api.routes['PUT /api/users/2'] = { ...users[1], displayName: 'Alice', isAdmin: true };
    render(UsersScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Edit alice' }));
    const f = within(screen.getByRole('form', { name: 'Edit alice' }));
    expect((f.getByLabelText('Username') as HTMLInputElement).readOnly).toBe(true);
    expect(f.queryByLabelText('New password')).toBeNull(); // an LDAP user has no local password
    await fireEvent.input(f.getByLabelText('Display name'), { target: { value: 'Alice' } });
    await fireEvent.click(f.getByLabelText(/Administrator/));
    await fireEvent.click(f.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(one('PUT /api/users/2').body).toEqual({ displayName: 'Alice', isAdmin: true }));
    expect(await screen.findByText('alice saved.')).toBeTruthy();
  });

  it('resets the password of a local user', async () => {
    api.routes['PUT /api/users/1'] = users[0];
    render(UsersScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Edit admin' }));
    const f = within(screen.getByRole('form', { name: 'Edit admin' }));
    await fireEvent.input(f.getByLabelText('New password'), { target: { value: 'another-password' } });
    await fireEvent.click(f.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(one('PUT /api/users/1').body).toEqual({ password: 'another-password' }));
  });

  it('deletes a user only after confirmation', async () => {
    render(UsersScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Delete alice' }));
    const dialog = screen.getByRole('dialog', { name: 'Delete alice?' });
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Cancel' }));
    expect(api.called('DELETE /api/users/2')).toHaveLength(0);
    api.routes['GET /api/users'] = users.slice(0, 1);
    await fireEvent.click(screen.getByRole('button', { name: 'Delete alice' }));
    await fireEvent.click(within(screen.getByRole('dialog')).getByRole('button', { name: 'Delete user' }));
    expect(await screen.findByText('alice deleted.')).toBeTruthy();
    one('DELETE /api/users/2');
    await waitFor(() => expect(screen.queryByRole('button', { name: 'Delete alice' })).toBeNull());
  });

  it('lists, assigns and removes the roles of a user', async () => {
    const assigned = [
      { id: 5, roleId: 3, roleName: 'Viewer', environmentId: null, source: 'manual' },
      { id: 6, roleId: 1, roleName: 'Admin', environmentId: 2, source: 'ldap:1' },
    ];
    api.routes['GET /api/users/2/roles'] = assigned;
    api.routes['POST /api/users/2/roles'] = { id: 7, roleId: 3, roleName: 'Viewer', environmentId: 1, source: 'manual' };
    api.routes['DELETE /api/users/2/roles'] = { success: true };
    render(UsersScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Roles of alice' }));
    const panel = within(screen.getByRole('region', { name: 'Roles of alice' }));
    const table = await panel.findByRole('table');
    expect(within(table).getByText('All environments')).toBeTruthy();
    expect(within(table).getByText('prod')).toBeTruthy();
    expect(within(table).getByText('directory mapping (ldap:1)')).toBeTruthy();

    await fireEvent.change(panel.getByLabelText('Role'), { target: { value: '3' } });
    await fireEvent.change(panel.getByLabelText('On'), { target: { value: '1' } });
    api.routes['GET /api/users/2/roles'] = [...assigned, { id: 7, roleId: 3, roleName: 'Viewer', environmentId: 1, source: 'manual' }];
    await fireEvent.click(panel.getByRole('button', { name: 'Assign role' }));
    await waitFor(() => expect(one('POST /api/users/2/roles').body).toEqual({ roleId: 3, environmentId: 1 }));
    // the assignments are read again: the new one is listed
    await waitFor(() => expect(within(table).getByText('local')).toBeTruthy());

    await fireEvent.click(panel.getByRole('button', { name: 'Remove Viewer on All environments' }));
    await fireEvent.click(within(screen.getByRole('dialog')).getByRole('button', { name: 'Remove role' }));
    await waitFor(() => expect(one('DELETE /api/users/2/roles').body).toEqual({ roleId: 3, environmentId: null }));
  });

  it("lets an admin disable another user's MFA after confirming", async () => {
    const withMfa = users.map((u) => ({ ...u, mfaEnabled: true }));
    api.routes['GET /api/users'] = withMfa;
    api.routes['DELETE /api/users/2/mfa'] = { success: true, message: 'MFA disabled' };
    render(UsersScreen);
    await screen.findByRole('table');
    // Not for the admin themself: their own MFA is the profile's business.
    expect(screen.queryByRole('button', { name: 'Disable MFA of admin' })).toBeNull();
    await fireEvent.click(screen.getByRole('button', { name: 'Disable MFA of alice' }));
    const dialog = screen.getByRole('dialog', { name: 'Disable two-factor authentication of alice?' });
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Cancel' }));
    expect(api.called('DELETE /api/users/2/mfa')).toHaveLength(0);
    expect(screen.queryByRole('dialog')).toBeNull();

    api.routes['GET /api/users'] = withMfa.map((u) => (u.id === 2 ? { ...u, mfaEnabled: false } : u));
    await fireEvent.click(screen.getByRole('button', { name: 'Disable MFA of alice' }));
    await fireEvent.input(within(screen.getByRole('dialog')).getByLabelText('Your password'), { target: { value: 'admin-password-1' } });
    await fireEvent.click(within(screen.getByRole('dialog')).getByRole('button', { name: 'Disable MFA' }));
    expect((await screen.findByRole('status')).textContent).toContain('Two-factor authentication disabled for alice.');
    expect(one('DELETE /api/users/2/mfa').body).toEqual({ password: 'admin-password-1' });
    await waitFor(() => expect(screen.queryByRole('button', { name: 'Disable MFA of alice' })).toBeNull());
    expect(within(rowOf('alice')).queryByText('MFA')).toBeNull();
  });

  it('shows why MFA could not be disabled', async () => {
    api.routes['GET /api/users'] = users.map((u) => ({ ...u, mfaEnabled: true }));
    api.routes['DELETE /api/users/2/mfa'] = () => {
      throw new ApiError(403, 'Permission denied');
    };
    render(UsersScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Disable MFA of alice' }));
    await fireEvent.click(within(screen.getByRole('dialog')).getByRole('button', { name: 'Disable MFA' }));
    expect((await screen.findByRole('alert')).textContent).toContain('Permission denied');
    expect(screen.getByRole('button', { name: 'Disable MFA of alice' })).toBeTruthy();
  });

  it('offers no MFA action to a user manager who is not an admin', async () => {
    session.session = {
      authenticated: true,
      authEnabled: true,
      user: { id: 5, username: 'eve', isAdmin: false, permissions: { users: ['view', 'edit'] } },
    };
    api.routes['GET /api/users'] = users.map((u) => ({ ...u, mfaEnabled: true }));
    render(UsersScreen);
    await screen.findByRole('table');
    expect(screen.queryByRole('button', { name: /Disable MFA/ })).toBeNull();
  });

  it('tells a user without the permission that they are not allowed', async () => {
    session.session = { authenticated: true, authEnabled: true, user: { id: 5, username: 'eve', isAdmin: false, permissions: {} } };
    api.routes['GET /api/users'] = () => {
      throw new ApiError(403, 'Permission denied');
    };
    render(UsersScreen);
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain('Not allowed.');
    expect(alert.textContent).toContain('Permission denied');
    expect(screen.queryByRole('button', { name: 'New user' })).toBeNull();
    expect(screen.queryByRole('button', { name: 'Retry' })).toBeNull();
  });

  it('moves focus into a panel and back to its opener when it closes', async () => {
    render(UsersScreen);
    await screen.findByRole('table');
    const edit = screen.getByRole('button', { name: 'Edit alice' });
    edit.focus();
    await fireEvent.click(edit);
    const form = within(screen.getByRole('form', { name: 'Edit alice' }));
    await waitFor(() => expect(document.activeElement).toBe(form.getByLabelText('Display name')));
    await fireEvent.click(form.getByRole('button', { name: 'Cancel' }));
    await waitFor(() => expect(document.activeElement).toBe(screen.getByRole('button', { name: 'Edit alice' })));
  });

  it('has no serious or critical axe violations', async () => {
    const { container } = render(UsersScreen);
    await screen.findByRole('table');
    await expectNoSeriousAxeViolations(container);
    await fireEvent.click(screen.getByRole('button', { name: 'New user' }));
    await expectNoSeriousAxeViolations(container);
    await fireEvent.click(screen.getByRole('button', { name: 'Roles of alice' }));
    await screen.findByText(/No role yet/);
    await expectNoSeriousAxeViolations(container);
  });
});
