import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type * as images from '../lib/api-images';
import { ApiError } from '../lib/api';
import { queryClient } from '../lib/query';
import { session } from '../lib/session.svelte';
import { stubApi, type StubApi, type StubCall } from '../test-api';
import { expectNoSeriousAxeViolations } from '../test-axe';
import RegistriesScreen from './RegistriesScreen.svelte';

const regs: images.Registry[] = [
  { id: 1, name: 'hub', url: 'docker.io', username: '', hasCredentials: false },
  { id: 2, name: 'local', url: 'https://127.0.0.1:5000', username: 'berth', hasCredentials: true, isDefault: true },
];

let api: StubApi;
beforeEach(() => {
  queryClient.clear();
  session.session = { authenticated: false, authEnabled: false };
  api = stubApi({
    'GET /api/registries': regs,
    'DELETE /api/registries/1': { success: true },
    'POST /api/registries/test': { success: true },
    'POST /api/registries': (c: StubCall) => ({ id: 3, ...(c.body as object), hasCredentials: !!(c.body as { password?: string }).password }),
    'PUT /api/registries/2': (c: StubCall) => ({ id: 2, ...(c.body as object) }),
  });
  session.environments = [{ id: 1, name: 'local', connectionType: 'socket' }];
  session.envId = 1;
});
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  vi.clearAllMocks();
});

const names = () =>
  screen
    .getAllByRole('row')
    .slice(1)
    .map((r) => within(r).getAllByRole('cell')[0].textContent?.replace(/\s+/g, ' ').trim());

