// Browser test of the console's sign-in and administration screens (harness:
// lib/harness.mjs): API tokens on the profile (shown once, usable as a Bearer
// token, refused once revoked), the license, users with a role (that user sees
// only the navigation it may use and a clear refusal on an admin page), roles,
// the audit log (filter by action, CSV export), and the settings (an LDAP
// configuration against the test directory, an OIDC provider against the test
// identity provider). axe-core checks every screen; screenshots go to
// screenshots/ (profile, users, roles, audit, settings, license).
//
// Enterprise features (custom roles, the audit log, LDAP) need a license that
// berth trusts. The test signs one with a key of its own and hands berth the
// public key in BERTH_LICENSE_KEYS, which bin/berth-e2e (make e2e) reads; a
// release binary refuses the license, and the enterprise steps then check the
// community edition's answer (a clear "needs a license") and are reported as
// skipped — or fail under CI=true.
//
// Needs: bin/berth (make build), a Docker engine, Chromium, and the test
// directory and identity provider of scripts/test-env.sh (BERTH_TEST_LDAP_*,
// BERTH_TEST_OIDC_*; with CI=true their absence fails the test).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { makeLicense } from './lib/fixtures.mjs';
import { startConsole } from './lib/harness.mjs';

let h;
let page;
let base;
let admin;
let label;
let enterprise = false;
let licenseDoc = '';
const ci = process.env.CI === 'true';

/** Skips t (or fails it under CI=true) when the variables are missing. */
function requireEnv(t, what, ...names) {
  const missing = names.filter((n) => !process.env[n]);
  if (missing.length === 0) return true;
  assert.ok(!ci, `${what} is required under CI=true: ${missing.join(', ')} not set (scripts/test-env.sh)`);
  t.skip(`no ${what}: ${missing.join(', ')} not set`);
  return false;
}

function skipCommunity(t, what) {
  // make e2e runs bin/berth-e2e, which trusts the test key: under CI a refused
  // license is a failure, never a skipped step counted as passing.
  assert.ok(!ci, `${what} needs an enterprise license, and this berth (${process.env.BERTH_BIN || 'bin/berth'}) does not trust the test key: run it through make e2e (bin/berth-e2e)`);
  t.diagnostic(`${what} needs an enterprise license; this berth does not trust the test key (BERTH_LICENSE_KEYS)`);
  t.skip(`${what}: community edition (checked its answer instead)`);
}

async function signOut() {
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.waitForURL((u) => u.pathname === '/login');
}

async function signInAs(username, password) {
  await page.goto(base + '/login');
  await page.getByLabel('Username', { exact: true }).fill(username);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { level: 1, name: 'Dashboard' }).waitFor();
}

/** The region (section) of the page named by its heading. */
const region = (name) => page.getByRole('region', { name, exact: true });

