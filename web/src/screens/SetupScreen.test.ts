import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import * as api from '../lib/api';
import { session } from '../lib/session.svelte';
import { expectNoSeriousAxeViolations } from '../test-axe';
import SetupScreen from './SetupScreen.svelte';

vi.mock('../lib/api', async (importOriginal) => {
  const real = await importOriginal<typeof import('../lib/api')>();
  return { ...real, createFirstAdmin: vi.fn(), login: vi.fn(), getSession: vi.fn() };
});

beforeEach(() => {
  vi.mocked(api.getSession).mockResolvedValue({ authenticated: true, authEnabled: true, user: { id: 1, username: 'root', isAdmin: true } });
  vi.mocked(api.login).mockResolvedValue({ success: true });
});
afterEach(() => {
  cleanup();
  vi.clearAllMocks();
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
    vi.mocked(api.createFirstAdmin).mockResolvedValue({ id: 1, username: 'root', isAdmin: true });
    render(SetupScreen);
    expect(screen.getByRole('heading', { level: 1, name: 'Create the first admin' })).toBeTruthy();
    expect((screen.getByLabelText('Username') as HTMLInputElement).value).toBe('admin');
    await fill(' 0123abcd \n', 'root', 'root-password');
    expect(api.createFirstAdmin).toHaveBeenCalledWith('0123abcd', 'root', 'root-password');
    await waitFor(() => expect(api.login).toHaveBeenCalledWith({ username: 'root', password: 'root-password' }));
    await waitFor(() => expect(session.session?.authenticated).toBe(true));
  });

  it('refuses two different passwords without calling the API', async () => {
    render(SetupScreen);
    await fill('tok', 'root', 'root-password', 'root-passw0rd');
    expect(api.createFirstAdmin).not.toHaveBeenCalled();
    expect(screen.getByRole('alert').textContent).toBe('The two passwords differ');
  });

  it('shows the server refusal of a wrong token', async () => {
    vi.mocked(api.createFirstAdmin).mockRejectedValue(new api.ApiError(401, 'A valid setup token is required to create the first admin'));
    vi.mocked(api.getSession).mockResolvedValue({ authenticated: false, authEnabled: true, setupRequired: true });
    render(SetupScreen);
    await fill('wrong', 'root', 'root-password');
    expect((await screen.findByRole('alert')).textContent).toBe('A valid setup token is required to create the first admin');
    expect(api.login).not.toHaveBeenCalled();
  });

  it('has no serious or critical axe violations', async () => {
    const { container } = render(SetupScreen);
    await expectNoSeriousAxeViolations(container);
  });
});
