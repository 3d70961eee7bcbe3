// Browser test of the registry browser (harness: lib/harness.mjs) against a
// real berth and the local test registry: two tags of a fresh repository are
// pushed with the docker CLI, found from the Registries screen's Browse
// action, one is deleted through the confirm dialog, and the registry is made
// the default. axe-core checks the screen with tags and with the dialog open.
//
// Needs what the harness needs plus the test registry (BERTH_TEST_REGISTRY,
// BERTH_TEST_REGISTRY_USER, BERTH_TEST_REGISTRY_PASSWORD from .test-env).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { docker, startConsole, testImage } from './lib/harness.mjs';

const env = process.env;
const registry = env.BERTH_TEST_REGISTRY || '127.0.0.1:5000';
const regUser = env.BERTH_TEST_REGISTRY_USER || '';
const regPassword = env.BERTH_TEST_REGISTRY_PASSWORD || '';
const missing = ['BERTH_TEST_REGISTRY', 'BERTH_TEST_REGISTRY_USER', 'BERTH_TEST_REGISTRY_PASSWORD'].filter((k) => !env[k]);

let h;
let page;
let repo; // berth-e2e-browse-<label>
let regName;
let regId;
const pushed = []; // local names of the pushed images

const auth = () => ({ Authorization: `Basic ${Buffer.from(`${regUser}:${regPassword}`).toString('base64')}` });

/** Deletes repo:tag's manifest from the test registry; best effort. */
async function deleteFromRegistry(tag) {
  try {
    const head = await fetch(`http://${registry}/v2/${repo}/manifests/${tag}`, {
      method: 'HEAD',
      headers: { ...auth(), Accept: 'application/vnd.docker.distribution.manifest.v2+json, application/vnd.oci.image.manifest.v1+json' },
    });
    const digest = head.headers.get('docker-content-digest');
    if (head.ok && digest) await fetch(`http://${registry}/v2/${repo}/manifests/${digest}`, { method: 'DELETE', headers: auth() });
  } catch {
    // the registry keeps it
  }
}