describe('administration screens', { timeout: 300_000 }, () => {
  before(async () => {
    const lic = makeLicense('e2e-license');
    licenseDoc = lic.doc;
    h = await startConsole({ env: { BERTH_LICENSE_KEYS: lic.key } });
    ({ page, base, admin, label } = h);
    await h.signIn();
  });

  after(async () => {
    // Everything this test creates lives in the run's data directory (users,
    // roles, tokens, LDAP and OIDC configurations), which stop() removes.
    await h?.stop();
  });

  it('profile: an API token is shown once, works as a Bearer token, and is refused once revoked', async () => {
    const name = `e2e-${label}`;
    await h.open('/profile', 'Profile');
    await page.getByRole('region', { name: 'API tokens' }).getByText('You have no API tokens.').waitFor();
    await page.getByRole('button', { name: 'New token' }).click();
    await page.getByLabel('Name', { exact: true }).fill(name);
    await page.getByLabel('Expires', { exact: true }).selectOption({ label: 'in 30 days' });
    await page.getByLabel('Your password', { exact: true }).fill(admin.password);
    await page.getByRole('button', { name: 'Create token' }).click();
    const box = page.getByRole('textbox', { name: 'New API token', exact: true });
    await box.waitFor();
    const token = await box.inputValue();
    assert.match(token, /^bth_[A-Za-z0-9_-]{20,}$/);
    await page.getByText('shown only this once', { exact: false }).waitFor();
    await page.getByRole('button', { name: 'Copy token' }).waitFor();
    const row = page.getByRole('row').filter({ hasText: name });
    await row.waitFor();
    assert.ok((await row.textContent()).includes(token.slice(0, 10)), 'the list shows the token prefix');
    await h.checkA11y('profile');
    await h.screenshot('profile');

    await page.getByRole('button', { name: 'Done' }).click();
    assert.ok(!(await page.content()).includes(token), 'the token is not on the page once dismissed');
    await page.reload();
    await page.getByRole('row').filter({ hasText: name }).waitFor();
    assert.ok(!(await page.content()).includes(token), 'the token is never shown again');

    const call = () => fetch(`${base}/api/environments`, { headers: { Authorization: `Bearer ${token}` } });
    const ok = await call();
    const body = await ok.text();
    assert.equal(ok.status, 200, `GET /api/environments with the token: ${ok.status} ${body}`);
    assert.ok(Array.isArray(JSON.parse(body)), body);

    await page.getByRole('button', { name: `Revoke ${name}` }).click();
    const dialog = page.getByRole('dialog', { name: `Revoke ${name}?` });
    await dialog.getByRole('button', { name: 'Revoke', exact: true }).click();
    await dialog.waitFor({ state: 'detached' });
    await page.getByText('You have no API tokens.').waitFor();
    const refused = await call();
    assert.equal(refused.status, 401, 'a revoked token is refused');
  });

  it('license: shows the edition and installs a license key', async () => {
    await h.open('/license', 'License');
    await page.getByText('Community', { exact: true }).waitFor();
    await page.getByLabel('License key', { exact: true }).fill(licenseDoc);
    await page.getByRole('button', { name: 'Install license' }).click();
    const outcome = await Promise.race([
      page.getByText('Enterprise', { exact: true }).waitFor().then(() => 'enterprise'),
      page.getByRole('alert').waitFor().then(() => 'refused'),
    ]);
    if (outcome === 'refused') {
      const msg = await page.getByRole('alert').textContent();
      assert.match(msg, /Invalid license/, 'an untrusted key is refused with the server message');
    } else {
      await page.getByText('Berth e2e', { exact: true }).waitFor();
      await page.getByText('never (perpetual)').waitFor();
    }
    enterprise = outcome === 'enterprise';
    await h.checkA11y('license');
    await h.screenshot('license');
  });

  it('users: a user created with a role sees only the navigation it may use', async () => {
    const username = `e2e-${label}`;
    const password = `e2e-${label}-pw`;
    await h.open('/users', 'Users');
    await page.getByRole('row').filter({ hasText: '(you)' }).filter({ hasText: admin.username }).waitFor();
    await page.getByRole('button', { name: 'New user' }).click();
    const form = page.getByRole('form', { name: 'New user' });
    await form.getByLabel('Username', { exact: true }).fill(username);
    await form.getByLabel('Display name', { exact: true }).fill('E2E Viewer');
    await form.getByLabel('Password', { exact: true }).fill(password);
    await form.getByLabel('Role', { exact: true }).selectOption({ label: 'Viewer' });
    await form.getByRole('button', { name: 'Create user' }).click();
    await page.getByRole('status').filter({ hasText: `${username} created.` }).waitFor();
    await page.getByRole('row').filter({ hasText: username }).waitFor();

    // The role is there, on all environments.
    await page.getByRole('button', { name: `Roles of ${username}` }).click();
    const roles = page.getByRole('region', { name: `Roles of ${username}` });
    await roles.getByRole('row').filter({ hasText: 'Viewer' }).filter({ hasText: 'All environments' }).waitFor();
    await h.checkA11y('users');
    await h.screenshot('users');
    await roles.getByRole('button', { name: 'Close' }).click();

    await signOut();
    await signInAs(username, password);
    const nav = page.getByRole('navigation', { name: 'Main' });
    await nav.getByRole('link', { name: 'Containers', exact: true }).waitFor();
    for (const adminOnly of ['Users', 'Roles', 'Audit log', 'Settings', 'License']) {
      assert.equal(await nav.getByRole('link', { name: adminOnly, exact: true }).count(), 0, `${adminOnly} is hidden from a viewer`);
    }
    // An admin page opened directly says no, with the server's message.
    for (const [path, heading] of [
      ['/users', 'Users'],
      ['/settings', 'Settings'],
    ]) {
      await h.open(path, heading);
      const alert = page.getByRole('alert');
      await alert.waitFor();
      assert.match(await alert.textContent(), /Not allowed\..*Permission denied/);
    }
    await h.checkA11y('users as a viewer');

    await signOut();
    await h.signIn();
    await h.open('/users', 'Users');
    await page.getByRole('button', { name: `Delete ${username}` }).click();
    const dialog = page.getByRole('dialog', { name: `Delete ${username}?` });
    await dialog.getByRole('button', { name: 'Delete user' }).click();
    await page.getByRole('status').filter({ hasText: `${username} deleted.` }).waitFor();
    await page.getByRole('row').filter({ hasText: username }).waitFor({ state: 'detached' });
    const gone = await h.api('GET', '/api/users');
    assert.ok(!gone.body.some((u) => u.username === username), 'the user is gone');
  });

  it('roles: a custom role is created with the permission matrix and deleted', async (t) => {
    const name = `e2e-${label}-role`;
    await h.open('/roles', 'Roles');
    await page.getByRole('button', { name: 'View Viewer' }).waitFor();
    if (!enterprise) {
      await page.getByText('Custom roles are an enterprise feature', { exact: false }).waitFor();
      assert.equal(await page.getByRole('button', { name: 'New role' }).isDisabled(), true);
      await page.getByRole('button', { name: 'View Viewer' }).click();
      await page.getByRole('form', { name: 'Built-in role Viewer' }).waitFor();
      await h.checkA11y('roles');
      await h.screenshot('roles');
      return skipCommunity(t, 'custom roles');
    }
    await page.getByRole('button', { name: 'New role' }).click();
    const form = page.getByRole('form', { name: 'New role' });
    await form.getByLabel('Name', { exact: true }).fill(name);
    await form.getByLabel('Description', { exact: true }).fill('made by the e2e test');
    await form.getByLabel('containers:view', { exact: true }).check();
    await form.getByLabel('containers:logs', { exact: true }).check();
    await form.getByLabel('Images: every action', { exact: true }).check();
    await form.getByText(/^8 of \d+ granted$/).waitFor(); // 2 + the 6 image actions
    await h.checkA11y('roles');
    await h.screenshot('roles');
    await form.getByRole('button', { name: 'Create role' }).click();
    await page.getByRole('status').filter({ hasText: `Role ${name} created.` }).waitFor();
    const created = (await h.api('GET', '/api/roles')).body.find((r) => r.name === name);
    assert.deepEqual(created.permissions, {
      containers: ['view', 'logs'],
      images: ['view', 'pull', 'push', 'remove', 'build', 'inspect'],
    });
    assert.equal(created.environmentIds, null);

    await page.getByRole('button', { name: `Delete ${name}` }).click();
    await page.getByRole('dialog', { name: `Delete role ${name}?` }).getByRole('button', { name: 'Delete role' }).click();
    await page.getByRole('status').filter({ hasText: `Role ${name} deleted.` }).waitFor();
    await page.getByRole('row').filter({ hasText: name }).waitFor({ state: 'detached' });
  });

  it('audit: the log shows the user creation, filters by action and exports CSV', async (t) => {
    await h.open('/audit', 'Audit log');
    if (!enterprise) {
      const alert = page.getByRole('alert');
      await alert.waitFor();
      assert.match(await alert.textContent(), /Not allowed\..*Enterprise license required/);
      await alert.getByRole('link', { name: 'See the license' }).waitFor();
      await h.checkA11y('audit');
      await h.screenshot('audit');
      return skipCommunity(t, 'the audit log');
    }
    await page.getByRole('table').waitFor();
    await page.getByLabel('Action', { exact: true }).fill('user.create');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByText(/^Entries 1–\d+ of \d+$/).waitFor();
    const table = page.getByRole('table');
    await table.getByRole('cell', { name: 'user.create', exact: true }).first().waitFor();
    const actions = await table.locator('tbody tr td:nth-child(3)').allTextContents();
    assert.ok(actions.length >= 2, `the first admin and the e2e user were created: ${actions}`);
    assert.deepEqual([...new Set(actions.map((a) => a.trim()))], ['user.create'], 'only user.create rows');
    const total = Number(/of (\d+)/.exec(await page.getByText(/^Entries 1–\d+ of \d+$/).textContent())[1]);
    assert.equal(total, actions.length);

    // Details of the newest row.
    const details = page.getByRole('button', { name: /^Details of entry \d+$/ }).first();
    await details.click();
    assert.equal(await details.getAttribute('aria-expanded'), 'true');
    await page.getByRole('cell').getByText('127.0.0.1', { exact: true }).waitFor();
    await h.checkA11y('audit');
    await h.screenshot('audit');

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()]);
    assert.match(download.suggestedFilename(), /^berth-audit-\d{8}-\d{6}\.csv$/);
    const csv = readFileSync(await download.path(), 'utf8');
    const lines = csv.split('\r\n');
    assert.equal(lines[0], 'id,timestamp,userId,username,environmentId,action,entityType,entityId,entityName,description,details,ipAddress');
    assert.equal(lines.length, total + 2, 'a header, the filtered rows and the final line end');
    assert.ok(lines.slice(1, -1).every((l) => l.split(',')[5] === 'user.create'), csv);
  });

  it('settings: an LDAP configuration against the test directory is created, tested and deleted', async (t) => {
    if (!requireEnv(t, 'test LDAP directory', 'BERTH_TEST_LDAP_URL', 'BERTH_TEST_LDAP_BASE', 'BERTH_TEST_LDAP_BIND_DN', 'BERTH_TEST_LDAP_BIND_PASSWORD'))
      return;
    const name = `e2e-${label}`;
    await h.open('/settings', 'Settings');
    const ldap = region('LDAP');
    await region('Authentication').getByLabel('Session lifetime (minutes)').waitFor();
    // The scanner section says, for each scanner, whether it can scan on this environment and, when not, how to get it.
    const scanners = region('Vulnerability scanning').getByRole('list', { name: 'Scanners on this environment' });
    await scanners.waitFor();
    const items = (await scanners.getByRole('listitem').allTextContents()).map((x) => x.replace(/\s+/g, ' ').trim());
    assert.deepEqual(items.map((x) => x.split(':')[0]), ['Grype', 'Trivy']);
    for (const x of items) assert.match(x, /^\w+: (can scan, runs .+\.|cannot scan\. .+ To scan, .+\.)$/);
    if (!enterprise) {
      await ldap.getByText('LDAP sign-in is an enterprise feature', { exact: false }).waitFor();
      await h.checkA11y('settings');
      await h.screenshot('settings');
      return skipCommunity(t, 'LDAP');
    }
    await ldap.getByRole('button', { name: 'New LDAP configuration' }).click();
    const form = ldap.getByRole('form', { name: 'New LDAP configuration' });
    await form.getByLabel('Name', { exact: true }).fill(name);
    await form.getByLabel('Server URL', { exact: true }).fill(process.env.BERTH_TEST_LDAP_URL);
    await form.getByLabel('Base DN', { exact: true }).fill(process.env.BERTH_TEST_LDAP_BASE);
    await form.getByLabel('Bind DN', { exact: true }).fill(process.env.BERTH_TEST_LDAP_BIND_DN);
    await form.getByLabel('Bind password', { exact: true }).fill(process.env.BERTH_TEST_LDAP_BIND_PASSWORD);
    await form.getByRole('button', { name: 'Create', exact: true }).click();
    await ldap.getByRole('status').filter({ hasText: `LDAP configuration ${name} created.` }).waitFor();
    assert.ok(!(await page.content()).includes(process.env.BERTH_TEST_LDAP_BIND_PASSWORD), 'the bind password is not on the page');

    await ldap.getByRole('button', { name: `Test ${name}` }).click();
    const result = ldap.getByText(/^Connected: \d+ users? found\.$/);
    await result.waitFor();
    const found = Number(/(\d+)/.exec(await result.textContent())[1]);
    assert.ok(found >= 2, `the test directory has alice and bob: ${found}`);

    // Edit keeps the stored password: the test still binds.
    await ldap.getByRole('button', { name: `Edit ${name}` }).click();
    const edit = ldap.getByRole('form', { name: `Edit LDAP configuration ${name}` });
    assert.equal(await edit.getByLabel('Bind password', { exact: true }).inputValue(), '');
    await h.checkA11y('settings');
    await h.screenshot('settings');
    await edit.getByRole('button', { name: 'Save', exact: true }).click();
    await ldap.getByRole('status').filter({ hasText: `LDAP configuration ${name} saved.` }).waitFor();
    await ldap.getByRole('button', { name: `Test ${name}` }).click();
    await ldap.getByText(/^Connected: \d+ users? found\.$/).waitFor();

    // It is offered on the sign-in page's provider list.
    const providers = await (await fetch(`${base}/api/auth/providers`)).json();
    assert.ok(providers.providers.some((p) => p.type === 'ldap' && p.name === name), JSON.stringify(providers));

    await ldap.getByRole('button', { name: `Delete ${name}` }).click();
    await page.getByRole('dialog', { name: `Delete LDAP configuration ${name}?` }).getByRole('button', { name: 'Delete', exact: true }).click();
    await ldap.getByRole('status').filter({ hasText: `LDAP configuration ${name} deleted.` }).waitFor();
    await ldap.getByText('No LDAP configuration.').waitFor();
  });

  it('settings: an OIDC provider against the test identity provider is created, tested and deleted', async (t) => {
    if (!requireEnv(t, 'test OIDC provider', 'BERTH_TEST_OIDC_ISSUER', 'BERTH_TEST_OIDC_CLIENT_ID', 'BERTH_TEST_OIDC_CLIENT_SECRET')) return;
    const name = `e2e-${label}`;
    await h.open('/settings', 'Settings');
    const oidc = region('OpenID Connect');
    const callback = `${base}/api/auth/oidc/callback`;
    await oidc.getByText(callback, { exact: true }).waitFor();
    await oidc.getByRole('button', { name: 'New OIDC provider' }).click();
    const form = oidc.getByRole('form', { name: 'New OIDC provider' });
    assert.equal(await form.getByLabel('Redirect URI', { exact: true }).inputValue(), callback);
    await form.getByLabel('Name', { exact: true }).fill(name);
    await form.getByLabel('Issuer URL', { exact: true }).fill(process.env.BERTH_TEST_OIDC_ISSUER);
    await form.getByLabel('Client ID', { exact: true }).fill(process.env.BERTH_TEST_OIDC_CLIENT_ID);
    await form.getByLabel('Client secret', { exact: true }).fill(process.env.BERTH_TEST_OIDC_CLIENT_SECRET);
    await form.getByRole('button', { name: 'Create', exact: true }).click();
    await oidc.getByRole('status').filter({ hasText: `OIDC provider ${name} created.` }).waitFor();
    assert.ok(!(await page.content()).includes(process.env.BERTH_TEST_OIDC_CLIENT_SECRET), 'the client secret is not on the page');

    await oidc.getByRole('button', { name: `Test ${name}` }).click();
    await oidc.getByText(`Discovery document read: issuer ${process.env.BERTH_TEST_OIDC_ISSUER}.`).waitFor();
    await h.checkA11y('settings with an OIDC provider');

    // The sign-in page offers it.
    await signOut();
    await page.getByRole('link', { name: `Continue with ${name}` }).waitFor();
    await h.checkA11y('login with single sign-on');
    await h.signIn();

    await h.open('/settings', 'Settings');
    await oidc.getByRole('button', { name: `Delete ${name}` }).click();
    await page.getByRole('dialog', { name: `Delete OIDC provider ${name}?` }).getByRole('button', { name: 'Delete', exact: true }).click();
    await oidc.getByRole('status').filter({ hasText: `OIDC provider ${name} deleted.` }).waitFor();
    await oidc.getByText('No OIDC provider.').waitFor();
  });

  it('fits a phone in the dark theme, with the forms open', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      await h.open('/profile', 'Profile');
      await page.getByRole('button', { name: 'Switch to dark theme' }).click();
      assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), 'dark');
      const screens = [
        ['/profile', 'Profile', 'New token'],
        ['/users', 'Users', 'New user'],
        ['/roles', 'Roles', enterprise ? 'New role' : 'View Viewer'],
        ['/audit', 'Audit log', null],
        ['/settings', 'Settings', 'New OIDC provider'],
        ['/license', 'License', null],
      ];
      for (const [path, heading, button] of screens) {
        await h.open(path, heading);
        if (button) await page.getByRole('button', { name: button, exact: true }).click();
        await page.getByRole('heading', { level: 1, name: heading }).waitFor();
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        assert.ok(overflow <= 1, `${path} scrolls sideways on a phone by ${overflow}px`);
        await h.checkA11y(`${path} on a phone, dark`);
        await h.screenshot(`admin-phone-dark${path.replaceAll('/', '-')}`);
      }
    } finally {
      await page.getByRole('button', { name: 'Switch to light theme' }).click().catch(() => {});
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });

  it('license: is removed after confirmation', async (t) => {
    if (!enterprise) return skipCommunity(t, 'removing the license');
    await h.open('/license', 'License');
    await page.getByRole('button', { name: 'Remove license' }).click();
    await page.getByRole('dialog', { name: 'Remove the license?' }).getByRole('button', { name: 'Remove license' }).click();
    await page.getByText('Community', { exact: true }).waitFor();
    const state = await h.api('GET', '/api/license');
    assert.equal(state.body.edition, 'community');
  });

  it('raised no error in the page', () => {
    assert.deepEqual(h.pageErrors, []);
  });
});
