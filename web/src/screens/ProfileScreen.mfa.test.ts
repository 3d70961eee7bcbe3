import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../lib/api';
import { session } from '../lib/session.svelte';
import { stubApi, type StubApi } from '../test-api';
import { expectNoSeriousAxeViolations } from '../test-axe';
import ProfileScreen from './ProfileScreen.svelte';

let api: StubApi;
/** The bodies POSTed to the MFA route of user 4. */
const posted = () => api.called('POST /api/users/4/mfa').map((c) => c.body);

const qr = 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';
const codes = ['ABCDE-FGH12', 'JKMNP-QRST3', 'VWXYZ-01234'];

function signIn(user: Partial<NonNullable<NonNullable<typeof session.session>['user']>> = {}) {
  session.session = {
    authenticated: true,
    authEnabled: true,
    user: { id: 4, username: 'alice', isAdmin: false, provider: 'local', permissions: {}, ...user },
  };
}

beforeEach(() => {
  signIn();
  api = stubApi({
    'GET /api/auth/tokens': [],
    'POST /api/users/4/mfa': (c: { body: unknown }) =>
      (c.body as { action?: string }).action === 'verify'
        ? { success: true, message: 'MFA enabled', backupCodes: codes }
        : { secret: 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP', qrDataUrl: qr },
    'DELETE /api/users/4/mfa': { success: true },
  });
});
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  session.session = null;
});

function mfaSection(): HTMLElement {
  return screen.getByRole('region', { name: /Two-factor authentication/ });
}

describe('ProfileScreen two-factor authentication', () => {
  it('sets MFA up: QR code and secret, a code from the app, then the backup codes once', async () => {
    render(ProfileScreen);
    const section = mfaSection();
    expect(within(section).getByText('Off')).toBeTruthy();
    await fireEvent.click(within(section).getByRole('button', { name: 'Set up' }));
    const img = (await within(section).findByRole('img', { name: /QR code/ })) as HTMLImageElement;
    expect(img.getAttribute('src')).toBe(qr);
    expect((within(section).getByLabelText('Secret') as HTMLInputElement).value).toBe('JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP');
    expect(within(section).getByRole('button', { name: 'Copy secret' })).toBeTruthy();
    expect(posted()).toEqual([{}]);

    const code = within(section).getByLabelText('Code from the app');
    await waitFor(() => expect(document.activeElement).toBe(code));
    await fireEvent.input(code, { target: { value: ' 123456 ' } });
    await fireEvent.click(within(section).getByRole('button', { name: 'Turn on' }));
    const list = await within(section).findByRole('list', { name: 'Backup codes' });
    expect(posted()[1]).toEqual({ action: 'verify', token: '123456' });
    expect(within(list).getAllByRole('listitem').map((li) => li.textContent)).toEqual(codes);
    expect(within(section).getByText(/shown only this once/)).toBeTruthy();
    expect(within(section).getByRole('button', { name: 'Copy backup codes' })).toBeTruthy();
    expect(within(section).queryByRole('img')).toBeNull(); // the secret is gone from the page
    expect(within(section).getByText('On')).toBeTruthy();
    expect(session.session?.user?.mfaEnabled).toBe(true);

    await fireEvent.click(within(section).getByRole('button', { name: 'Done' }));
    expect(document.body.textContent).not.toContain(codes[0]);
    expect(within(section).getByRole('button', { name: 'Turn off' })).toBeTruthy();
  });

  it('shows the server refusal of a wrong code and lets the user try again', async () => {
    api.routes['POST /api/users/4/mfa'] = (c: { body: unknown }) => {
      if ((c.body as { action?: string }).action === 'verify') throw new ApiError(400, 'Invalid MFA code');
      return { secret: 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP', qrDataUrl: qr };
    };
    render(ProfileScreen);
    await fireEvent.click(within(mfaSection()).getByRole('button', { name: 'Set up' }));
    const code = (await screen.findByLabelText('Code from the app')) as HTMLInputElement;
    await fireEvent.input(code, { target: { value: '000000' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Turn on' }));
    expect((await screen.findByRole('alert')).textContent).toContain('Invalid MFA code');
    expect(code.value).toBe('');
    expect(screen.getByRole('img', { name: /QR code/ })).toBeTruthy(); // still setting up
    expect(session.session?.user?.mfaEnabled).toBeFalsy();
  });

  it('turns MFA off only after confirmation', async () => {
    signIn({ mfaEnabled: true });
    render(ProfileScreen);
    const section = mfaSection();
    expect(within(section).getByText('On')).toBeTruthy();
    await fireEvent.click(within(section).getByRole('button', { name: 'Turn off' }));
    const dialog = await screen.findByRole('dialog', { name: 'Turn off two-factor authentication?' });
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Cancel' }));
    expect(api.called('DELETE /api/users/4/mfa')).toHaveLength(0);
    await fireEvent.click(within(section).getByRole('button', { name: 'Turn off' }));
    const again = await screen.findByRole('dialog', { name: 'Turn off two-factor authentication?' });
    await fireEvent.input(within(again).getByLabelText('Your current password or a code from your app'), { target: { value: '123456' } });
    await fireEvent.click(within(again).getByRole('button', { name: 'Turn off' }));
    await waitFor(() => expect(within(section).getByText('Off')).toBeTruthy());
    expect(api.called('DELETE /api/users/4/mfa').map((c) => c.body)).toEqual([{ password: '123456', token: '123456' }]);
    expect(session.session?.user?.mfaEnabled).toBe(false);
  });

  it('is not offered to accounts of an identity provider', () => {
    signIn({ provider: 'ldap' });
    render(ProfileScreen);
    expect(screen.queryByRole('region', { name: /Two-factor authentication/ })).toBeNull();
  });

  it('has no serious or critical axe violations, while setting up and with the backup codes', async () => {
    const { container } = render(ProfileScreen);
    await fireEvent.click(within(mfaSection()).getByRole('button', { name: 'Set up' }));
    await screen.findByRole('img', { name: /QR code/ });
    await expectNoSeriousAxeViolations(container);
    await fireEvent.input(screen.getByLabelText('Code from the app'), { target: { value: '123456' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Turn on' }));
    await screen.findByRole('list', { name: 'Backup codes' });
    await expectNoSeriousAxeViolations(container);
  });
});
