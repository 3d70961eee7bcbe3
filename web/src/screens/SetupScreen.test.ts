import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../lib/api';
import { session } from '../lib/session.svelte';
import { stubApi, type StubApi } from '../test-api';
import { expectNoSeriousAxeViolations } from '../test-axe';
import SetupScreen from './SetupScreen.svelte';

let api: StubApi;
beforeEach(() => {
  api = stubApi({
    'GET /api/auth/session': { authenticated: true, authEnabled: true, user: { id: 1, username: 'root', isAdmin: true } },
    'POST /api/auth/login': { success: true },
    'POST /api/users': { id: 1, username: 'root', isAdmin: true },
  });
});
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  session.session = null;
});

async function fill(token: string, username: string, password: string, repeat = password) {
  await fireEvent.input(screen.getByLabelText('Setup token'), { target: { value: token } });
  await fireEvent.input(screen.getByLabelText('Username'), { target: { value: username } });
  await fireEvent.input(screen.getByLabelText('Password'), { target: { value: password } });
  await fireEvent.input(screen.getByLabelText('Repeat the password'), { target: { value: repeat } });
  await fireEvent.click(screen.getByRole('button', { name: 'Create admin' }));
}

describe('SetupScreen', () => {
  it('creates the first admin with the setup token, signs in and refreshes the session', async () => {
    render(SetupScreen);
    expect(screen.getByRole('heading', { level: 1, name: 'Create the first admin' })).toBeTruthy();
    expect((screen.getByLabelText('Username') as HTMLInputElement).value).toBe('admin');
    await fill(' 0123abcd \n', 'root', 'root-password');
    await waitFor(() => expect(api.called('POST /api/auth/login')[0]?.body).toEqual({ username: 'root', password: 'root-password' }));
    expect(api.called('POST /api/users')[0].body).toEqual({ username: 'root', password: 'root-password', setupToken: '0123abcd' });
    expect(api.calls.map((c) => `${c.method} ${c.path}`).slice(0, 2)).toEqual(['POST /api/users', 'POST /api/auth/login']);
    await waitFor(() => expect(session.session?.authenticated).toBe(true));
  });

  it('refuses two different passwords without calling the API', async () => {
    render(SetupScreen);
    await fill('tok', 'root', 'root-password', 'root-passw0rd');
    expect(api.calls).toEqual([]);
    expect(screen.getByRole('alert').textContent).toBe('The two passwords differ');
  });

  it('shows the server refusal of a wrong token', async () => {
    api.routes['POST /api/users'] = () => {
      throw new ApiError(401, 'A valid setup token is required to create the first admin');
    };
    api.routes['GET /api/auth/session'] = { authenticated: false, authEnabled: true, setupRequired: true };
    render(SetupScreen);
    await fill('wrong', 'root', 'root-password');
    expect((await screen.findByRole('alert')).textContent).toBe('A valid setup token is required to create the first admin');
    expect(api.called('POST /api/auth/login')).toHaveLength(0);
    await waitFor(() => expect(session.session?.setupRequired).toBe(true)); // asked again: someone may have finished the setup
  });

  it('has no serious or critical axe violations', async () => {
    const { container } = render(SetupScreen);
    await expectNoSeriousAxeViolations(container);
  });
});
