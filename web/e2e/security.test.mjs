// Browser test of an environment's security settings (harness:
// lib/harness.mjs): the admin opens the local environment's page, finds its
// Security section with every switch on (the defaults), turns bind mounts
// off and saves; an Operator signs in, writes a stack that bind-mounts a host
// directory in the stack editor, deploys, and sees the server's refusal
// naming the service and the setting — and no stack is created. axe-core
// checks both screens; screenshots go to screenshots/. Whatever the run
// created is removed in after().
//
// Needs: bin/berth (make build), a Docker engine, Chromium (scripts/test-env.sh
// records it as BERTH_TEST_CHROMIUM) and the test image (BERTH_TEST_IMAGE).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startConsole, testImage } from './lib/harness.mjs';

let h;
let page;
let env;
let hostDir;
let stackName;
const operator = { username: 'olga', password: 'olga-e2e-password-1' };

// The editable area of the CodeMirror editor.
const editor = () => page.locator('.cm-content[contenteditable="true"]');

/** A one-service stack bind-mounting the host directory dir, labelled for cleanup. */
const bindCompose = (label, dir) => `services:
  web:
    image: ${testImage}
    command: sleep 600
    labels:
      berth.test: "${label}"
    volumes:
      - ${dir}:/mnt
`;

describe('security settings of an environment', { timeout: 300_000 }, () => {
  before(async () => {
    h = await startConsole();
    page = h.page;
    stackName = `e2e-sec-${h.label}`;
    hostDir = mkdtempSync(path.join(os.tmpdir(), 'berth-e2e-bind-'));
    const envs = await h.api('GET', '/api/environments');
    assert.equal(envs.status, 200);
    env = envs.body[0]?.id;
    assert.ok(env, 'an environment exists');
    // The Operator: a user holding the built-in Operator role on every environment.
    const user = await h.api('POST', '/api/users', operator);
    assert.equal(user.status, 201, JSON.stringify(user.body));
    const roles = await h.api('GET', '/api/roles');
    const op = roles.body.find((r) => r.name === 'Operator');
    assert.ok(op, 'the Operator role exists');
    const grant = await h.api('POST', `/api/users/${user.body.id}/roles`, { roleId: op.id });
    assert.equal(grant.status, 201, JSON.stringify(grant.body));
  });

  after(async () => {
    if (!h) return;
    try {
      const list = await h.api('GET', `/api/stacks?env=${env}`);
      if (Array.isArray(list.body) && list.body.some((s) => s.name === stackName)) {
        await h.api('DELETE', `/api/stacks/${stackName}?env=${env}&force=true`);
      }
    } finally {
      if (hostDir) rmSync(hostDir, { recursive: true, force: true });
      await h.stop();
    }
  });

  it("shows the environment's security settings and the admin turns bind mounts off", async () => {
    await h.signIn();
    await h.open(`/environments/${env}`);
    const section = page.getByRole('region', { name: 'Security', exact: true });
    const binds = section.getByRole('checkbox', { name: /^Bind mounts/ });
    await binds.waitFor();
    for (const name of ['Bind mounts', 'Privileged mode', 'Host network', 'Host PID', 'Host IPC', 'Devices', 'Added capabilities', 'Security options']) {
      assert.equal(await section.getByRole('checkbox', { name: new RegExp(`^${name}`) }).isChecked(), true, `${name} is allowed by default`);
    }
    await section.getByText(/Berth's data directory, and every directory holding it, is never bound/).waitFor();
    await h.checkA11y('environment security settings');

    await binds.uncheck();
    await section.getByRole('button', { name: 'Save security settings' }).click();
    await section.getByRole('status').filter({ hasText: 'Security settings saved.' }).waitFor();
    assert.equal(await binds.isChecked(), false);
    const stored = await h.api('GET', `/api/environments/${env}/security`);
    assert.equal(stored.status, 200);
    assert.equal(stored.body.allowBindMounts, false, 'the API holds the saved setting');
    assert.equal(stored.body.allowPrivileged, true, 'the other settings are kept');
    await h.screenshot('environment-security');
  });

  it("refuses an Operator's stack that asks for a bind mount, with the server's message", async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL((u) => u.pathname === '/login');
    await page.getByLabel('Username', { exact: true }).fill(operator.username);
    await page.getByLabel('Password', { exact: true }).fill(operator.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Dashboard' }).waitFor();

    await h.open('/stacks/new', 'New stack');
    await page.getByLabel('Name', { exact: true }).fill(stackName);
    await editor().click();
    await page.keyboard.press('Control+A');
    await page.keyboard.press('Delete');
    await page.keyboard.insertText(bindCompose(h.label, hostDir));
    await page.getByText('No problems found.').waitFor();
    await page.getByRole('button', { name: 'Deploy', exact: true }).click();

    const refusal = `Service "web": bind mount of ${hostDir} is not allowed on this environment (security setting "bind mounts")`;
    await page.getByRole('alert').filter({ hasText: refusal }).waitFor();
    await h.checkA11y('stack refused by the security settings');
    await h.screenshot('stack-refused-bind-mount');

    const list = await h.api('GET', `/api/stacks?env=${env}`);
    assert.ok(Array.isArray(list.body) && !list.body.some((s) => s.name === stackName), 'the refused stack was not created');
  });
});
