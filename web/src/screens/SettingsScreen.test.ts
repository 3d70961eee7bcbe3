import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../lib/api';
import * as admin from '../lib/api-admin';
import { queryClient } from '../lib/query';
import { session } from '../lib/session.svelte';
import * as sse from '../lib/sse';
import { stubApi, type StubApi, type StubCall } from '../test-api';
import { expectNoSeriousAxeViolations } from '../test-axe';
import SettingsScreen from './SettingsScreen.svelte';

vi.mock('../lib/sse', async (importOriginal) => {
  const real = await importOriginal<typeof import('../lib/sse')>();
  return { ...real, followJob: vi.fn() };
});

let api: StubApi;
/** The bodies sent to "METHOD /path", oldest first. */
const sent = (route: string) => api.called(route).map((c) => c.body);

const ldap: admin.LdapConfig = {
  id: 4,
  name: 'Corp',
  enabled: true,
  serverUrl: 'ldap://ldap.example.com:389',
  bindDn: 'cn=reader,dc=example,dc=com',
  bindPassword: admin.SECRET_MASK,
  baseDn: 'dc=example,dc=com',
  userFilter: '(uid={{username}})',
  usernameAttribute: 'uid',
  emailAttribute: 'mail',
  displayNameAttribute: 'cn',
  groupBaseDn: '',
  groupFilter: '',
  adminGroup: '',
  roleMappings: [],
  tlsEnabled: false,
  tlsCa: '',
};

const oidc: admin.OidcProvider = {
  id: 2,
  name: 'Dex',
  enabled: true,
  issuerUrl: 'http://127.0.0.1:5556/dex',
  clientId: 'berth',
  clientSecret: admin.SECRET_MASK,
  redirectUri: 'http://localhost:3000/api/auth/oidc/callback',
  scopes: 'openid profile email',
  usernameClaim: 'preferred_username',
  emailClaim: 'email',
  displayNameClaim: 'name',
  adminClaim: '',
  adminValue: '',
  roleMappingsClaim: 'groups',
  roleMappings: [],
};

beforeEach(() => {
  session.session = { authenticated: true, authEnabled: true, user: { id: 1, username: 'admin', isAdmin: true } };
  session.environments = [{ id: 1, name: 'local', connectionType: 'socket' }];
  session.envId = 1;
  api = stubApi({
    'GET /api/auth/providers': {
      providers: [
        { id: 'local', name: 'Local', type: 'local' },
        { id: 'ldap:4', name: 'Corp', type: 'ldap' },
      ],
      defaultProvider: 'local',
    },
    'GET /api/auth/session': session.session,
    'GET /api/auth/settings': { authEnabled: true, defaultProvider: 'local', sessionTimeout: 86400 },
    'GET /api/roles': [{ id: 3, name: 'Viewer', description: '', permissions: {}, environmentIds: null, isSystem: true }],
    'GET /api/auth/ldap': [ldap],
    'GET /api/auth/oidc': [oidc],
    'GET /api/settings/scanner': { scanner: 'none', available: { scanner_a: 'binary', scanner_b: 'container' } },
    'GET /api/images/scanners': scanners,
  });
});
afterEach(() => {
  cleanup();
  vi.clearAllMocks();
  vi.unstubAllGlobals();
  session.session = null;
  session.environments = [];
  session.envId = null;
});

const scanners = {
  setting: 'none',
  usable: true,
  scanners: [
    { scanner: 'scanner_a', name: 'Grype', usable: true, via: 'binary', binary: '/usr/local/bin/grype', binarySetting: 'GRYPE_PATH', image: 'anchore/grype:v0.87.0', imagePresent: false },
    {
      scanner: 'scanner_b',
      name: 'Trivy',
      usable: false,
      binarySetting: 'TRIVY_PATH',
      image: 'aquasec/trivy:0.58.1',
      imagePresent: false,
      reason: 'Trivy is not installed and its image aquasec/trivy:0.58.1 is not on this environment. To scan, set TRIVY_PATH to its binary, or add a registry serving aquasec/trivy:0.58.1.',
    },
  ],
};

const section = async (name: string) => within(await screen.findByRole('region', { name }));

