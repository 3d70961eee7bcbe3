// Browser test of the Images and Registries screens (harness: lib/harness.mjs)
// against a real berth, the local engine and the test registry: add the
// registry and test its connection, pull an image from it through the pull
// dialog watching its per-layer progress, see it listed, tag it and remove
// the tags, scan the scan test image and read its results, delete the
// registry. axe-core checks every state; screenshots go to screenshots/.
//
// Needs (scripts/test-env.sh records them in .test-env): bin/berth, a Docker
// engine logged in to BERTH_TEST_REGISTRY, Chromium, the test images
// (BERTH_TEST_IMAGE, BERTH_TEST_SCAN_IMAGE) and the scanners with their
// databases (BERTH_TEST_GRYPE, BERTH_TEST_TRIVY, BERTH_TEST_GRYPE_DB,
// BERTH_TEST_TRIVY_CACHE).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { docker, scannerEnv, startConsole, testImage } from './lib/harness.mjs';

const env = process.env;
const registry = env.BERTH_TEST_REGISTRY || '127.0.0.1:5000';
const regUser = env.BERTH_TEST_REGISTRY_USER || '';
const regPassword = env.BERTH_TEST_REGISTRY_PASSWORD || '';
const scanImage = env.BERTH_TEST_SCAN_IMAGE || 'berth-test/debian-vuln:1';

const missing = ['BERTH_TEST_REGISTRY', 'BERTH_TEST_GRYPE', 'BERTH_TEST_TRIVY', 'BERTH_TEST_SCAN_IMAGE'].filter((k) => !env[k]);

let h;
let page;
let label;
let regName;
let remote; // the image pushed to the registry in before(), pulled through the console
let tagged; // the name the test gives it

/** Deletes name:tag's manifest from the test registry (which allows deletes); best effort. */
async function deleteFromRegistry(ref) {
  const [name, tag] = ref.slice(registry.length + 1).split(':');
  const auth = { Authorization: `Basic ${Buffer.from(`${regUser}:${regPassword}`).toString('base64')}` };
  try {
    const head = await fetch(`http://${registry}/v2/${name}/manifests/${tag}`, {
      method: 'HEAD',
      headers: { ...auth, Accept: 'application/vnd.docker.distribution.manifest.v2+json' },
    });
    const digest = head.headers.get('docker-content-digest');
    if (digest) await fetch(`http://${registry}/v2/${name}/manifests/${digest}`, { method: 'DELETE', headers: auth });
  } catch {
    // the registry keeps it
  }
}

function quietly(fn) {
  try {
    fn();
  } catch {
    // already gone
  }
}