describe('registry browser', { timeout: 300_000, skip: missing.length ? `needs ${missing.join(', ')}` : false }, () => {
  before(async () => {
    h = await startConsole();
    page = h.page;
    repo = `berth-e2e-browse-${h.label}`;
    regName = `browse-${h.label}`;

    // Two images that differ (a label each), so that deleting one tag's
    // digest leaves the other tag.
    const config = mkdtempSync(path.join(os.tmpdir(), 'berth-e2e-docker-'));
    try {
      execFileSync('docker', ['--config', config, 'login', '--username', regUser, '--password-stdin', registry], {
        input: regPassword,
        stdio: ['pipe', 'ignore', 'pipe'],
      });
      for (const tag of ['v1', 'v2']) {
        const ref = `${registry}/${repo}:${tag}`;
        const c = docker('create', '--label', `berth.test=${h.label}`, testImage, 'true');
        docker('commit', '--change', `LABEL berth.test=${h.label}`, '--change', `LABEL berth.browse=${tag}`, c, ref);
        docker('rm', c);
        pushed.push(ref);
        docker('--config', config, 'push', '--quiet', ref);
      }
    } finally {
      rmSync(config, { recursive: true, force: true });
    }

    const created = await h.api('POST', '/api/registries', { name: regName, url: registry, username: regUser, password: regPassword });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    regId = created.body.id;
    await h.signIn();
  });

  after(async () => {
    if (repo) {
      await deleteFromRegistry('v1');
      await deleteFromRegistry('v2');
    }
    for (const ref of pushed) {
      try {
        docker('rmi', '-f', ref);
      } catch {
        // already gone
      }
    }
    await h?.stop();
  });

  it('browses from the Registries screen to the tags of a repository', async () => {
    await h.open('/registries', 'Registries');
    await page.getByRole('link', { name: `Browse ${regName}` }).click();
    await page.getByRole('heading', { level: 1, name: `Browse ${regName}` }).waitFor();
    const repos = page.getByRole('list', { name: 'Repositories' });
    await repos.waitFor();

    // The filter narrows the loaded page; with more pages in the registry,
    // the registry-wide search finds the repository wherever it is.
    await page.getByLabel('Filter').fill(h.label);
    const repoButton = page.getByRole('button', { name: repo, exact: true });
    const searchAll = page.getByRole('button', { name: 'Search the whole registry' });
    await repoButton.or(searchAll).first().waitFor();
    if (!(await repoButton.isVisible())) await searchAll.click();
    await repoButton.click();

    const table = page.getByRole('table', { name: `Tags of ${repo}` });
    await table.waitFor({ timeout: 30_000 });
    const tagNames = await table.locator('tbody tr td:first-child').allTextContents();
    assert.deepEqual(tagNames, ['v1', 'v2']);
    // Digests are read for each tag (12 hex digits shown).
    const digests = await table.locator('tbody tr td:nth-child(2) code').allTextContents();
    assert.ok(digests.every((d) => /^[0-9a-f]{12}$/.test(d)), `digests: ${digests}`);
    assert.ok(!(await page.content()).includes(regPassword), 'the password never reaches the page');
    await h.checkA11y('registry browser with tags');
  });

  it('pulls a tag to the environment with progress, and offers Run and Copy reference', async () => {
    const ref = `${registry}/${repo}:v2`;
    docker('rmi', '-f', ref); // not on the engine until the console pulls it
    await page.getByRole('button', { name: `Pull ${repo}:v2` }).click();
    const dialog = page.getByRole('dialog', { name: 'Pull an image' });
    assert.equal(await dialog.getByLabel('Image reference').inputValue(), ref);
    await dialog.getByLabel(/Scan for vulnerabilities/).uncheck();
    await dialog.getByRole('button', { name: 'Pull', exact: true }).click();
    await dialog.getByRole('button', { name: 'Pull another' }).waitFor({ timeout: 120_000 });
    await dialog.locator('strong', { hasText: /^Pull complete$/ }).waitFor();
    assert.ok(docker('image', 'inspect', '--format', '{{.Id}}', ref).startsWith('sha256:'), 'the pulled image is on the engine');
    await dialog.getByRole('button', { name: 'Close' }).click();

    await page.getByRole('button', { name: `Copy reference ${repo}:v2` }).click();
    await page.getByRole('status').getByText(new RegExp(`(Copied|Copy this reference:) ${ref.replace(/[.]/g, '\\.')}`)).waitFor();

    const run = page.getByRole('link', { name: `Run ${repo}:v2` });
    assert.equal(await run.getAttribute('href'), `/containers/new?image=${encodeURIComponent(ref)}`);
    await run.click();
    await page.getByRole('heading', { level: 1 }).first().waitFor({ timeout: 30_000 });
    await page.waitForFunction((want) => [...document.querySelectorAll('input')].some((i) => i.value === want), ref);
    await page.goBack();
    await page.getByLabel('Filter').fill(h.label);
    const repoButton = page.getByRole('button', { name: repo, exact: true });
    const searchAll = page.getByRole('button', { name: 'Search the whole registry' });
    await repoButton.or(searchAll).first().waitFor();
    if (!(await repoButton.isVisible())) await searchAll.click();
    await repoButton.click();
    await page.getByRole('table', { name: `Tags of ${repo}` }).waitFor({ timeout: 30_000 });
  });

  it('deletes a tag after confirming; the other tag stays', async () => {
    await page.getByRole('button', { name: `Delete ${repo}:v1` }).click();
    const dialog = page.getByRole('dialog', { name: `Delete ${repo}:v1?` });
    await dialog.waitFor();
    await h.checkA11y('delete tag dialog');
    await dialog.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('status').getByText(`Deleted ${repo}:v1.`).waitFor({ timeout: 30_000 });
    await page.getByRole('button', { name: `Delete ${repo}:v1` }).waitFor({ state: 'detached' });
    await page.getByRole('button', { name: `Delete ${repo}:v2` }).waitFor();

    const res = await h.api('GET', `/api/registry/tags?registry=${regId}&repository=${encodeURIComponent(repo)}`);
    assert.equal(res.status, 200);
    assert.deepEqual(
      res.body.tags.map((t) => t.name),
      ['v2'],
    );
  });

  it('makes the registry the default', async () => {
    await page.getByRole('button', { name: 'Set as default' }).click();
    await page.getByRole('status').getByText(`${regName} is now the default registry.`).waitFor();
    const res = await h.api('GET', `/api/registries/${regId}`);
    assert.equal(res.body.isDefault, true);
    assert.deepEqual(h.pageErrors, []);
  });
});
