import { cleanup, fireEvent, render, screen, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../lib/api';
import * as admin from '../lib/api-admin';
import { session } from '../lib/session.svelte';
import { expectNoSeriousAxeViolations } from '../test-axe';
import LicenseScreen from './LicenseScreen.svelte';

vi.mock('../lib/api-admin', async (importOriginal) => {
  const real = await importOriginal<typeof import('../lib/api-admin')>();
  return { ...real, getLicense: vi.fn(), installLicense: vi.fn(), removeLicense: vi.fn() };
});

const lic: admin.LicenseDoc = { id: 'L-42', customer: 'Acme', edition: 'enterprise', issuedAt: '2025-01-01T00:00:00Z', expiresAt: null };

beforeEach(() => {
  session.session = { authenticated: true, authEnabled: true, user: { id: 1, username: 'admin', isAdmin: true } };
  vi.mocked(admin.getLicense).mockResolvedValue({ edition: 'community', license: null });
  vi.mocked(admin.removeLicense).mockResolvedValue({ success: true });
});
afterEach(() => {
  cleanup();
  vi.clearAllMocks();
  session.session = null;
});

describe('LicenseScreen', () => {
  it('shows the community edition and installs a key', async () => {
    vi.mocked(admin.installLicense).mockResolvedValue({ success: true, edition: 'enterprise', license: lic });
    render(LicenseScreen);
    expect(screen.getByRole('heading', { level: 1, name: 'License' })).toBeTruthy();
    expect(await screen.findByText('Community')).toBeTruthy();
    await fireEvent.input(screen.getByLabelText('License key'), { target: { value: '  abc.def \n' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Install license' }));
    expect(admin.installLicense).toHaveBeenCalledWith('abc.def');
    expect(await screen.findByText('Enterprise')).toBeTruthy();
    expect(screen.getByText('Acme')).toBeTruthy();
    expect(screen.getByText('never (perpetual)')).toBeTruthy();
    expect((screen.getByLabelText('License key') as HTMLTextAreaElement).value).toBe('');
  });

  it('shows why a key was refused', async () => {
    vi.mocked(admin.installLicense).mockRejectedValue(new ApiError(400, 'Invalid license', undefined, 'the signature does not match any trusted key'));
    render(LicenseScreen);
    await fireEvent.input(await screen.findByLabelText('License key'), { target: { value: 'x.y' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Install license' }));
    expect((await screen.findByRole('alert')).textContent).toContain('Invalid license');
  });

  it('removes the license after confirmation', async () => {
    vi.mocked(admin.getLicense).mockResolvedValue({ edition: 'enterprise', license: lic });
    render(LicenseScreen);
    await fireEvent.click(await screen.findByRole('button', { name: 'Remove license' }));
    const dialog = screen.getByRole('dialog', { name: 'Remove the license?' });
    expect(admin.removeLicense).not.toHaveBeenCalled();
    vi.mocked(admin.getLicense).mockResolvedValue({ edition: 'community', license: null });
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Remove license' }));
    expect(admin.removeLicense).toHaveBeenCalled();
    expect(await screen.findByText(/runs the community edition\.$/)).toBeTruthy();
    expect(await screen.findByText('Community')).toBeTruthy();
  });

  it('marks an expired license', async () => {
    vi.mocked(admin.getLicense).mockResolvedValue({ edition: 'community', license: { ...lic, expiresAt: '2025-02-01T00:00:00Z' }, expired: true });
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
    vi.mocked(admin.getLicense).mockResolvedValue({ edition: 'enterprise', license: lic });
    const { container } = render(LicenseScreen);
    await screen.findByText('Acme');
    await expectNoSeriousAxeViolations(container);
  });
});