describe('RegistriesScreen', () => {
  it('lists the registries, the default first, passwords masked', async () => {
    render(RegistriesScreen);
    expect(screen.getByRole('heading', { level: 1, name: 'Registries' })).toBeTruthy();
    await screen.findByRole('table');
    expect(names()).toEqual(['local default', 'hub']);
    expect(screen.getByText('stored, hidden')).toBeTruthy();
    expect(screen.getByText('(127.0.0.1:5000)')).toBeTruthy();
    expect(document.body.textContent).not.toContain('berth-registry-pw');
  });

  it('shows the empty state and the list error', async () => {
    api.routes['GET /api/registries'] = [];
    const r = render(RegistriesScreen);
    expect(await screen.findByText(/No registry is configured/)).toBeTruthy();
    r.unmount();
    queryClient.clear();
    api.routes['GET /api/registries'] = () => {
      throw new ApiError(403, 'Permission denied');
    };
    render(RegistriesScreen);
    expect((await screen.findByRole('alert')).textContent).toContain('Permission denied');
  });

  it('adds a registry, testing the unsaved settings first', async () => {
    render(RegistriesScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Add registry' }));
    const dialog = screen.getByRole('dialog', { name: 'Add a registry' });
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Add registry' }));
    expect(within(dialog).getByRole('alert').textContent).toContain('Enter a name');
    await fireEvent.input(within(dialog).getByLabelText('Name'), { target: { value: 'mine' } });
    await fireEvent.input(within(dialog).getByLabelText('URL'), { target: { value: 'reg.example:5000' } });
    await fireEvent.input(within(dialog).getByLabelText('Username'), { target: { value: 'me' } });
    await fireEvent.input(within(dialog).getByLabelText('Password'), { target: { value: 's3cret' } });
    api.routes['POST /api/registries/test'] = { success: false, error: 'Authentication failed. Check registry credentials.' };
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Test connection' }));
    expect(await within(dialog).findByText(/Connection failed: Authentication failed/)).toBeTruthy();
    expect(api.called('POST /api/registries/test')[0]).toMatchObject({
      query: { env: '1' },
      body: { url: 'reg.example:5000', username: 'me', password: 's3cret' },
    });
    api.routes['POST /api/registries/test'] = { success: true };
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Test connection' }));
    expect(await within(dialog).findByText(/Connection succeeded/)).toBeTruthy();
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Add registry' }));
    await waitFor(() =>
      expect(api.called('POST /api/registries')[0]?.body).toEqual({ name: 'mine', url: 'reg.example:5000', username: 'me', password: 's3cret', isDefault: false }),
    );
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    expect(screen.getByRole('status').textContent).toContain('Registry mine added.');
  });

  it('edits without sending the password unless it is changed or removed', async () => {
    render(RegistriesScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Edit local' }));
    let dialog = screen.getByRole('dialog', { name: 'Edit local' });
    const pw = within(dialog).getByLabelText('Password') as HTMLInputElement;
    expect(pw.value).toBe('');
    expect(pw.type).toBe('password');
    expect(within(dialog).getByText(/A password is stored; it is never shown/)).toBeTruthy();
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Test connection' }));
    await waitFor(() => expect(api.called('POST /api/registries/test')[0]?.body).toEqual({ id: 2 })); // unchanged: the stored password
    await fireEvent.input(within(dialog).getByLabelText('Name'), { target: { value: 'local-2' } });
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Save' }));
    await waitFor(() =>
      expect(api.called('PUT /api/registries/2')[0]?.body).toEqual({ name: 'local-2', url: 'https://127.0.0.1:5000', username: 'berth', isDefault: true }),
    );
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());

    await fireEvent.click(screen.getByRole('button', { name: 'Edit local' }));
    dialog = screen.getByRole('dialog', { name: 'Edit local' });
    await fireEvent.click(within(dialog).getByLabelText('Remove the stored password'));
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect((api.called('PUT /api/registries/2')[1]?.body as { password?: string }).password).toBe(''));
  });

  it('tests a saved registry from its row and shows the kept outcome', async () => {
    render(RegistriesScreen);
    await screen.findByRole('table');
    // The server keeps the outcome: the list read after the test shows it.
    api.routes['POST /api/registries/test'] = () => {
      api.routes['GET /api/registries'] = [
        { ...regs[0], lastTest: { success: false, message: 'no such host', testedAt: '2026-11-27T10:00:00Z' } },
        { ...regs[1], lastTest: { success: true, message: 'Connected', testedAt: '2026-11-27T10:00:00Z' } },
      ];
      return { success: false, message: 'no such host' };
    };
    await fireEvent.click(screen.getByRole('button', { name: 'Test hub' }));
    await waitFor(() => expect(api.called('POST /api/registries/test')[0]?.body).toEqual({ id: 1 }));
    expect(api.called('POST /api/registries/test')[0].query).toEqual({ env: '1' });
    expect(await screen.findByText('no such host')).toBeTruthy();
    expect(screen.getByText('connected')).toBeTruthy();
  });

  it('shows the last test kept by the server, and no mutating control to a viewer', async () => {
    api.routes['GET /api/registries'] = [{ ...regs[0], lastTest: { success: true, message: 'Connected', testedAt: '2026-11-27T10:00:00Z' } }];
    session.session = {
      authenticated: true,
      authEnabled: true,
      user: { id: 5, username: 'v', isAdmin: false, permissions: { registries: ['view'] } },
    };
    render(RegistriesScreen);
    expect(await screen.findByText('connected')).toBeTruthy();
    expect(screen.getByRole('link', { name: 'Browse hub' })).toBeTruthy();
    expect(screen.queryByRole('button', { name: /^(Add registry|Test|Edit|Delete)/ })).toBeNull();
  });

  it('deletes after confirmation', async () => {
    render(RegistriesScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Delete hub' }));
    const dialog = screen.getByRole('dialog', { name: 'Delete hub?' });
    await fireEvent.keyDown(dialog, { key: 'Escape' });
    expect(api.called('DELETE /api/registries/1')).toHaveLength(0);
    await fireEvent.click(screen.getByRole('button', { name: 'Delete hub' }));
    await fireEvent.click(within(screen.getByRole('dialog')).getByRole('button', { name: 'Delete' }));
    await waitFor(() => expect(api.called('DELETE /api/registries/1')).toHaveLength(1));
    await waitFor(() => expect(screen.getByRole('status').textContent).toContain('Registry hub deleted.'));
  });

  it('shows the server message when saving fails', async () => {
    api.routes['POST /api/registries'] = () => {
      throw new ApiError(409, 'A registry with this name already exists');
    };
    render(RegistriesScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Add registry' }));
    const dialog = screen.getByRole('dialog');
    await fireEvent.input(within(dialog).getByLabelText('Name'), { target: { value: 'hub' } });
    await fireEvent.input(within(dialog).getByLabelText('URL'), { target: { value: 'docker.io' } });
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Add registry' }));
    expect((await within(dialog).findByRole('alert')).textContent).toContain('A registry with this name already exists');
  });

  it('has no serious or critical axe violations, nor with the form open', async () => {
    const { container } = render(RegistriesScreen);
    await screen.findByRole('table');
    await expectNoSeriousAxeViolations(container);
    await fireEvent.click(screen.getByRole('button', { name: 'Edit local' }));
    await expectNoSeriousAxeViolations(container);
  });
});
