// Browser test of the stack editor's helpers (issue 15; harness:
// lib/harness.mjs): the delete dialog of a running stack shows the server's
// preview of what the delete removes (containers, network, the named volume
// kept, then removed with "Remove volumes") and cancelling changes nothing;
// the new-stack location field is checked by the server (a relative path is
// refused, a writable directory accepted); the stack is relocated to another
// directory and keeps running. axe-core checks each screen. Whatever the run
// created is removed in after(), also when a step failed midway.
//
// Needs: a berth binary (BERTH_BIN or bin/berth), a Docker engine, Chromium and
// the test image (BERTH_TEST_IMAGE).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { labelledCompose as composeOf } from './lib/fixtures.mjs';
import { docker, startConsole } from './lib/harness.mjs';

let h;
let page;
let env;
let stackName;
let tmp;

function projectContainers() {
  return docker('ps', '-q', '--filter', `label=com.docker.compose.project=${stackName}`, '--filter', 'status=running').split('\n').filter(Boolean);
}

describe('stack editor helpers', { timeout: 120_000 }, () => {
  before(async () => {
    h = await startConsole();
    page = h.page;
    stackName = `e2eh-${h.label}`;
    tmp = mkdtempSync(path.join(os.tmpdir(), 'berth-e2e-helpers-'));
    const envs = await h.api('GET', '/api/environments');
    env = envs.body[0]?.id;
    assert.ok(env, 'an environment exists');
    // Stack files outside DATA_DIR/stacks live only under the external stack roots an admin lists.
    const roots = await h.api('PUT', '/api/settings/stack-roots', { roots: [tmp] });
    assert.equal(roots.status, 200);
    // A running stack with a named volume, deployed through the API (its answer is the deploy's event stream).
    const r = await h.api('POST', `/api/stacks?env=${env}`, { name: stackName, compose: composeOf(h.label) });
    assert.equal(r.status, 200);
    assert.match(String(r.body), /"success":true/);
  });

  after(async () => {
    if (!h) return;
    try {
      await h.api('DELETE', `/api/stacks/${stackName}?env=${env}&force=true`);
    } finally {
      try {
        const nets = docker('network', 'ls', '-q', '--filter', `label=com.docker.compose.project=${stackName}`).split('\n').filter(Boolean);
        if (nets.length) docker('network', 'rm', ...nets);
      } catch {
        // gone already
      }
      rmSync(tmp, { recursive: true, force: true });
      await h.stop();
    }
  });

  it('shows what the delete removes in the delete dialog, and cancelling keeps everything', async () => {
    await h.signIn();
    await h.open(`/stacks/${stackName}`, stackName);
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    const dialog = page.getByRole('dialog');
    const region = dialog.getByRole('region', { name: 'What the delete removes' });
    await region.getByText(`${stackName}-web-1 (running)`).waitFor();
    await region.getByText(`${stackName}_default`).waitFor();
    await region.getByRole('heading', { name: /Volumes kept/ }).waitFor();
    assert.equal(await region.getByText(`${stackName}_data`).count(), 1);
    assert.ok((await region.innerText()).includes(`${stackName}/compose.yaml`), 'the compose file is listed');
    await dialog.getByRole('checkbox', { name: /Remove volumes/ }).check();
    await region.getByRole('heading', { name: /^Volumes \(1\)/ }).waitFor();
    assert.equal(await region.getByRole('heading', { name: /Volumes kept/ }).count(), 0);
    await h.checkA11y('delete dialog with preview');
    await h.screenshot('stack-delete-preview');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    assert.equal(projectContainers().length, 1, 'the stack still runs');
  });

  it('checks the location of a new stack with the server', async () => {
    await h.open('/stacks/new', 'New stack');
    await page.getByLabel('Name', { exact: true }).fill(`e2eh-new-${h.label}`);
    const location = page.getByLabel('Location (optional)');
    const hint = page.locator('#stack-location-hint');
    await page.getByText(`Default: `).waitFor();
    await location.fill('relative/dir');
    await page.getByText(/an absolute path is required/).waitFor();
    assert.equal(await location.getAttribute('aria-invalid'), 'true');
    const dir = path.join(tmp, 'new-stack');
    await location.fill(dir);
    await page.getByText('New directory (created on deploy); writable.').waitFor();
    assert.equal(await location.getAttribute('aria-invalid'), 'false');
    assert.ok(!existsSync(dir), 'checking a location creates nothing');
    assert.match(await hint.innerText(), /writable/);
    await h.checkA11y('new stack with a location');
  });

  it('relocates the running stack: its files move, it keeps running', async () => {
    const before = projectContainers();
    await h.open(`/stacks/${stackName}`, stackName);
    await page.getByRole('button', { name: 'Relocate' }).click();
    const dialog = page.getByRole('dialog', { name: `Relocate ${stackName}` });
    const target = path.join(tmp, 'moved');
    await dialog.getByLabel('New directory').fill(target);
    await dialog.getByText('Ready to move.').waitFor();
    await h.checkA11y('relocate dialog');
    await dialog.getByRole('button', { name: 'Relocate' }).click();
    await dialog.waitFor({ state: 'detached' });
    await page.getByText(path.join(target, 'compose.yaml'), { exact: true }).waitFor();
    assert.ok(existsSync(path.join(target, 'compose.yaml')));
    assert.deepEqual(projectContainers(), before, 'the same container keeps running');
  });
});
