// Browser test of the Schedules screen and a container's auto-update settings
// (harness: lib/harness.mjs), against a real berth, the local engine and the
// test registry: an image v1 pushed to the registry runs in a container; its
// Auto-update tab turns auto-update on (a refused cron expression first); v2
// is pushed under the same tag; the Schedules screen lists the schedule with
// its cron in words and next run, runs it now — the container is recreated on
// v2 — and shows the run in the execution log; the switch turns it off and on;
// it is deleted after confirmation; system schedules have no delete. axe-core
// checks each screen in both themes; a phone-width pass checks nothing
// scrolls sideways. berth runs with AUTO_UPDATE_GRACE=2s (the health gate).
//
// Everything created carries the label berth.test=<run label>; stop() removes
// it, and the manifests pushed are deleted from the registry.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { docker, startConsole, testImage } from './lib/harness.mjs';

const env = process.env;
const registry = env.BERTH_TEST_REGISTRY || '';
const regUser = env.BERTH_TEST_REGISTRY_USER || '';
const regPassword = env.BERTH_TEST_REGISTRY_PASSWORD || '';
const missing = ['BERTH_TEST_REGISTRY', 'BERTH_TEST_REGISTRY_USER', 'BERTH_TEST_REGISTRY_PASSWORD'].filter((k) => !env[k]);
// Under CI a missing registry fails the test (a skipped suite is not a passing one).
const skip = missing.length && env.CI !== 'true' ? `needs ${missing.join(', ')}` : false;

let h;
let page;
let label;
let ref; // <registry>/berth-e2e-au-<label>:1
let name; // the container
const digests = [];
let v1;
let v2;

const auth = () => ({ Authorization: `Basic ${Buffer.from(`${regUser}:${regPassword}`).toString('base64')}` });

/** Builds an image from the test image, labelled for cleanup, as ref; returns its id. */
function build(version) {
  const builder = `berth-e2e-au-build-${label}-${version}`;
  docker('create', '--name', builder, '--label', `berth.test=${label}`, testImage, 'true');
  try {
    docker('commit', '--change', `LABEL berth.test=${label}`, '--change', `LABEL version=${version}`, builder, ref);
  } finally {
    docker('rm', builder);
  }
  return docker('image', 'inspect', '--format', '{{.Id}}', ref);
}

/** Pushes ref with a docker client configuration of its own and records the manifest's digest. */
async function push() {
  const config = mkdtempSync(path.join(os.tmpdir(), 'berth-e2e-docker-'));
  try {
    execFileSync('docker', ['--config', config, 'login', '--username', regUser, '--password-stdin', registry], {
      input: regPassword,
      stdio: ['pipe', 'ignore', 'pipe'],
    });
    docker('--config', config, 'push', '--quiet', ref);
  } finally {
    rmSync(config, { recursive: true, force: true });
  }
  const [repo, tag] = ref.slice(registry.length + 1).split(':');
  const head = await fetch(`http://${registry}/v2/${repo}/manifests/${tag}`, {
    method: 'HEAD',
    headers: { ...auth(), Accept: 'application/vnd.docker.distribution.manifest.v2+json' },
  });
  const d = head.headers.get('docker-content-digest');
  if (d) digests.push(d);
}

const row = (text) => page.getByRole('row').filter({ hasText: text });
const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

