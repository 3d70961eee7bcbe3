import { cleanup, fireEvent, render, screen, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../lib/api';
import type * as admin from '../lib/api-admin';
import { session } from '../lib/session.svelte';
import { stubApi, type StubApi } from '../test-api';
import { expectNoSeriousAxeViolations } from '../test-axe';
import LicenseScreen from './LicenseScreen.svelte';

let api: StubApi;

const lic: admin.LicenseDoc = { id: 'L-42', customer: 'Acme', edition: 'enterprise', issuedAt: '2025-01-01T00:00:00Z', expiresAt: null };

beforeEach(() => {
  session.session = { authenticated: true, authEnabled: true, user: { id: 1, username: 'admin', isAdmin: true } };
  api = stubApi({ 'GET /api/license': { edition: 'community', license: null }, 'DELETE /api/license': { success: true } });
});
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  session.session = null;
});

describe('LicenseScreen', () => {
  it('shows the community edition and installs a key', async () => {
    api.routes['POST /api/license'] = { success: true, edition: 'enterprise', license: lic };
    render(LicenseScreen);
    expect(screen.getByRole('heading', { level: 1, name: 'License' })).toBeTruthy();
    expect(await screen.findByText('Community')).toBeTruthy();
    await fireEvent.input(screen.getByLabelText('License key'), { target: { value: '  abc.def \n' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Install license' }));
    api.routes['GET /api/license'] = { edition: 'enterprise', license: lic };
    expect(await screen.findByText('Enterprise')).toBeTruthy();
    expect(api.called('POST /api/license').map((c) => c.body)).toEqual([{ license: 'abc.def' }]);
    expect(screen.getByText('Acme')).toBeTruthy();
    expect(screen.getByText('never (perpetual)')).toBeTruthy();
    expect((screen.getByLabelText('License key') as HTMLTextAreaElement).value).toBe('');
  });

  it('shows why a key was refused', async () => {
    api.routes['POST /api/license'] = () => {
      throw new ApiError(400, 'Invalid license', undefined, 'the signature does not match any trusted key');
    };
    render(LicenseScreen);
    await fireEvent.input(await screen.findByLabelText('License key'), { target: { value: 'x.y' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Install license' }));
    expect((await screen.findByRole('alert')).textContent).toContain('Invalid license');
  });

  it('removes the license after confirmation', async () => {
    api.routes['GET /api/license'] = { edition: 'enterprise', license: lic };
    render(LicenseScreen);
    await fireEvent.click(await screen.findByRole('button', { name: 'Remove license' }));
    const dialog = screen.getByRole('dialog', { name: 'Remove the license?' });
    expect(api.called('DELETE /api/license')).toHaveLength(0);
    api.routes['GET /api/license'] = { edition: 'community', license: null };
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Remove license' }));
    expect(await screen.findByText(/runs the community edition\.$/)).toBeTruthy();
    expect(await screen.findByText('Community')).toBeTruthy();
    expect(api.called('DELETE /api/license')).toHaveLength(1);
  });

  it('marks an expired license', async () => {
    api.routes['GET /api/license'] = { edition: 'community', license: { ...lic, expiresAt: '2025-02-01T00:00:00Z' }, expired: true };
    render(LicenseScreen);
    expect(await screen.findByText('Expired license')).toBeTruthy();
    expect(screen.getByText(/The license has expired/)).toBeTruthy();
  });

  it('shows a non-admin the edition without the install form', async () => {
    session.session = { authenticated: true, authEnabled: true, user: { id: 2, username: 'eve', isAdmin: false, permissions: {} } };
    render(LicenseScreen);
    expect(await screen.findByText('Community')).toBeTruthy();
    expect(screen.queryByLabelText('License key')).toBeNull();
    expect(screen.getByText('Only administrators install or remove the license.')).toBeTruthy();
  });

  it('has no serious or critical axe violations', async () => {
    api.routes['GET /api/license'] = { edition: 'enterprise', license: lic };
    const { container } = render(LicenseScreen);
    await screen.findByText('Acme');
    await expectNoSeriousAxeViolations(container);
  });
});
