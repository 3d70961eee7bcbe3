// Browser test of two-factor authentication (harness: lib/harness.mjs): the
// admin sets MFA up on the profile (QR code and secret, a code computed here
// from the secret, the backup codes shown once), signs out, and signs in
// again: the sign-in page asks for the code after the password, refuses a
// wrong one with "Invalid MFA code", and lets a right one, and then a backup
// code, in. axe-core checks the setup and the sign-in with the code field;
// screenshots go to screenshots/ (profile-mfa, login-mfa).
//
// The codes are RFC 6238 TOTP codes (HMAC-SHA1, 30 s steps, six digits),
// computed with node:crypto. The server accepts a code of the step before or
// after its own, each step's code once: the sign-in uses the code of the next
// step, which is always later than the one the setup spent, so no test waits
// for the clock.
//
// Needs: bin/berth (make build) or BERTH_BIN, a Docker engine, Chromium.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { startConsole } from './lib/harness.mjs';

let h;
let page;
let base;
let admin;

/** Decodes RFC 4648 base32 (no padding needed, case ignored). */
function base32(s) {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = 0;
  let value = 0;
  const out = [];
  for (const ch of s.toUpperCase().replace(/=+$/, '')) {
    const i = alphabet.indexOf(ch);
    assert.ok(i >= 0, `not base32: ${s}`);
    value = (value << 5) | i;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

/** The RFC 6238 code of secret (base32) at time ms (HMAC-SHA1, 30 s, six digits). */
function totp(secret, ms = Date.now()) {
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(ms / 1000 / 30)));
  const mac = createHmac('sha1', base32(secret)).update(counter).digest();
  const offset = mac[mac.length - 1] & 0xf;
  const n = (mac.readUInt32BE(offset) & 0x7fffffff) % 1_000_000;
  return String(n).padStart(6, '0');
}

/** A six-digit code that is no code of secret around now. */
function wrongCode(secret) {
  const taken = new Set([-1, 0, 1, 2].map((d) => totp(secret, Date.now() + d * 30_000)));
  return ['000000', '111111', '222222', '333333', '444444'].find((c) => !taken.has(c));
}

async function signOut() {
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.waitForURL((u) => u.pathname === '/login');
}

/** Fills the sign-in form with the admin's password and submits it. */
async function submitPassword() {
  await page.goto(base + '/login');
  await page.getByLabel('Username', { exact: true }).fill(admin.username);
  await page.getByLabel('Password', { exact: true }).fill(admin.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** Whether the browser holds a session (asked from the page, with its cookie). */
async function authenticated() {
  return page.evaluate(async () => (await (await fetch('/api/auth/session')).json()).authenticated);
}

describe('two-factor authentication', { timeout: 180_000 }, () => {
  before(async () => {
    h = await startConsole();
    ({ page, base, admin } = h);
    await h.signIn();
  });

  after(async () => {
    // The admin and its MFA live in the run's data directory, which stop() removes.
    await h?.stop();
  });

  let secret = '';
  let backupCodes = [];

  it('profile: MFA is set up with the QR code, a code from the secret, and backup codes shown once', async () => {
    await h.open('/profile', 'Profile');
    const section = page.getByRole('region', { name: 'Two-factor authentication' });
    await section.getByText('Off', { exact: true }).waitFor();
    await section.getByRole('button', { name: 'Set up' }).click();
    const qr = section.getByRole('img', { name: /QR code/ });
    await qr.waitFor();
    const src = await qr.getAttribute('src');
    assert.match(src, /^data:image\/png;base64,[A-Za-z0-9+/]+=*$/);
    assert.ok(await qr.evaluate((img) => img.complete && img.naturalWidth > 0), 'the QR code image does not load');
    secret = await section.getByLabel('Secret', { exact: true }).inputValue();
    assert.match(secret, /^[A-Z2-7]{32}$/);
    await h.checkA11y('profile MFA setup');
    await h.screenshot('profile-mfa');

    const field = section.getByLabel('Code from the app', { exact: true });
    await field.fill(wrongCode(secret));
    await section.getByRole('button', { name: 'Turn on' }).click();
    assert.equal((await page.getByRole('alert').first().innerText()).trim().includes('Invalid MFA code'), true);

    await field.fill(totp(secret));
    await section.getByRole('button', { name: 'Turn on' }).click();
    const list = section.getByRole('list', { name: 'Backup codes' });
    await list.waitFor();
    backupCodes = (await list.getByRole('listitem').allInnerTexts()).map((s) => s.trim());
    assert.equal(backupCodes.length, 10);
    for (const c of backupCodes) assert.match(c, /^[0-9A-Z]{5}-[0-9A-Z]{5}$/);
    await section.getByText('On', { exact: true }).waitFor();
    await section.getByRole('button', { name: 'Done' }).click();
    await list.waitFor({ state: 'detached' });
    assert.ok(!(await page.content()).includes(backupCodes[0]), 'the backup codes stay on the page after Done');
    await section.getByRole('button', { name: 'Turn off' }).waitFor();
  });

  it('sign-in asks for the code after the password, refuses a wrong one, and lets a right one in', async () => {
    assert.ok(secret, 'the setup did not run');
    await signOut();
    await submitPassword();
    const code = page.getByLabel('Authentication code', { exact: true });
    await code.waitFor();
    assert.equal(await authenticated(), false, 'a session exists before the code was given');
    await h.checkA11y('sign-in with the MFA code');
    await h.screenshot('login-mfa');

    await code.fill(wrongCode(secret));
    await page.getByRole('button', { name: 'Sign in' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    assert.equal((await alert.innerText()).trim(), 'Invalid MFA code');
    assert.equal(await authenticated(), false, 'a wrong code opened a session');

    // The next step's code: later than the setup's, whatever the clock did meanwhile.
    await code.fill(totp(secret, Date.now() + 30_000));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Dashboard' }).waitFor();
    assert.equal(await authenticated(), true);
  });

  it('a backup code signs in once', async () => {
    assert.equal(backupCodes.length, 10, 'the setup did not run');
    await signOut();
    await submitPassword();
    const code = page.getByLabel('Authentication code', { exact: true });
    await code.fill(backupCodes[0].toLowerCase());
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Dashboard' }).waitFor();

    await signOut();
    await submitPassword();
    await code.fill(backupCodes[0]);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
    assert.equal((await page.getByRole('alert').innerText()).trim(), 'Invalid MFA code');
    assert.deepEqual(h.pageErrors, []);
  });
});
