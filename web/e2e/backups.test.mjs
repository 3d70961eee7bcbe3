// Browser test of the backups console (issue 24) against a real berth, the
// local engine and the host's restic: as Admin, a local-path destination (a
// temp dir of this host) is added (initialized and tested: "ok"), a
// configuration for a container whose volume holds a known file is created
// and run (live progress to "done"), its snapshot is listed as this Berth's,
// browsed down to the file, and restored to a new name with the preview shown
// first; the restored volume holds the file's bytes. As Viewer the same lists
// show without any action button. axe-core checks the screen.
//
// Needs what the harness needs plus restic on the host (scripts/test-env.sh).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { docker, startConsole, testImage } from './lib/harness.mjs';

const hasRestic = (() => {
  try {
    execFileSync('restic', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

let h;
let page;
let repoDir; // the local repository: a temp dir of this host
let container;
let volume;
let restoredName;
const content = `berth backup e2e ${Date.now()}\n`;

describe('backups console', { timeout: 600_000, skip: hasRestic ? false : 'needs restic on the host (scripts/test-env.sh)' }, () => {
  before(async () => {
    h = await startConsole();
    page = h.page;
    container = `e2e-bk-${h.label}`;
    volume = `e2e-bk-${h.label}-data`;
    restoredName = `e2e-bk-${h.label}-copy`;
    repoDir = mkdtempSync(path.join(os.tmpdir(), 'berth-e2e-restic-'));
    docker('volume', 'create', '--label', `berth.test=${h.label}`, volume);
    docker('run', '--rm', '--label', `berth.test=${h.label}`, '-v', `${volume}:/data`, testImage, 'sh', '-c', `printf '%s' '${content}' > /data/hello.txt`);
    docker('run', '-d', '--name', container, '--label', `berth.test=${h.label}`, '-v', `${volume}:/data`, testImage, 'sleep', '900');
    await h.signIn();
  });

  after(async () => {
    try {
      if (h) {
        for (const v of docker('volume', 'ls', '-q', '--filter', `name=${restoredName}`).split('\n').filter(Boolean)) docker('volume', 'rm', '-f', v);
        docker('rm', '-f', container);
        docker('volume', 'rm', '-f', volume);
      }
    } catch {
      // removed by the harness's label sweep
    }
    if (repoDir && existsSync(repoDir)) {
      // restic in the helper wrote the repository as root: removed through a container.
      try {
        docker('run', '--rm', '-v', `${repoDir}:/r`, testImage, 'sh', '-c', 'rm -rf /r/* /r/.[!.]*');
      } catch {
        // best effort
      }
      rmSync(repoDir, { recursive: true, force: true });
    }
    await h?.stop();
  });

  it('adds a local destination, backs a container up, browses and restores the snapshot to a new name', async () => {
    // Destination: initialized and tested on create.
    await h.open('/backups?tab=destinations', 'Backups');
    await page.getByRole('button', { name: 'Add destination' }).click();
    const form = page.getByRole('dialog');
    await form.getByLabel('Name').fill(`local-${h.label}`);
    await form.getByLabel('Path on the host').fill(repoDir);
    await form.getByLabel('Repository password').fill(`e2e-${h.label}-restic`);
    await form.getByRole('button', { name: 'Add, initialize and test' }).click();
    await form.waitFor({ state: 'detached', timeout: 180_000 });
    const destRow = page.locator(`tr[data-destination="local-${h.label}"]`);
    await destRow.getByText('ok', { exact: true }).waitFor({ timeout: 30_000 });
    assert.equal(await page.getByText(`e2e-${h.label}-restic`).count(), 0, 'the password is never shown');
    await h.checkA11y('backups, destinations');

    // Configuration of the container, run now with its live progress.
    await page.getByRole('tab', { name: 'Configurations' }).click();
    await page.getByRole('button', { name: 'New configuration' }).click();
    const cfg = page.getByRole('dialog');
    await cfg.getByLabel('Container name').fill(container);
    await cfg.getByLabel('Destination').selectOption({ label: `local-${h.label}` });
    await cfg.getByRole('button', { name: 'Create' }).click();
    await cfg.waitFor({ state: 'detached' });
    const cfgRow = page.locator(`tr[data-config="${container}"]`);
    await cfgRow.getByText('manual only').waitFor();
    await cfgRow.getByRole('button', { name: `Run now: the backup of ${container}` }).click();
    const run = page.getByRole('dialog', { name: `Backup of ${container}` });
    await run.getByText('done', { exact: true }).waitFor({ timeout: 300_000 });
    await run.getByRole('button', { name: 'Close' }).click();
    await cfgRow.getByText('success', { exact: true }).waitFor();

    // The snapshot, this Berth's own, browsed down to the file.
    await cfgRow.getByRole('button', { name: `Snapshots of ${container}` }).click();
    const snapRow = page.getByRole('table', { name: 'Snapshots' }).locator('tbody tr').first();
    await snapRow.waitFor({ timeout: 120_000 });
    await snapRow.getByText('this Berth').waitFor();
    const shortId = await snapRow.getAttribute('data-snapshot');
    assert.ok(shortId, 'the snapshot row names its id');
    await snapRow.getByRole('button', { name: `Browse ${shortId}` }).click();
    const browser = page.getByRole('dialog');
    for (const dir of ['backup/', 'volumes/', `${volume}/`]) {
      await browser.getByRole('button', { name: dir, exact: true }).click({ timeout: 120_000 });
    }
    await browser.locator('tr[data-entry="hello.txt"]').waitFor({ timeout: 120_000 });
    await h.checkA11y('backups, snapshot browser');
    await browser.getByRole('button', { name: 'Close' }).last().click();
    await browser.waitFor({ state: 'detached' });

    // Restore to a new name: the preview first, then the progress.
    await snapRow.getByRole('button', { name: `Restore ${shortId}` }).click();
    const restore = page.getByRole('dialog');
    await restore.locator(`tr[data-item="${volume}"]`).waitFor({ timeout: 120_000 });
    await restore.locator(`tr[data-item="${volume}"]`).getByText('hello.txt').waitFor();
    await restore.getByLabel('New name', { exact: true }).fill(restoredName);
    await h.checkA11y('backups, restore preview');
    await restore.getByRole('button', { name: 'Restore' }).click();
    await restore.getByText('done', { exact: true }).waitFor({ timeout: 300_000 });
    await restore.getByRole('button', { name: 'Close' }).click();

    const restored = `${restoredName}_${volume}`;
    const bytes = docker('run', '--rm', '-v', `${restored}:/r:ro`, testImage, 'cat', '/r/hello.txt');
    assert.equal(bytes.trim(), content.trim(), 'the restored volume holds the backed-up bytes');
    const original = docker('run', '--rm', '-v', `${volume}:/r:ro`, testImage, 'cat', '/r/hello.txt');
    assert.equal(original.trim(), content.trim(), 'the original is untouched');
  });

  it('shows a Viewer the lists without any action button', async () => {
    await page.goto(`${h.base}/`); // no dialog of the test before left open
    await h.signInAsNewUser('Viewer');
    await h.open('/backups', 'Backups');
    const cfgRow = page.locator(`tr[data-config="${container}"]`);
    await cfgRow.waitFor();
    const buttons = async () => (await page.locator('main button:visible, main a.button:visible').allTextContents()).map((t) => t.trim());
    const mutating = /^(New|Add|Run|Edit|Delete|Test|Init|Rotate|Restore|Forget|Stop)\b/;
    assert.deepEqual((await buttons()).filter((b) => mutating.test(b)), [], 'configurations');

    await page.getByRole('tab', { name: 'Destinations' }).click();
    await page.locator(`tr[data-destination="local-${h.label}"]`).waitFor();
    assert.deepEqual((await buttons()).filter((b) => mutating.test(b)), [], 'destinations');
    assert.equal(await page.getByLabel(`Maintenance of local-${h.label}`).count(), 0);

    await page.getByRole('tab', { name: 'Snapshots' }).click();
    await page.getByLabel('Snapshots of').selectOption({ label: `${container} (container)` });
    const snapRow = page.getByRole('table', { name: 'Snapshots' }).locator('tbody tr').first();
    await snapRow.waitFor({ timeout: 120_000 });
    await snapRow.getByRole('button', { name: /^Browse / }).waitFor();
    assert.deepEqual((await buttons()).filter((b) => mutating.test(b)), [], 'snapshots');
    await h.checkA11y('backups, viewer');
  });
});
