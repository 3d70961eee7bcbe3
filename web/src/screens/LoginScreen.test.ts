import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import * as api from '../lib/api';
import { router } from '../lib/router.svelte';
import { session } from '../lib/session.svelte';
import { expectNoSeriousAxeViolations } from '../test-axe';
import LoginScreen from './LoginScreen.svelte';

vi.mock('../lib/api', async (importOriginal) => {
  const real = await importOriginal<typeof import('../lib/api')>();
  return { ...real, getProviders: vi.fn(), login: vi.fn(), getSession: vi.fn() };
});


beforeEach(() => {
  session.session = null; // the sign-in page is shown before any session
  vi.mocked(api.getProviders).mockResolvedValue({ providers: [{ id: 'local', name: 'Local', type: 'local' }], defaultProvider: 'local' });
  vi.mocked(api.getSession).mockResolvedValue({ authenticated: true, authEnabled: true, user: { id: 1, username: 'admin', isAdmin: true } });
});
afterEach(() => {
  cleanup();
  vi.clearAllMocks();
  session.session = null;
});

async function fill(username: string, password: string) {
  await fireEvent.input(screen.getByLabelText('Username'), { target: { value: username } });
  await fireEvent.input(screen.getByLabelText('Password'), { target: { value: password } });
}

describe('LoginScreen', () => {
  it('signs in with the local provider and refreshes the session', async () => {
    vi.mocked(api.login).mockResolvedValue({ success: true });
    render(LoginScreen);
    await waitFor(() => expect(api.getProviders).toHaveBeenCalled());
    expect(screen.queryByLabelText('Sign in with')).toBeNull(); // only local: no choice
    await fill('admin', 'secret123');
    await fireEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    expect(api.login).toHaveBeenCalledWith({ username: 'admin', password: 'secret123', provider: undefined, mfaToken: undefined });
    await waitFor(() => expect(session.session?.authenticated).toBe(true));
  });

  it('shows the server error in an alert', async () => {
    vi.mocked(api.login).mockRejectedValue(new api.ApiError(401, 'Invalid username or password'));
    render(LoginScreen);
    await fill('admin', 'wrong');
    await fireEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    expect((await screen.findByRole('alert')).textContent).toBe('Invalid username or password');
  });

  it('offers LDAP as a choice and OIDC providers as links', async () => {
    vi.mocked(api.getProviders).mockResolvedValue({
      providers: [
        { id: 'local', name: 'Local', type: 'local' },
        { id: 'ldap:1', name: 'Corp directory', type: 'ldap' },
        { id: 'oidc:2', name: 'Dex', type: 'oidc', initiateUrl: '/api/auth/oidc/2/initiate' },
      ],
      defaultProvider: 'ldap:1',
    });
    vi.mocked(api.login).mockResolvedValue({ success: true });
    render(LoginScreen);
    const choice = (await screen.findByLabelText('Sign in with')) as HTMLSelectElement;
    await waitFor(() => expect(choice.value).toBe('ldap:1'));
    const link = screen.getByRole('link', { name: 'Continue with Dex' });
    expect(link.getAttribute('href')).toBe('/api/auth/oidc/2/initiate');
    await fill('alice', 'pw');
    await fireEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    expect(api.login).toHaveBeenCalledWith(expect.objectContaining({ username: 'alice', provider: 'ldap:1' }));
  });

  it('asks for the MFA code when the server requires it', async () => {
    vi.mocked(api.login).mockResolvedValueOnce({ requiresMfa: true }).mockResolvedValueOnce({ success: true });
    render(LoginScreen);
    await fill('admin', 'secret123');
    await fireEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    const code = await screen.findByLabelText('Authentication code');
    await fireEvent.input(code, { target: { value: '123456' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    expect(api.login).toHaveBeenLastCalledWith(expect.objectContaining({ mfaToken: '123456' }));
  });

  it('shows Invalid MFA code for a wrong code and keeps asking for one', async () => {
    vi.mocked(api.login)
      .mockResolvedValueOnce({ requiresMfa: true })
      .mockRejectedValueOnce(new api.ApiError(401, 'Invalid MFA code'));
    render(LoginScreen);
    await fill('admin', 'secret123');
    await fireEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    const code = (await screen.findByLabelText('Authentication code')) as HTMLInputElement;
    await waitFor(() => expect(document.activeElement).toBe(code));
    await fireEvent.input(code, { target: { value: '000000' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    expect((await screen.findByRole('alert')).textContent).toBe('Invalid MFA code');
    expect(code.value).toBe(''); // the next try needs the next code
    expect(screen.getByLabelText('Authentication code')).toBe(code);
    expect(session.session).toBeNull();
  });

  it('sends an OIDC sign-in back to ?next', async () => {
    router.navigate('/login?next=%2Fcontainers%2Fabc', { replace: true });
    vi.mocked(api.getProviders).mockResolvedValue({
      providers: [{ id: 'oidc:2', name: 'Dex', type: 'oidc', initiateUrl: '/api/auth/oidc/2/initiate' }],
    });
    render(LoginScreen);
    const link = await screen.findByRole('link', { name: 'Continue with Dex' });
    expect(link.getAttribute('href')).toBe('/api/auth/oidc/2/initiate?redirect=%2Fcontainers%2Fabc');
    // only OIDC: no username and password form
    expect(screen.queryByLabelText('Username')).toBeNull();
    router.navigate('/login', { replace: true });
  });

  it('says so when no sign-in method is enabled', async () => {
    vi.mocked(api.getProviders).mockResolvedValue({ providers: [] });
    render(LoginScreen);
    expect(await screen.findByText(/No sign-in method is enabled/)).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Sign in' })).toBeNull();
  });

  it('shows the error an OIDC callback came back with', async () => {
    router.navigate('/login?error=Username%20claim%20not%20found%20in%20token', { replace: true });
    render(LoginScreen);
    expect((await screen.findByRole('alert')).textContent).toBe('Username claim not found in token');
    router.navigate('/login', { replace: true });
  });

  it('has no serious or critical axe violations', async () => {
    const { container } = render(LoginScreen);
    await waitFor(() => expect(api.getProviders).toHaveBeenCalled());
    await expectNoSeriousAxeViolations(container);
  });
});
