// Browser test of the updates workflow's environment settings and of the kept
// registry test (harness: lib/harness.mjs), against a real berth: the
// environment page's update check and time zone sections save and survive a
// reload (Admin), an Operator sees them read-only, a registry's connection
// test is still shown after a reload, the page is axe clean and fits a
// phone. And the updates workflow of the containers list: a container of a
// registry image, a newer image pushed under the same tag, Check for
// updates → the row's update badge → Update → the container runs the newer
// image.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { docker, startConsole, testImage } from './lib/harness.mjs';

const env = process.env;
const registry = env.BERTH_TEST_REGISTRY || '';

let h;
let page;

describe('updates: environment settings', { timeout: 300_000 }, () => {
  before(async () => {
    h = await startConsole();
    page = h.page;
    await h.signIn();
  });
  after(async () => {
    await h?.stop();
  });

  it('saves the update check and the time zone, each on its own, and keeps them after a reload', async () => {
    await h.open('/environments/1');
    const uc = page.getByRole('region', { name: 'Update check' });
    const cron = uc.getByLabel('Schedule (cron)');
    await cron.waitFor({ timeout: 30_000 });
    await cron.fill('0 5 * * *');
    await uc.getByRole('button', { name: 'Save update check' }).click();
    await uc.getByText('Update check saved.').waitFor();

    const tz = page.getByRole('region', { name: 'Time zone' });
    await tz.getByLabel('Time zone (IANA name)').fill('Mars/Olympus');
    await tz.getByRole('button', { name: 'Save time zone' }).click();
    await tz.getByRole('alert').getByText('Invalid timezone').waitFor();
    await tz.getByLabel('Time zone (IANA name)').fill('Europe/Berlin');
    await tz.getByRole('button', { name: 'Save time zone' }).click();
    await tz.getByText('Time zone saved.').waitFor();

    await page.reload();
    await page.getByRole('region', { name: 'Update check' }).getByLabel('Schedule (cron)').waitFor({ timeout: 30_000 });
    assert.equal(await page.getByRole('region', { name: 'Update check' }).getByLabel('Schedule (cron)').inputValue(), '0 5 * * *');
    assert.equal(await page.getByRole('region', { name: 'Time zone' }).getByLabel('Time zone (IANA name)').inputValue(), 'Europe/Berlin');
    await h.checkA11y('environment settings');

    await page.setViewportSize({ width: 375, height: 800 });
    try {
      await page.getByRole('region', { name: 'Disk space warning' }).scrollIntoViewIfNeeded();
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 1, `the environment page scrolls sideways on a phone by ${overflow}px`);
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });

  it('shows a registry test result after a reload', { skip: registry ? false : 'needs BERTH_TEST_REGISTRY' }, async () => {
    const name = `kept-${h.label}`;
    const created = await h.api('POST', '/api/registries', {
      name,
      url: registry,
      username: env.BERTH_TEST_REGISTRY_USER || '',
      password: env.BERTH_TEST_REGISTRY_PASSWORD || '',
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    await h.open('/registries', 'Registries');
    await page.getByRole('button', { name: `Test ${name}` }).click();
    const row = page.getByRole('row').filter({ hasText: name });
    await row.getByText('connected', { exact: true }).waitFor({ timeout: 30_000 });
    await page.reload();
    await page.getByRole('row').filter({ hasText: name }).getByText('connected', { exact: true }).waitFor({ timeout: 30_000 });
    await h.api('DELETE', `/api/registries/${created.body.id}`);
  });

  it('checks for updates, badges the container whose tag has a newer image, and updates it', { skip: registry ? false : 'needs BERTH_TEST_REGISTRY' }, async () => {
    // The check compares the registry's digest of the container's reference with
    // the digests of the image the container runs: the registry must be known to
    // Berth (its credentials). The newer image is tagged here too, so the engine
    // lists the container by its image's id (its tag names another image now):
    // the check reads the reference the container was created with (it skipped
    // such a container before, which is why no badge showed).
    const label = h.label;
    const repo = `${registry}/berth-e2e-updates-${label}`;
    const ref = `${repo}:live`;
    const name = `e2e-upd-${label}`;
    const user = env.BERTH_TEST_REGISTRY_USER || '';
    const password = env.BERTH_TEST_REGISTRY_PASSWORD || '';
    const reg = await h.api('POST', '/api/registries', { name: `upd-${label}`, url: registry, username: user, password });
    assert.equal(reg.status, 201, JSON.stringify(reg.body));
    const config = mkdtempSync(path.join(os.tmpdir(), 'berth-e2e-docker-'));
    const pushed = [];
    try {
      execFileSync('docker', ['--config', config, 'login', '--username', user, '--password-stdin', registry], {
        input: password,
        stdio: ['pipe', 'ignore', 'pipe'],
      });
      docker('tag', testImage, ref);
      docker('--config', config, 'push', '--quiet', ref);
      pushed.push(docker('image', 'inspect', '-f', '{{index .RepoDigests 0}}', ref));
      docker('run', '-d', '--name', name, '--label', `berth.test=${label}`, ref, 'sleep', '600');
      const oldImage = docker('inspect', '-f', '{{.Image}}', name);
      // A newer image under the same tag (a commit of the container: no build needed).
      docker('commit', '--change', `LABEL berth.test=${label}`, '--change', 'LABEL e2e.version=2', name, ref);
      const newImage = docker('image', 'inspect', '-f', '{{.Id}}', ref);
      assert.notEqual(newImage, oldImage);
      docker('--config', config, 'push', '--quiet', ref);
      pushed.push(docker('image', 'inspect', '-f', '{{index .RepoDigests 0}}', ref));

      await h.open('/containers', 'Containers');
      await page.getByLabel('Filter').fill(name);
      const row = page.locator('tbody tr.row').filter({ has: page.getByRole('link', { name, exact: true }) });
      await row.waitFor();
      assert.equal(await row.getByText('update', { exact: true }).count(), 0, 'no badge before the check');
      await page.getByRole('button', { name: 'Check for updates' }).click();
      await row.getByText('update', { exact: true }).waitFor({ timeout: 60_000 });
      await h.checkA11y('containers list with an update badge');
      await row.getByRole('button', { name: `Update ${name}` }).click();
      const outcome = page.getByRole('heading', { level: 2, name: /^Update: / });
      await outcome.waitFor({ timeout: 120_000 });
      const section = (await page.locator('section.results').innerText()).replace(/\s+/g, ' ');
      assert.match(section, new RegExp(`^Update: 1 done .*${name} updated`), section);
      await h.waitFor('the container on the newer image', 30_000, async () => {
        try {
          return docker('inspect', '-f', '{{.Image}}', name) === newImage;
        } catch {
          return false;
        }
      });
      assert.equal(docker('inspect', '-f', '{{.State.Status}}', name), 'running');
      await row.getByText('update', { exact: true }).waitFor({ state: 'detached', timeout: 30_000 });
    } finally {
      rmSync(config, { recursive: true, force: true });
      await h.api('DELETE', `/api/registries/${reg.body.id}`);
      try {
        docker('rm', '-f', name);
        docker('rmi', '-f', ref);
      } catch {
        // already gone
      }
      const auth = { Authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}` };
      for (const d of pushed) {
        const [, digest] = d.split('@');
        await fetch(`http://${registry}/v2/${repo.slice(registry.length + 1)}/manifests/${digest}`, { method: 'DELETE', headers: auth }).catch(() => {});
      }
    }
  });

  it('shows the settings read-only to an Operator', async () => {
    await h.signInAsNewUser('Operator');
    await h.open('/environments/1');
    await page.getByText('You may view these settings, not change them.').waitFor({ timeout: 30_000 });
    assert.equal(await page.getByRole('button', { name: /^Save (update check|image prune|time zone|disk warning)$/ }).count(), 0);
    assert.ok(await page.getByRole('region', { name: 'Update check' }).getByLabel('Schedule (cron)').isDisabled());
  });
});
