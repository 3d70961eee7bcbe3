import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../lib/api';
import type * as admin from '../lib/api-admin';
import { session } from '../lib/session.svelte';
import { stubApi, type StubApi } from '../test-api';
import { expectNoSeriousAxeViolations } from '../test-axe';
import ProfileScreen from './ProfileScreen.svelte';

let api: StubApi;
const sent = (route: string) => api.called(route).map((c) => c.body as Record<string, unknown>);

const token: admin.ApiToken = {
  id: 7,
  userId: 1,
  name: 'ci',
  tokenPrefix: 'bth_abcdef',
  expiresAt: null,
  lastUsed: null,
  createdAt: '2025-01-02T03:04:05Z',
};

function signIn(user: Partial<NonNullable<typeof session.session>['user']> = {}) {
  session.session = {
    authenticated: true,
    authEnabled: true,
    user: { id: 1, username: 'admin', email: 'admin@example.com', isAdmin: true, provider: 'local', ...user },
  };
}

beforeEach(() => {
  signIn();
  api = stubApi({ 'GET /api/auth/tokens': [token], 'DELETE /api/auth/tokens/7': { success: true } });
});
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  session.session = null;
});

describe('ProfileScreen', () => {
  it('shows the signed-in user and lists the tokens without their secret', async () => {
    render(ProfileScreen);
    expect(screen.getByRole('heading', { level: 1, name: 'Profile' })).toBeTruthy();
    expect(screen.getByText('admin@example.com')).toBeTruthy();
    const table = await screen.findByRole('table');
    expect(within(table).getByText('ci')).toBeTruthy();
    expect(within(table).getByText('bth_abcdef…')).toBeTruthy();
    expect(within(table).getAllByText('never', { selector: 'td' })).toHaveLength(2); // expires, last used
  });

  it('creates a token with name, expiry and password, and shows it once with a copy button', async () => {
    const created: admin.NewApiToken = { ...token, id: 8, name: 'deploy', token: 'bth_secretsecretsecret' };
    api.routes['POST /api/auth/tokens'] = created;
    render(ProfileScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'New token' }));
    await fireEvent.input(screen.getByLabelText('Name'), { target: { value: 'deploy' } });
    await fireEvent.change(screen.getByLabelText('Expires'), { target: { value: 'never' } });
    await fireEvent.input(screen.getByLabelText('Your password'), { target: { value: 'pw12345678' } });
    api.routes['GET /api/auth/tokens'] = [token, { ...created, token: undefined }];
    await fireEvent.click(screen.getByRole('button', { name: 'Create token' }));
    const box = (await screen.findByRole('textbox', { name: 'New API token' })) as HTMLInputElement;
    expect(box.value).toBe('bth_secretsecretsecret');
    expect(screen.getByText(/shown only this once/)).toBeTruthy();
    expect(sent('POST /api/auth/tokens')).toEqual([{ name: 'deploy', expiresAt: null, password: 'pw12345678' }]);
    // the list is read again: the new token is listed (without its secret)
    expect(await within(screen.getByRole('table')).findByText('deploy')).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Copy token' })).toBeTruthy();
    await fireEvent.click(screen.getByRole('button', { name: 'Done' }));
    expect(screen.queryByLabelText('New API token')).toBeNull();
    expect(document.body.textContent).not.toContain('bth_secretsecretsecret');
  });

  it('sends an expiry in the future for a period', async () => {
    api.routes['POST /api/auth/tokens'] = { ...token, token: 'bth_x' };
    render(ProfileScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'New token' }));
    await fireEvent.input(screen.getByLabelText('Name'), { target: { value: 'n' } });
    await fireEvent.input(screen.getByLabelText('Your password'), { target: { value: 'pw' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Create token' }));
    await waitFor(() => expect(sent('POST /api/auth/tokens')).toHaveLength(1));
    const at = sent('POST /api/auth/tokens')[0].expiresAt as string;
    const days = (new Date(at).getTime() - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(89);
    expect(days).toBeLessThan(91);
  });

  it('shows the server refusal of a token', async () => {
    api.routes['POST /api/auth/tokens'] = () => {
      throw new ApiError(403, 'Invalid password');
    };
    render(ProfileScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'New token' }));
    await fireEvent.input(screen.getByLabelText('Name'), { target: { value: 'n' } });
    await fireEvent.input(screen.getByLabelText('Your password'), { target: { value: 'bad' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Create token' }));
    expect((await screen.findByRole('alert')).textContent).toContain('Invalid password');
  });

  it('revokes a token after confirmation', async () => {
    render(ProfileScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Revoke ci' }));
    const dialog = screen.getByRole('dialog', { name: 'Revoke ci?' });
    expect(api.called('DELETE /api/auth/tokens/7')).toHaveLength(0);
    api.routes['GET /api/auth/tokens'] = [];
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Revoke' }));
    expect(await screen.findByText('You have no API tokens.')).toBeTruthy();
    expect(api.called('DELETE /api/auth/tokens/7')).toHaveLength(1);
  });

  it('changes the own password with the current one', async () => {
    api.routes['PUT /api/profile'] = {};
    render(ProfileScreen);
    await fireEvent.input(screen.getByLabelText('Current password'), { target: { value: 'old-password-1' } });
    await fireEvent.input(screen.getByLabelText('New password'), { target: { value: 'new-password-1' } });
    await fireEvent.input(screen.getByLabelText('Repeat the new password'), { target: { value: 'new-password-1' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Change password' }));
    expect(await screen.findByText(/^Your password was changed\./)).toBeTruthy();
    expect(sent('PUT /api/profile')).toEqual([{ currentPassword: 'old-password-1', newPassword: 'new-password-1' }]);
  });

  it('shows why the password was not changed', async () => {
    api.routes['PUT /api/profile'] = () => {
      throw new ApiError(400, 'Current password is incorrect');
    };
    render(ProfileScreen);
    await fireEvent.input(screen.getByLabelText('Current password'), { target: { value: 'wrong' } });
    await fireEvent.input(screen.getByLabelText('New password'), { target: { value: 'new-password-1' } });
    await fireEvent.input(screen.getByLabelText('Repeat the new password'), { target: { value: 'new-password-1' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Change password' }));
    expect((await screen.findByRole('alert')).textContent).toContain('Current password is incorrect');
  });

  it('refuses two different passwords without calling the API', async () => {
    render(ProfileScreen);
    await fireEvent.input(screen.getByLabelText('Current password'), { target: { value: 'old-password-1' } });
    await fireEvent.input(screen.getByLabelText('New password'), { target: { value: 'new-password-1' } });
    await fireEvent.input(screen.getByLabelText('Repeat the new password'), { target: { value: 'new-password-2' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Change password' }));
    expect(api.called('PUT /api/profile')).toHaveLength(0);
    expect(screen.getByRole('alert').textContent).toContain('The two passwords differ');
  });

  it('lets a user without users:edit change their own password, and tells an SSO user where the password lives', async () => {
    signIn({ isAdmin: false, permissions: { containers: ['view'] } });
    render(ProfileScreen);
    expect(screen.getByLabelText('Current password')).toBeTruthy();
    expect(screen.getByLabelText('New password')).toBeTruthy();
    cleanup();
    signIn({ isAdmin: false, provider: 'oidc' });
    render(ProfileScreen);
    expect(screen.getByText(/managed by OIDC/)).toBeTruthy();
    await fireEvent.click(await screen.findByRole('button', { name: 'New token' }));
    expect(screen.queryByLabelText('Your password')).toBeNull(); // SSO users have no password to confirm with
  });

  it('has no serious or critical axe violations', async () => {
    const { container } = render(ProfileScreen);
    await screen.findByRole('table');
    await expectNoSeriousAxeViolations(container);
    await fireEvent.click(screen.getByRole('button', { name: 'New token' }));
    await expectNoSeriousAxeViolations(container);
  });
});

describe('ProfileScreen token list errors', () => {
  it('shows why the tokens could not be listed', async () => {
    api.routes['GET /api/auth/tokens'] = () => {
      throw new ApiError(400, 'database is locked');
    };
    render(ProfileScreen);
    await waitFor(() => expect(screen.getByRole('alert').textContent).toContain('database is locked'));
  });
});
