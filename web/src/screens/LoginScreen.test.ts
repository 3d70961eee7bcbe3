import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../lib/api';
import { queryClient } from '../lib/query';
import { router } from '../lib/router.svelte';
import { session } from '../lib/session.svelte';
import { stubApi, type StubApi, type StubCall } from '../test-api';
import { expectNoSeriousAxeViolations } from '../test-axe';
import LoginScreen from './LoginScreen.svelte';

let api: StubApi;
/** The bodies of the sign-in requests, in order. */
const logins = () => api.called('POST /api/auth/login').map((c) => c.body);
/** Answers the sign-in requests with these answers in turn (a thrown ApiError is an error answer). */
function loginAnswers(...answers: (unknown | (() => unknown))[]) {
  let n = 0;
  api.routes['POST /api/auth/login'] = (_c: StubCall) => {
    const a = answers[Math.min(n++, answers.length - 1)];
    return typeof a === 'function' ? (a as () => unknown)() : a;
  };
}

beforeEach(() => {
  session.session = null; // the sign-in page is shown before any session
  api = stubApi({
    'GET /api/auth/providers': { providers: [{ id: 'local', name: 'Local', type: 'local' }], defaultProvider: 'local' },
    'GET /api/auth/session': { authenticated: true, authEnabled: true, user: { id: 1, username: 'admin', isAdmin: true } },
    'POST /api/auth/login': { success: true },
  });
});
afterEach(async () => {
  cleanup();
  await queryClient.cancelQueries(); // no retry outlives the test
  queryClient.clear();
  vi.unstubAllGlobals();
  session.session = null;
});

async function fill(username: string, password: string) {
  await fireEvent.input(screen.getByLabelText('Username'), { target: { value: username } });
  await fireEvent.input(screen.getByLabelText('Password'), { target: { value: password } });
}

describe('LoginScreen', () => {
  it('signs in with the local provider and refreshes the session', async () => {
    render(LoginScreen);
    await waitFor(() => expect(api.called('GET /api/auth/providers')).toHaveLength(1));
    await screen.findByLabelText('Username');
    expect(screen.queryByLabelText('Sign in with')).toBeNull(); // only local: no choice
    await fill('admin', 'secret123');
    await fireEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    await waitFor(() => expect(logins()).toEqual([{ username: 'admin', password: 'secret123' }]));
    await waitFor(() => expect(session.session?.authenticated).toBe(true));
  });

  it('shows the server error in an alert', async () => {
    loginAnswers(() => {
      throw new ApiError(401, 'Invalid username or password');
    });
    render(LoginScreen);
    await screen.findByLabelText('Username');
    await fill('admin', 'wrong');
    await fireEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    expect((await screen.findByRole('alert')).textContent).toBe('Invalid username or password');
  });

  it('offers LDAP as a choice and OIDC providers as links', async () => {
    api.routes['GET /api/auth/providers'] = {
      providers: [
        { id: 'local', name: 'Local', type: 'local' },
        { id: 'ldap:1', name: 'Corp directory', type: 'ldap' },
        { id: 'oidc:2', name: 'Dex', type: 'oidc', initiateUrl: '/api/auth/oidc/2/initiate' },
      ],
      defaultProvider: 'ldap:1',
    };
    render(LoginScreen);
    const choice = (await screen.findByLabelText('Sign in with')) as HTMLSelectElement;
    await waitFor(() => expect(choice.value).toBe('ldap:1'));
    const link = screen.getByRole('link', { name: 'Continue with Dex' });
    expect(link.getAttribute('href')).toBe('/api/auth/oidc/2/initiate');
    await fill('alice', 'pw');
    await fireEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    await waitFor(() => expect(logins()[0]).toMatchObject({ username: 'alice', provider: 'ldap:1' }));
  });

  it('asks for the MFA code when the server requires it', async () => {
    loginAnswers({ requiresMfa: true }, { success: true });
    render(LoginScreen);
    await screen.findByLabelText('Username');
    await fill('admin', 'secret123');
    await fireEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    const code = await screen.findByLabelText('Authentication code');
    await fireEvent.input(code, { target: { value: '123456' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Sign in' }));
    await waitFor(() => expect(logins()).toHaveLength(2));
    expect(logins()[1]).toMatchObject({ username: 'admin', mfaToken: '123456' });
    await waitFor(() => expect(session.session?.authenticated).toBe(true));
  });

  it('shows Invalid MFA code for a wrong code and keeps asking for one', async () => {
    loginAnswers({ requiresMfa: true }, () => {
      throw new ApiError(401, 'Invalid MFA code');
    });
    render(LoginScreen);
    await screen.findByLabelText('Username');
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
    api.routes['GET /api/auth/providers'] = {
      providers: [{ id: 'oidc:2', name: 'Dex', type: 'oidc', initiateUrl: '/api/auth/oidc/2/initiate' }],
    };
    render(LoginScreen);
    const link = await screen.findByRole('link', { name: 'Continue with Dex' });
    expect(link.getAttribute('href')).toBe('/api/auth/oidc/2/initiate?redirect=%2Fcontainers%2Fabc');
    // only OIDC: no username and password form
    expect(screen.queryByLabelText('Username')).toBeNull();
    router.navigate('/login', { replace: true });
  });

  it('says so when no sign-in method is enabled', async () => {
    api.routes['GET /api/auth/providers'] = { providers: [] };
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

  it('offers the local sign-in with the reason while the methods cannot be read, and the others once they can', async () => {
    api.routes['GET /api/auth/providers'] = () => {
      throw new ApiError(503, 'Service unavailable');
    };
    render(LoginScreen);
    expect((await screen.findByRole('alert')).textContent).toBe('The sign-in methods could not be read: Service unavailable');
    expect(screen.getByLabelText('Username')).toBeTruthy();
    // The read is retried by itself: once it succeeds the alert goes and the methods show.
    api.routes['GET /api/auth/providers'] = {
      providers: [
        { id: 'local', name: 'Local', type: 'local' },
        { id: 'ldap:1', name: 'Corp directory', type: 'ldap' },
      ],
      defaultProvider: 'ldap:1',
    };
    const choice = (await screen.findByLabelText('Sign in with', {}, { timeout: 4000 })) as HTMLSelectElement;
    await waitFor(() => expect(choice.value).toBe('ldap:1'));
    expect(screen.queryByRole('alert')).toBeNull();
  });

  it('has no serious or critical axe violations', async () => {
    const { container } = render(LoginScreen);
    await screen.findByLabelText('Username');
    await expectNoSeriousAxeViolations(container);
  });
});
