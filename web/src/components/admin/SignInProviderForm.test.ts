import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../../lib/api';
import { stubApi } from '../../test-api';
import LdapForm from './LdapForm.svelte';
import OidcForm from './OidcForm.svelte';

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

describe('SignInProviderForm (through the LDAP and OIDC forms)', () => {
  it('focuses the first field, locks its buttons while saving and shows the refusal', async () => {
    let refuse: (e: unknown) => void = () => {};
    const api = stubApi({ 'POST /api/auth/ldap': () => new Promise((_, reject) => (refuse = reject)) });
    const onsaved = vi.fn();
    render(LdapForm, { onsaved, oncancel: vi.fn() });
    const form = screen.getByRole('form', { name: 'New LDAP configuration' });
    expect(document.activeElement).toBe(screen.getByLabelText('Name'));
    expect(screen.getByLabelText('Name').getAttribute('aria-describedby')).toBe('ldap-new-name-hint');
    await fireEvent.input(screen.getByLabelText('Name'), { target: { value: 'Lab' } });
    await fireEvent.input(screen.getByLabelText('Base DN'), { target: { value: 'dc=berth,dc=test' } });
    await fireEvent.submit(form);
    await waitFor(() => expect(api.called('POST /api/auth/ldap')).toHaveLength(1));
    expect(api.called('POST /api/auth/ldap')[0].body).toEqual(expect.objectContaining({ name: 'Lab', enabled: true }));
    expect((screen.getByRole('button', { name: 'Saving…' }) as HTMLButtonElement).disabled).toBe(true);
    expect((screen.getByRole('button', { name: 'Cancel' }) as HTMLButtonElement).disabled).toBe(true);

    refuse(new ApiError(400, 'Server URL must start with ldap:// or ldaps://'));
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain('The LDAP configuration was not saved');
    expect(alert.textContent).toContain('Server URL must start with ldap:// or ldaps://');
    expect((screen.getByRole('button', { name: 'Create' }) as HTMLButtonElement).disabled).toBe(false);
    expect(onsaved).not.toHaveBeenCalled();
  });

  it('sends Enabled as ticked and reports the saved provider', async () => {
    const api = stubApi({ 'POST /api/auth/oidc': (c: { body: unknown }) => ({ ...(c.body as object), id: 3 }) });
    const onsaved = vi.fn();
    render(OidcForm, { origin: 'https://berth.example', onsaved, oncancel: vi.fn() });
    await fireEvent.input(screen.getByLabelText('Name'), { target: { value: 'Dex' } });
    await fireEvent.click(screen.getByRole('checkbox', { name: 'Enabled (offered on the sign-in page)' }));
    await fireEvent.submit(screen.getByRole('form', { name: 'New OIDC provider' }));
    await waitFor(() => expect(api.called('POST /api/auth/oidc')).toHaveLength(1));
    expect(api.called('POST /api/auth/oidc')[0].body).toEqual(expect.objectContaining({ name: 'Dex', enabled: false }));
    await waitFor(() => expect(onsaved).toHaveBeenCalledWith(expect.objectContaining({ id: 3 }), 'OIDC provider Dex created.'));
  });
});