describe('SettingsScreen', () => {
  it('shows every section', async () => {
    render(SettingsScreen);
    expect(screen.getByRole('heading', { level: 1, name: 'Settings' })).toBeTruthy();
    await screen.findByRole('region', { name: 'Authentication' });
    expect(await (await section('LDAP')).findByText('Corp')).toBeTruthy();
    expect(await (await section('OpenID Connect')).findByText('Dex')).toBeTruthy();
    expect(await (await section('Vulnerability scanning')).findByLabelText('No scanning')).toBeTruthy();
    expect(api.called('GET /api/settings/scanner')[0].query).toEqual({ env: '1' });
    // never a secret, not even the mask
    expect(document.body.textContent).not.toContain(admin.SECRET_MASK);
    // The sign-in methods are cached as the server answers them: the sign-in page, shown next after signing out,
    // reads the same key and needs the whole answer (a list there made it offer no sign-in method at all).
    await waitFor(() => expect(queryClient.getQueryData(['auth', 'providers'])).toHaveProperty('providers'));
  });

  it('saves the authentication settings that changed', async () => {
    api.routes['PUT /api/auth/settings'] = { authEnabled: true, defaultProvider: 'ldap:4', sessionTimeout: 3600 };
    render(SettingsScreen);
    const s = within(await screen.findByRole('region', { name: 'Authentication' }));
    await waitFor(() => expect(s.getByRole('option', { name: /Corp/ })).toBeTruthy());
    await fireEvent.change(s.getByLabelText('Preselected on the sign-in page'), { target: { value: 'ldap:4' } });
    await fireEvent.input(s.getByLabelText('Session lifetime (minutes)'), { target: { value: '60' } });
    await fireEvent.click(s.getByRole('button', { name: 'Save authentication settings' }));
    expect(await s.findByText('Authentication settings saved.')).toBeTruthy();
    expect(sent('PUT /api/auth/settings')).toEqual([{ defaultProvider: 'ldap:4', sessionTimeout: 3600 }]);
  });

  it('asks before turning sign-in off', async () => {
    api.routes['PUT /api/auth/settings'] = { authEnabled: false, defaultProvider: 'local', sessionTimeout: 86400 };
    render(SettingsScreen);
    const s = within(await screen.findByRole('region', { name: 'Authentication' }));
    await fireEvent.click(s.getByLabelText('Require sign-in'));
    await fireEvent.click(s.getByRole('button', { name: 'Save authentication settings' }));
    expect(sent('PUT /api/auth/settings')).toHaveLength(0);
    const dialog = screen.getByRole('dialog', { name: 'Turn sign-in off?' });
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Turn sign-in off' }));
    await waitFor(() => expect(sent('PUT /api/auth/settings')).toEqual([{ authEnabled: false }]));
    await waitFor(() => expect(api.called('GET /api/auth/session')).toHaveLength(1));
  });

  it('creates an LDAP configuration with its bind password', async () => {
    api.routes['POST /api/auth/ldap'] = { ...ldap, id: 5, name: 'Lab' };
    render(SettingsScreen);
    const s = await section('LDAP');
    await s.findByText('Corp');
    await fireEvent.click(s.getByRole('button', { name: 'New LDAP configuration' }));
    const f = within(s.getByRole('form', { name: 'New LDAP configuration' }));
    await fireEvent.input(f.getByLabelText('Name'), { target: { value: 'Lab' } });
    await fireEvent.input(f.getByLabelText('Server URL'), { target: { value: 'ldap://127.0.0.1:3890' } });
    await fireEvent.input(f.getByLabelText('Base DN'), { target: { value: 'dc=berth,dc=test' } });
    await fireEvent.input(f.getByLabelText('Bind DN'), { target: { value: 'cn=reader,dc=berth,dc=test' } });
    await fireEvent.input(f.getByLabelText('Bind password'), { target: { value: 'reader-password' } });
    api.routes['GET /api/auth/ldap'] = [ldap, { ...ldap, id: 5, name: 'Lab' }];
    await fireEvent.click(f.getByRole('button', { name: 'Create' }));
    await waitFor(() => expect(sent('POST /api/auth/ldap')).toHaveLength(1));
    expect(sent('POST /api/auth/ldap')[0]).toEqual(
      expect.objectContaining({
        name: 'Lab',
        serverUrl: 'ldap://127.0.0.1:3890',
        baseDn: 'dc=berth,dc=test',
        bindDn: 'cn=reader,dc=berth,dc=test',
        bindPassword: 'reader-password',
        userFilter: '(uid={{username}})',
        enabled: true,
        roleMappings: [],
      }),
    );
    expect(await s.findByText('LDAP configuration Lab created.')).toBeTruthy();
    // the list is read again: the new configuration is in it
    expect(await s.findByText('Lab')).toBeTruthy();
  });

  it('keeps, replaces or removes the stored bind password on edit', async () => {
    api.routes['PATCH /api/auth/ldap/4'] = ldap;
    const patches = () => sent('PATCH /api/auth/ldap/4') as Record<string, unknown>[];
    render(SettingsScreen);
    const s = await section('LDAP');
    await fireEvent.click(await s.findByRole('button', { name: 'Edit Corp' }));
    let f = within(s.getByRole('form', { name: 'Edit LDAP configuration Corp' }));
    const pw = f.getByLabelText('Bind password') as HTMLInputElement;
    expect(pw.value).toBe('');
    expect(pw.type).toBe('password');
    await fireEvent.click(f.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(patches()).toHaveLength(1));
    expect(patches()[0]).not.toHaveProperty('bindPassword');

    await fireEvent.click(await s.findByRole('button', { name: 'Edit Corp' }));
    f = within(s.getByRole('form', { name: 'Edit LDAP configuration Corp' }));
    await fireEvent.click(f.getByLabelText('Remove the stored value'));
    await fireEvent.click(f.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(patches()).toHaveLength(2));
    expect(patches()[1]).toHaveProperty('bindPassword', '');

    await fireEvent.click(await s.findByRole('button', { name: 'Edit Corp' }));
    f = within(s.getByRole('form', { name: 'Edit LDAP configuration Corp' }));
    await fireEvent.input(f.getByLabelText('Bind password'), { target: { value: 'new-secret' } });
    await fireEvent.click(f.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(patches()).toHaveLength(3));
    expect(patches()[2]).toHaveProperty('bindPassword', 'new-secret');
  });

  it('tests an LDAP configuration and shows success and failure', async () => {
    const answers = [
      { success: true, userCount: 3 },
      { success: false, error: 'LDAP server unavailable: connection refused' },
    ];
    api.routes['POST /api/auth/ldap/4/test'] = () => answers.shift();
    render(SettingsScreen);
    const s = await section('LDAP');
    await fireEvent.click(await s.findByRole('button', { name: 'Test Corp' }));
    expect(await s.findByText('Connected: 3 users found.')).toBeTruthy();
    await fireEvent.click(s.getByRole('button', { name: 'Test Corp' }));
    expect((await s.findByRole('alert')).textContent).toBe('LDAP server unavailable: connection refused');
  });

  it('deletes an LDAP configuration after confirmation', async () => {
    api.routes['DELETE /api/auth/ldap/4'] = { success: true };
    render(SettingsScreen);
    const s = await section('LDAP');
    await fireEvent.click(await s.findByRole('button', { name: 'Delete Corp' }));
    expect(api.called('DELETE /api/auth/ldap/4')).toHaveLength(0);
    api.routes['GET /api/auth/ldap'] = [];
    await fireEvent.click(within(screen.getByRole('dialog', { name: 'Delete LDAP configuration Corp?' })).getByRole('button', { name: 'Delete' }));
    await waitFor(() => expect(api.called('DELETE /api/auth/ldap/4')).toHaveLength(1));
    expect(await s.findByText('No LDAP configuration.')).toBeTruthy();
  });

  it('says LDAP needs a license in the community edition', async () => {
    api.routes['GET /api/auth/ldap'] = () => {
      throw new ApiError(403, 'Enterprise license required');
    };
    render(SettingsScreen);
    const s = await section('LDAP');
    expect(await s.findByText(/LDAP sign-in is an enterprise feature/)).toBeTruthy();
    expect(s.getByRole('link', { name: 'Install a license' }).getAttribute('href')).toBe('/license');
  });

  it('creates an OIDC provider with the callback URL of this console as redirect', async () => {
    api.routes['POST /api/auth/oidc'] = { ...oidc, id: 3, name: 'Keycloak' };
    render(SettingsScreen);
    const s = await section('OpenID Connect');
    await s.findByText('Dex');
    const callback = `${location.origin}/api/auth/oidc/callback`;
    expect(s.getByText(callback)).toBeTruthy();
    await fireEvent.click(s.getByRole('button', { name: 'New OIDC provider' }));
    const f = within(s.getByRole('form', { name: 'New OIDC provider' }));
    expect((f.getByLabelText('Redirect URI') as HTMLInputElement).value).toBe(callback);
    await fireEvent.input(f.getByLabelText('Name'), { target: { value: 'Keycloak' } });
    await fireEvent.input(f.getByLabelText('Issuer URL'), { target: { value: 'https://kc.example.com/realms/x' } });
    await fireEvent.input(f.getByLabelText('Client ID'), { target: { value: 'berth' } });
    await fireEvent.input(f.getByLabelText('Client secret'), { target: { value: 's3cret' } });
    await fireEvent.click(f.getByRole('button', { name: 'Add mapping' }));
    await fireEvent.input(f.getByLabelText('Claim value 1'), { target: { value: 'ops' } });
    await fireEvent.click(f.getByRole('button', { name: 'Create' }));
    await waitFor(() => expect(sent('POST /api/auth/oidc')).toHaveLength(1));
    expect(sent('POST /api/auth/oidc')[0]).toEqual(
      expect.objectContaining({
        name: 'Keycloak',
        issuerUrl: 'https://kc.example.com/realms/x',
        clientId: 'berth',
        clientSecret: 's3cret',
        redirectUri: callback,
        roleMappings: [{ claimValue: 'ops', roleId: 3 }],
      }),
    );
  });

  it('leaves the stored client secret alone on edit, and tests a provider', async () => {
    api.routes['PATCH /api/auth/oidc/2'] = oidc;
    api.routes['POST /api/auth/oidc/2/test'] = {
      success: false,
      error: 'Failed to fetch OIDC discovery document',
      details: 'connection refused',
    };
    render(SettingsScreen);
    const s = await section('OpenID Connect');
    await fireEvent.click(await s.findByRole('button', { name: 'Edit Dex' }));
    const f = within(s.getByRole('form', { name: 'Edit OIDC provider Dex' }));
    expect((f.getByLabelText('Client secret') as HTMLInputElement).required).toBe(false);
    await fireEvent.click(f.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(sent('PATCH /api/auth/oidc/2')).toHaveLength(1));
    expect(sent('PATCH /api/auth/oidc/2')[0]).not.toHaveProperty('clientSecret');
    await fireEvent.click(await s.findByRole('button', { name: 'Test Dex' }));
    expect((await s.findByRole('alert')).textContent).toBe('Failed to fetch OIDC discovery document: connection refused');
  });

  it('sets the scanner of the selected environment, saying which scanner can run there', async () => {
    api.routes['POST /api/settings/scanner'] = (c: StubCall) => {
      api.routes['GET /api/settings/scanner'] = { scanner: (c.body as { scanner: string }).scanner, available: {} };
      return { success: true, scanner: 'both' };
    };
    render(SettingsScreen);
    const s = await section('Vulnerability scanning');
    expect((await s.findByLabelText('No scanning') as HTMLInputElement).checked).toBe(true);
    const list = await s.findByRole('list', { name: 'Scanners on this environment' });
    expect(within(list).getByText('Grype: can scan, runs /usr/local/bin/grype.')).toBeTruthy();
    expect(within(list).getByText(/^Trivy: cannot scan\. Trivy is not installed .* set TRIVY_PATH to its binary/)).toBeTruthy();
    expect(api.called('GET /api/images/scanners')[0].query).toEqual({ env: '1' });
    await fireEvent.click(s.getByLabelText('Grype and Trivy'));
    await fireEvent.click(s.getByRole('button', { name: 'Save scanner' }));
    expect(await s.findByText('Scanner of local saved.')).toBeTruthy();
    expect(api.called('POST /api/settings/scanner')).toHaveLength(1);
    expect(api.called('POST /api/settings/scanner')[0]).toMatchObject({ query: { env: '1' }, body: { scanner: 'both' } });
    // the stored choice is read again and stays selected
    await waitFor(() => expect(api.called('GET /api/settings/scanner').length).toBeGreaterThan(1));
    expect((s.getByLabelText('Grype and Trivy') as HTMLInputElement).checked).toBe(true);
  });

  it("pulls a missing scanner's image in one click, as the image screens do", async () => {
    queryClient.clear();
    const trivy = {
      ...scanners.scanners[1],
      reason: 'Trivy is not installed. To scan, pull its image from mirror, or set TRIVY_PATH to its binary.',
      pullFrom: { registryId: 7, registryName: 'mirror', reference: '127.0.0.1:5000/aquasec/trivy:0.58.1' },
    };
    api.routes['GET /api/images/scanners'] = { ...scanners, scanners: [scanners.scanners[0], trivy] };
    api.routes['POST /api/images/scanners/pull'] = { jobId: 'pull-t' };
    vi.mocked(sse.followJob).mockImplementation(async (_jobId, onEvent) => {
      api.routes['GET /api/images/scanners'] = {
        ...scanners,
        scanners: [scanners.scanners[0], { ...scanners.scanners[1], usable: true, via: 'image', imagePresent: true, reason: undefined }],
      };
      onEvent({ event: 'result', data: JSON.stringify({ status: 'complete', message: 'Pulled aquasec/trivy:0.58.1 from mirror' }) });
    });
    render(SettingsScreen);
    const s = await section('Vulnerability scanning');
    const list = await s.findByRole('list', { name: 'Scanners on this environment' });
    expect(within(list).getByText('(aquasec/trivy:0.58.1 from mirror)')).toBeTruthy();
    expect(s.getByText('GRYPE_PATH')).toBeTruthy(); // the binary advice, here without a link to Settings
    expect(s.queryByRole('link', { name: 'Settings' })).toBeNull();
    await fireEvent.click(within(list).getByRole('button', { name: 'Pull Trivy image' }));
    await waitFor(() => expect(api.called('POST /api/images/scanners/pull')[0]?.body).toEqual({ scanner: 'scanner_b' }));
    expect(api.called('POST /api/images/scanners/pull')[0].query).toEqual({ env: '1' });
    expect(await s.findByText('Pulled aquasec/trivy:0.58.1 from mirror: Trivy can scan now.')).toBeTruthy();
    expect(
      await within(list).findByText("Trivy: can scan, runs in a container of its image aquasec/trivy:0.58.1 on the environment's engine."),
    ).toBeTruthy();
    expect(within(list).queryByRole('button')).toBeNull();
  });

  it('says when no scanner can run, and why the scanner setting was not saved', async () => {
    api.routes['GET /api/settings/scanner'] = { scanner: 'scanner_b', available: {} };
    api.routes['GET /api/images/scanners'] = { ...scanners, setting: 'scanner_b', usable: false, scanners: [{ ...scanners.scanners[1] }] };
    api.routes['POST /api/settings/scanner'] = () => {
      throw new ApiError(400, 'scanner must be none, scanner_a, scanner_b or both');
    };
    render(SettingsScreen);
    const s = await section('Vulnerability scanning');
    expect((await s.findByText(/No scanner can run on local/)).textContent).toContain('scans there fail');
    await fireEvent.click(s.getByRole('button', { name: 'Save scanner' }));
    expect((await s.findByRole('alert')).textContent).toBe(
      'The scanner setting was not saved: scanner must be none, scanner_a, scanner_b or both',
    );
  });

  it('tells a user without the permission that they are not allowed', async () => {
    api.routes['GET /api/auth/settings'] = () => {
      throw new ApiError(403, 'Permission denied');
    };
    render(SettingsScreen);
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toMatch(/Not allowed\..*Permission denied/);
    expect(screen.queryByRole('region')).toBeNull();
  });

  it('has no serious or critical axe violations', async () => {
    const { container } = render(SettingsScreen);
    await (await section('LDAP')).findByText('Corp');
    await (await section('OpenID Connect')).findByText('Dex');
    await fireEvent.click((await section('LDAP')).getByRole('button', { name: 'Edit Corp' }));
    await fireEvent.click((await section('OpenID Connect')).getByRole('button', { name: 'New OIDC provider' }));
    await expectNoSeriousAxeViolations(container);
  }, 30_000);
});