describe('images and registries', { timeout: 600_000, skip: missing.length ? `needs ${missing.join(', ')}` : false }, () => {
  before(async () => {
    h = await startConsole({ env: scannerEnv() });
    ({ page, label } = h);
    regName = `e2e-${label}`;
    remote = `${registry}/berth-e2e-${label}:1`;
    tagged = `berth-e2e-${label}/tagged:2`;

    // An image with a layer of its own (8 MB of random bytes on the test
    // image), pushed to the registry and removed here, so that the pull
    // really transfers a layer rather than finding every one present.
    const builder = `berth-e2e-build-${label}`;
    docker('run', '--name', builder, '--label', `berth.test=${label}`, testImage, 'sh', '-c',
      'dd if=/dev/urandom of=/blob bs=1048576 count=8 2>/dev/null');
    docker('commit', '--change', `LABEL berth.test=${label}`, builder, remote);
    docker('rm', builder);
    // The push signs in to the registry with a client configuration of its own
    // (the user's docker configuration is left alone).
    const config = mkdtempSync(path.join(os.tmpdir(), 'berth-e2e-docker-'));
    try {
      execFileSync('docker', ['--config', config, 'login', '--username', regUser, '--password-stdin', registry], {
        input: regPassword,
        stdio: ['pipe', 'ignore', 'pipe'],
      });
      docker('--config', config, 'push', '--quiet', remote);
    } finally {
      rmSync(config, { recursive: true, force: true });
    }
    docker('rmi', remote);

    await h.signIn();
  });

  after(async () => {
    if (remote) await deleteFromRegistry(remote);
    if (remote) quietly(() => docker('rmi', '-f', remote));
    if (tagged) quietly(() => docker('rmi', '-f', tagged));
    await h?.stop();
  });

  it('adds the test registry, tests it and keeps its password hidden', async () => {
    await h.open('/registries', 'Registries');
    await page.getByRole('button', { name: 'Add registry' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add a registry' });
    await dialog.getByLabel('Name', { exact: true }).fill(regName);
    await dialog.getByLabel('URL').fill(registry);
    await dialog.getByLabel('Username').fill(regUser);
    await dialog.getByLabel('Password', { exact: true }).fill(regPassword);
    await dialog.getByRole('button', { name: 'Test connection' }).click();
    await dialog.getByText(/Connection succeeded/).waitFor({ timeout: 30_000 });
    await h.checkA11y('registry form');
    await dialog.getByRole('button', { name: 'Add registry' }).click();
    await dialog.waitFor({ state: 'detached' });

    const row = page.getByRole('row').filter({ hasText: regName });
    await row.waitFor();
    await page.getByRole('button', { name: `Test ${regName}` }).click();
    await row.getByText('connected', { exact: true }).waitFor({ timeout: 30_000 });
    assert.ok(!(await page.content()).includes(regPassword), 'the password never reaches the page');

    // Editing shows the password as stored, not its value.
    await page.getByRole('button', { name: `Edit ${regName}` }).click();
    const edit = page.getByRole('dialog', { name: `Edit ${regName}` });
    assert.equal(await edit.getByLabel('Password', { exact: true }).inputValue(), '');
    await edit.getByText(/A password is stored/).waitFor();
    await edit.getByRole('button', { name: 'Cancel' }).click();

    await h.checkA11y('registries');
    await h.screenshot('registries');
  });

  it('pulls an image from the registry, showing per-layer progress, and lists it', async () => {
    await h.open('/images', 'Images');
    await page.getByRole('table').waitFor();
    await page.getByRole('button', { name: 'Pull', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Pull an image' });
    await dialog.getByLabel('Image reference').fill(`berth-e2e-${label}:1`);
    await dialog.getByLabel('Registry').selectOption({ label: `${regName} — ${registry}` });
    await dialog.getByText(remote, { exact: true }).waitFor(); // the reference with the registry's host
    await dialog.getByLabel(/Scan for vulnerabilities/).uncheck();
    await dialog.getByRole('button', { name: 'Pull', exact: true }).click();

    // The job's events, replayed and then live: one bar per layer, the
    // overall bar, and the bytes of the layers being transferred.
    await dialog.getByRole('progressbar', { name: /^Layer / }).first().waitFor();
    await dialog.getByRole('button', { name: 'Pull another' }).waitFor({ timeout: 120_000 }); // the job ended
    await dialog.locator('strong', { hasText: /^Pull complete$/ }).waitFor();
    const layers = await dialog.getByRole('list', { name: 'Layers' }).getByRole('listitem').allInnerTexts();
    assert.ok(layers.length >= 2, `a layer of its own and the base: ${JSON.stringify(layers)}`);
    assert.ok(layers.some((t) => /Pull complete/.test(t)), `a layer was downloaded: ${JSON.stringify(layers)}`);
    assert.ok(layers.some((t) => /Already exists/.test(t)), `the base layer was present: ${JSON.stringify(layers)}`);
    assert.equal(await dialog.getByRole('progressbar', { name: 'Pull progress overall' }).getAttribute('aria-valuenow'), '100');
    await dialog.getByText(/ of \d/).first().waitFor(); // "8.4 MB of 8.4 MB"
    await h.checkA11y('image pull');
    await h.screenshot('image-pull');
    await dialog.getByRole('button', { name: 'Close', exact: true }).click();
    await dialog.waitFor({ state: 'detached' });

    await page.getByRole('link', { name: remote, exact: true }).waitFor();
    assert.ok(docker('image', 'inspect', '--format', '{{.Id}}', remote).startsWith('sha256:'));
    await h.checkA11y('images');
    await h.screenshot('images');
  });

  it('asks before pruning (and prunes nothing when cancelled)', async () => {
    await page.getByRole('button', { name: 'Prune', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: 'Prune images?' });
    await dialog.getByLabel('Dangling images only (untagged)').waitFor();
    await h.checkA11y('prune dialog');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
  });

  it('tags the pulled image and removes its names', async () => {
    await page.getByRole('button', { name: `Tag ${remote}` }).click();
    const dialog = page.getByRole('dialog', { name: `Tag ${remote}` });
    const [repo, tag] = tagged.split(':');
    await dialog.getByLabel('Repository').fill(repo);
    await dialog.getByLabel('Tag', { exact: true }).fill(tag);
    await dialog.getByRole('button', { name: 'Tag', exact: true }).click();
    await dialog.waitFor({ state: 'detached' });
    await page.getByRole('status').getByText(`Tagged ${tagged}.`).waitFor();
    await page.getByRole('link', { name: tagged, exact: true }).waitFor();

    // Removing one name of two only untags it.
    await page.getByRole('button', { name: `Remove ${tagged}` }).click();
    let confirm = page.getByRole('dialog', { name: `Remove ${tagged}?` });
    await confirm.getByText(/the image stays under its other name/).waitFor();
    await confirm.getByRole('button', { name: 'Remove', exact: true }).click();
    await page.getByRole('status').getByText(/untagged/).waitFor();
    await page.getByRole('link', { name: tagged, exact: true }).waitFor({ state: 'detached' });
    assert.throws(() => docker('image', 'inspect', tagged));

    // Removing the last name deletes the image.
    await page.getByRole('button', { name: `Remove ${remote}` }).click();
    confirm = page.getByRole('dialog', { name: `Remove ${remote}?` });
    await confirm.getByText(/last name: the image is deleted/).waitFor();
    await confirm.getByRole('button', { name: 'Remove', exact: true }).click();
    await page.getByRole('status').getByText(`${remote} removed.`).waitFor();
    await page.getByRole('link', { name: remote, exact: true }).waitFor({ state: 'detached' });
    assert.throws(() => docker('image', 'inspect', remote));
  });

  it('scans the scan test image and shows the findings with fixed versions', async () => {
    const id = docker('image', 'inspect', '--format', '{{.Id}}', scanImage);
    await h.open(`/images/${encodeURIComponent(id)}`, scanImage);
    const scan = page.getByRole('region', { name: 'Vulnerability scan' });
    await scan.getByText('This image has not been scanned yet.').waitFor();
    await scan.getByRole('button', { name: 'Scan now' }).click();
    await scan.getByRole('progressbar', { name: `Scan of ${scanImage}` }).waitFor();

    for (const name of ['Grype', 'Trivy']) {
      const result = scan.getByRole('region', { name });
      await result.waitFor({ timeout: 300_000 });
      const pills = await result.getByRole('list', { name: /vulnerabilities by severity/ }).getByRole('listitem').allInnerTexts();
      assert.deepEqual(
        pills.map((p) => p.replace(/^\d+\s+/, '')),
        ['critical', 'high', 'medium', 'low', 'negligible', 'unknown'],
        `${name} pills`,
      );
      const rows = await result.getByRole('table').getByRole('row').evaluateAll((trs) =>
        trs.slice(1).map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent.trim())),
      );
      assert.ok(rows.length > 0, `${name} found vulnerabilities in ${scanImage}`);
      assert.ok(rows.some((r) => r[4] && r[4] !== 'no fix'), `${name}: a finding with a fixed version: ${JSON.stringify(rows.slice(0, 5))}`);
      assert.match(await result.getByRole('table').getByRole('link').first().getAttribute('href'), /^https?:\/\//);
    }
    assert.equal(await scan.getByRole('progressbar').count(), 0, 'the progress is gone');
    await h.checkA11y('image scan');
    await h.screenshot('image-scan');
    // The severity colours keep their contrast in the dark theme too.
    const before = await page.evaluate(() => document.documentElement.dataset.theme ?? '');
    await page.evaluate(() => (document.documentElement.dataset.theme = 'dark'));
    try {
      await h.checkA11y('image scan (dark theme)');
    } finally {
      await page.evaluate((t) => (document.documentElement.dataset.theme = t), before);
    }

    // The results are stored: a reload reads them without scanning.
    await page.reload();
    await page.getByRole('region', { name: 'Grype' }).waitFor();
    await page.getByRole('region', { name: 'Trivy' }).waitFor();
    await page.getByRole('link', { name: 'Settings' }).first().waitFor();

    // The list shows the scan status.
    await h.open('/images', 'Images');
    await page.getByRole('link', { name: `Scan results of ${scanImage}` }).waitFor({ timeout: 30_000 });
  });

  it('fits a phone screen', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      const id = docker('image', 'inspect', '--format', '{{.Id}}', scanImage);
      const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      for (const [p, heading, shot] of [
        ['/images', 'Images', 'images-phone'],
        [`/images/${encodeURIComponent(id)}`, scanImage, 'image-phone'],
        ['/registries', 'Registries', 'registries-phone'],
      ]) {
        await h.open(p, heading);
        await page.waitForLoadState('networkidle', { timeout: 5_000 }).catch(() => {});
        assert.ok((await overflow()) <= 1, `${p} scrolls sideways on a phone by ${await overflow()}px`);
        await h.screenshot(shot);
      }
      await h.open('/images', 'Images');
      await page.getByRole('button', { name: 'Pull', exact: true }).click();
      await page.getByRole('dialog', { name: 'Pull an image' }).waitFor();
      assert.ok((await overflow()) <= 1, `the pull dialog scrolls sideways on a phone by ${await overflow()}px`);
      await h.screenshot('image-pull-phone');
      await page.keyboard.press('Escape');
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });

  it('deletes the registry after confirmation', async () => {
    await h.open('/registries', 'Registries');
    await page.getByRole('button', { name: `Delete ${regName}` }).click();
    const dialog = page.getByRole('dialog', { name: `Delete ${regName}?` });
    await dialog.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByRole('status').getByText(`Registry ${regName} deleted.`).waitFor();
    await page.getByText('No registry is configured', { exact: false }).waitFor();
    const res = await h.api('GET', '/api/registries');
    assert.deepEqual(res.body, []);
  });

  it('raised no error in the page', () => {
    assert.deepEqual(h.pageErrors, []);
  });
});