describe('schedules and auto-update', { timeout: 300_000, skip }, () => {
  before(async () => {
    assert.deepEqual(missing, [], `the test registry is not configured: ${missing.join(', ')} (run scripts/test-env.sh)`);
    h = await startConsole({ env: { AUTO_UPDATE_GRACE: '2s' } });
    ({ page, label } = h);
    ref = `${registry}/berth-e2e-au-${label}:1`;
    name = `e2e-au-${label}`;
    v1 = build(1);
    await push();
    docker('run', '-d', '--name', name, '--label', `berth.test=${label}`, ref, 'sleep', '600');
    const reg = await h.api('POST', '/api/registries', { name: `e2e-${label}`, url: registry, username: regUser, password: regPassword });
    assert.equal(reg.status, 201, `create the registry: ${JSON.stringify(reg.body)}`);
    await h.signIn();
  });

  after(async () => {
    const [repo] = (ref ?? '').slice(registry.length + 1).split(':');
    for (const d of digests) {
      await fetch(`http://${registry}/v2/${repo}/manifests/${d}`, { method: 'DELETE', headers: auth() }).catch(() => {});
    }
    await h?.stop();
  });

  it('turns auto-update on from the container page', async () => {
    await h.open(`/containers/${name}?tab=autoupdate`, name);
    const tab = page.getByRole('tabpanel', { name: 'Auto-update' });
    await tab.getByRole('checkbox', { name: 'Update this container automatically' }).check();
    const cron = tab.getByLabel(/^Schedule/);
    await cron.fill('0 25 * * *');
    await tab.getByRole('button', { name: 'Save' }).click();
    await tab.getByRole('alert').getByText('Invalid cron expression').waitFor();
    await tab.getByRole('button', { name: 'Every day at 03:00' }).click();
    await tab.getByText('Every day at 03:00', { exact: true }).first().waitFor();
    await tab.getByLabel('Vulnerabilities that block an update').selectOption('critical');
    await tab.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').getByText('Auto-update saved: Every day at 03:00.').waitFor();
    await tab.getByText('Next run').waitFor();
    await h.checkA11y('container auto-update');
    await h.screenshot('container-autoupdate');

    const saved = await h.api('GET', `/api/auto-update/${name}?env=1`);
    assert.equal(saved.body.enabled, true);
    assert.equal(saved.body.cronExpression, '0 3 * * *');
    assert.equal(saved.body.vulnerabilityCriteria, 'critical');
  });

  it('lists the schedule and updates the container to v2 with run now', async () => {
    v2 = build(2);
    await push();
    assert.notEqual(v1, v2);

    await h.open('/schedules', 'Schedules');
    const r = row(`Update container: ${name}`);
    await r.getByText('Every day at 03:00').waitFor();
    await r.getByText('0 3 * * *', { exact: true }).waitFor();
    assert.match(await r.innerText(), /\d{1,2}:\d{2}/, 'the next run is shown');
    // System schedules are listed and cannot be deleted.
    const sys = row('Schedule execution cleanup');
    await sys.waitFor();
    assert.equal(await sys.getByRole('button', { name: /^Delete/ }).count(), 0);
    await h.checkA11y('schedules');
    await h.screenshot('schedules');

    const before = docker('inspect', '--format', '{{.Id}}', name);
    await r.getByRole('button', { name: `Run now: Update container: ${name}` }).click();
    await page.getByRole('status').getByText(`Update container: ${name}: success.`).waitFor({ timeout: 120_000 });
    assert.notEqual(docker('inspect', '--format', '{{.Id}}', name), before, 'the container was recreated');
    assert.equal(docker('inspect', '--format', '{{.Image}}', name), v2, 'the container runs v2');
    assert.equal(docker('inspect', '--format', '{{.State.Running}}', name), 'true');
    await r.getByText('success', { exact: true }).waitFor();

    await r.getByRole('button', { name: `Execution log of Update container: ${name}` }).click();
    const dialog = page.getByRole('dialog', { name: `Execution log: Update container: ${name}` });
    await dialog.getByText(`Updated ${name}`).first().waitFor();
    await dialog.getByText('manual', { exact: false }).first().waitFor();
    await h.checkA11y('execution log');
    await h.screenshot('schedule-execution-log');
    await dialog.getByRole('button', { name: 'Close' }).click();
    await dialog.waitFor({ state: 'detached' });
  });

  it('switches the schedule off and on', async () => {
    await h.open('/schedules', 'Schedules');
    const r = row(`Update container: ${name}`);
    const sw = r.getByRole('switch', { name: `Enabled: Update container: ${name}` });
    await sw.click();
    await r.getByText('Disabled', { exact: true }).waitFor();
    assert.equal(await sw.isChecked(), false);
    await sw.click();
    await page.getByRole('status').getByText(`Update container: ${name} enabled.`).waitFor();
    await h.waitFor('the switch to show on', 10_000, () => sw.isChecked());
    await r.getByText(/\d{1,2}:\d{2}/).first().waitFor(); // a next run again
  });

  it('fits a phone screen in both themes', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      for (const [p, heading, shot] of [
        ['/schedules', 'Schedules', 'schedules-phone'],
        [`/containers/${name}?tab=autoupdate`, name, 'container-autoupdate-phone'],
      ]) {
        await h.open(p, heading);
        await page.waitForLoadState('networkidle', { timeout: 5_000 }).catch(() => {});
        assert.ok((await overflow()) <= 1, `${p} scrolls sideways on a phone by ${await overflow()}px`);
        await h.screenshot(shot);
      }
      await h.open('/schedules', 'Schedules');
      await page.getByRole('button', { name: 'Switch to dark theme' }).click();
      await row(`Update container: ${name}`).waitFor();
      await h.checkA11y('schedules, dark, phone');
      await h.screenshot('schedules-phone-dark');
      await page.getByRole('button', { name: 'Switch to light theme' }).click();
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });

  it('deletes the schedule after confirmation, keeping the container', async () => {
    await h.open('/schedules', 'Schedules');
    const r = row(`Update container: ${name}`);
    await r.getByRole('button', { name: `Delete Update container: ${name}` }).click();
    const dialog = page.getByRole('dialog', { name: `Delete Update container: ${name}?` });
    await dialog.getByText(/The container stays/).waitFor();
    await dialog.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('status').getByText(`Update container: ${name} deleted.`).waitFor();
    assert.equal(await row(`Update container: ${name}`).count(), 0);
    assert.equal(docker('inspect', '--format', '{{.State.Running}}', name), 'true');
    const cfg = await h.api('GET', `/api/auto-update/${name}?env=1`);
    assert.equal(cfg.body.enabled, false);
    assert.deepEqual(h.pageErrors, []);
  });
});
