// Browser test of the backups console (issue 24) against a real berth, the
// local engine and the host's restic: as Admin, a local-path destination (a
// temp dir of this host) is added (initialized and tested: "ok"), a
// configuration for a container whose volume holds a known file is created
// and run (live progress to "done"), its snapshot is listed as this Berth's,
// browsed down to the file, and restored to a new name with the preview shown
// first; the restored volume holds the file's bytes. Then the file is changed
// and the snapshot restored in place through the dialog (preview, confirm):
// the file's bytes are back and the container runs again. The destination's
// Test connection (before saving: not initialized; a wrong password: the
// server's reason), verify and stats run on the real repository. As Viewer
// the same lists show without any action button; as Operator the
// maintenance is there but not the Berth configuration type (admins only).
// A saved destination's form is tested as edited (nothing stored), a form
// moved to another host asks for its secrets again before any request, and
// a running check is stopped from its dialog (no lock, no helper left).
// axe-core checks the screen.
//
// Needs what the harness needs plus restic on the host (scripts/test-env.sh).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
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
/** How many saved destinations have this name (through the API, as the admin). */
const destinationsNamed = async (name) => (await h.api('GET', '/api/backup/destinations')).body.filter((d) => d.name === name).length;

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
    // Test connection before saving: the empty directory is no repository yet; nothing is saved.
    await form.getByRole('button', { name: 'Test connection' }).click();
    await form.getByText(/^(Reachable|Connection ok|Test failed)/).first().waitFor({ timeout: 300_000 });
    assert.match(await form.innerText(), /Reachable, not initialized yet/, 'an empty directory is no repository yet');
    assert.equal(await destinationsNamed(`local-${h.label}`), 0, 'a test saves nothing');
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
    assert.equal(await cfg.locator('select[name="type"] option[value="berth"]').count(), 1, 'an admin may back Berth itself up');
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

  it('restores the snapshot in place through the dialog: the file is back, the container runs again', async () => {
    await page.goto(`${h.base}/`);
    docker('run', '--rm', '-v', `${volume}:/data`, testImage, 'sh', '-c', 'printf changed > /data/hello.txt');
    assert.equal(docker('run', '--rm', '-v', `${volume}:/r:ro`, testImage, 'cat', '/r/hello.txt').trim(), 'changed');
    const startedBefore = docker('inspect', '-f', '{{.State.StartedAt}}', container).trim();

    await h.open('/backups?tab=configs', 'Backups');
    await page.locator(`tr[data-config="${container}"]`).getByRole('button', { name: `Snapshots of ${container}` }).click();
    const snapRow = page.getByRole('table', { name: 'Snapshots' }).locator('tbody tr').first();
    await snapRow.waitFor({ timeout: 120_000 });
    const shortId = await snapRow.getAttribute('data-snapshot');
    await snapRow.getByRole('button', { name: `Restore ${shortId}` }).click();
    const restore = page.getByRole('dialog', { name: `Restore snapshot ${shortId}` });
    await restore.waitFor();
    await restore.getByRole('radio', { name: /In place/ }).check();
    // The preview says what is replaced before anything is done.
    const item = restore.locator(`tr[data-item="${volume}"]`);
    await item.getByText('exists: replaced').waitFor({ timeout: 120_000 });
    await item.getByText('hello.txt').waitFor();
    assert.ok(await restore.getByLabel(`Restore volume ${volume}`).isChecked(), 'every volume is chosen at first');
    await restore.getByRole('button', { name: 'Restore' }).click();
    await restore.getByText('Confirm that the current data is replaced.').waitFor();
    await restore.getByRole('checkbox', { name: /Replace the current data/ }).check();
    await h.checkA11y('backups, in-place restore');
    await restore.getByRole('button', { name: 'Restore' }).click();
    await restore.getByText('done', { exact: true }).waitFor({ timeout: 300_000 });
    await restore.getByRole('button', { name: 'Close' }).click();

    const bytes = docker('run', '--rm', '-v', `${volume}:/r:ro`, testImage, 'cat', '/r/hello.txt');
    assert.equal(bytes.trim(), content.trim(), "the file's backed-up bytes are back");
    assert.equal(docker('inspect', '-f', '{{.State.Running}}', container).trim(), 'true', 'the container runs again');
    assert.notEqual(docker('inspect', '-f', '{{.State.StartedAt}}', container).trim(), startedBefore, 'it was stopped and started again');
  });

  it("tests a wrong password without saving it, verifies the repository and shows its stats", async () => {
    await page.goto(`${h.base}/`);
    await h.open('/backups?tab=destinations', 'Backups');
    await page.getByRole('button', { name: 'Add destination' }).click();
    const form = page.getByRole('dialog');
    await form.getByLabel('Name').fill(`wrong-${h.label}`);
    await form.getByLabel('Path on the host').fill(repoDir);
    await form.getByLabel('Repository password').fill('not-the-password');
    await form.getByRole('button', { name: 'Test connection' }).click();
    await form.getByRole('alert').filter({ hasText: /^Test failed: Wrong repository password/ }).waitFor({ timeout: 180_000 });
    await form.getByRole('button', { name: 'Cancel' }).click();
    await form.waitFor({ state: 'detached' });
    assert.equal(await destinationsNamed(`wrong-${h.label}`), 0, 'the tested settings are not saved');

    const row = page.locator(`tr[data-destination="local-${h.label}"]`);
    await row.getByRole('button', { name: `Verify local-${h.label}` }).click();
    const verify = page.getByRole('dialog', { name: `Verify local-${h.label}` });
    await verify.getByLabel(/^Part of the data to read/).fill('100%');
    await verify.getByRole('button', { name: 'Verify', exact: true }).click();
    await verify.getByText('done', { exact: true }).waitFor({ timeout: 300_000 });
    await verify.getByRole('button', { name: 'Close' }).click();

    await row.getByLabel(`Maintenance of local-${h.label}`).selectOption('stats');
    const stats = page.getByRole('dialog', { name: `Stats local-${h.label}` });
    const figures = stats.getByLabel('Repository statistics');
    await figures.waitFor({ timeout: 300_000 });
    assert.match(await figures.innerText(), /Snapshots\s+1\b/, 'the one snapshot is counted');
    await h.checkA11y('backups, repository stats');
    await stats.getByRole('button', { name: 'Close' }).click();

    // prune asks first; cancelled, nothing runs.
    await row.getByLabel(`Maintenance of local-${h.label}`).selectOption('prune');
    const prune = page.getByRole('dialog', { name: `Prune local-${h.label}` });
    await prune.getByText(/deletes the data of forgotten snapshots/).waitFor();
    await prune.getByRole('button', { name: 'Cancel' }).click();
    await prune.waitFor({ state: 'detached' });
  });

  it("tests a saved destination's form as edited, and asks for the secrets again on another host", async () => {
    await page.goto(`${h.base}/`);
    await h.open('/backups?tab=destinations', 'Backups');
    const name = `local-${h.label}`;
    const savedBefore = (await h.api('GET', '/api/backup/destinations')).body.find((d) => d.name === name);
    const row = page.locator(`tr[data-destination="${name}"]`);
    await row.getByRole('button', { name: `Edit ${name}` }).click();
    const form = page.getByRole('dialog');
    // A path with no repository, edited in: the test tries it (not the saved one), with the stored password.
    const elsewhere = mkdtempSync(path.join(os.tmpdir(), 'berth-e2e-restic-empty-'));
    try {
      await form.getByLabel('Path on the host').fill(elsewhere);
      await form.getByRole('button', { name: 'Test connection' }).click();
      await form.getByText(/^(Reachable|Connection ok|Test failed)/).first().waitFor({ timeout: 180_000 });
      assert.match(await form.innerText(), /Reachable, not initialized yet/, 'the edited path is tested, not the saved one');
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
    // Corrected back: it opens with the stored password (not in the form).
    await form.getByLabel('Path on the host').fill(repoDir);
    await form.getByRole('button', { name: 'Test connection' }).click();
    await form.getByText(/^Connection ok/).waitFor({ timeout: 180_000 });
    await form.getByRole('button', { name: 'Cancel' }).click();
    await form.waitFor({ state: 'detached' });
    const savedAfter = (await h.api('GET', '/api/backup/destinations')).body.find((d) => d.name === name);
    assert.deepEqual(savedAfter, savedBefore, 'a test of the edited form stores nothing, not even its outcome');

    // A REST destination whose form moves to another port: the form asks for the secrets
    // again before any request, and Test connection sends nothing until they are typed.
    const restUrl = process.env.BERTH_TEST_REST_URL;
    if (!restUrl) return;
    const restName = `berth-e2e-rest-${h.label}`;
    const created = await h.api('POST', '/api/backup/destinations', { name: `rest-${h.label}`, repository: `rest:${restUrl}/${restName}/`, password: `e2e-${h.label}-rest` });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    try {
      await page.reload();
      await h.open('/backups?tab=destinations', 'Backups');
      await page.locator(`tr[data-destination="rest-${h.label}"]`).getByRole('button', { name: `Edit rest-${h.label}` }).click();
      const rest = page.getByRole('dialog');
      const url = new URL(restUrl);
      url.username = '';
      url.password = '';
      url.port = String(Number(url.port || 80) + 1);
      await rest.getByLabel('REST server URL').fill(`${url.toString().replace(/\/$/, '')}/${restName}/`);
      await rest.getByTestId('moved-host').filter({ hasText: /another host now: enter the repository password, the REST password again/ }).waitFor();
      let tests = 0;
      page.on('request', (r) => {
        if (r.url().endsWith('/api/backup/destinations/test')) tests++;
      });
      await rest.getByRole('button', { name: 'Test connection' }).click();
      await rest.getByRole('alert').filter({ hasText: /another host now/ }).waitFor();
      assert.equal(tests, 0, 'no request with the stored secrets for another host');
      await h.checkA11y('backups, destination moved to another host');
      await rest.getByRole('button', { name: 'Cancel' }).click();
      await rest.waitFor({ state: 'detached' });
    } finally {
      await h.api('DELETE', `/api/backup/destinations/${created.body.id}`);
      if (process.env.BERTH_TEST_REST_DIR) rmSync(path.join(process.env.BERTH_TEST_REST_DIR, restName), { recursive: true, force: true });
    }
  });

  it('stops a running check: the dialog says stopped, restic left no lock and no helper', async () => {
    await page.goto(`${h.base}/`);
    await h.open('/backups?tab=destinations', 'Backups');
    const name = `local-${h.label}`;
    // An index file that is a named pipe no one writes: restic, its lock taken, waits on it
    // as on a stalled disk until stopped.
    const stall = path.join(repoDir, 'index', 'f'.repeat(64));
    execFileSync('mkfifo', [stall]);
    try {
      await page.locator(`tr[data-destination="${name}"]`).getByLabel(`Maintenance of ${name}`).selectOption('check');
      const check = page.getByRole('dialog', { name: `Check ${name}` });
      await check.getByText(/load indexes/).waitFor({ timeout: 180_000 });
      assert.equal(readdirSync(path.join(repoDir, 'locks')).length, 1, 'the running check holds its lock');
      await h.checkA11y('backups, running maintenance');
      await check.getByRole('button', { name: 'Stop' }).click();
      await check.getByText('stopped', { exact: true }).waitFor({ timeout: 120_000 });
      await check.getByTestId('maintenance-stopped').filter({ hasText: /^Stopped/ }).waitFor();
      assert.equal(await check.getByRole('button', { name: 'Stop' }).count(), 0, 'no Stop once stopped');
      assert.deepEqual(readdirSync(path.join(repoDir, 'locks')), [], "the stopped check's lock is released");
      const helpers = docker('ps', '-a', '-q', '--filter', 'label=berth.helper=backup').split('\n').filter(Boolean);
      for (const id of helpers) {
        assert.ok(!docker('inspect', '-f', '{{range .Mounts}}{{.Source}} {{end}}', id).includes(repoDir), `helper ${id} of the stopped check is left`);
      }
      await check.getByRole('button', { name: 'Close' }).click();
      await check.waitFor({ state: 'detached' });
    } finally {
      rmSync(stall, { force: true });
    }
  });

  it('shows a Viewer the lists without any action button', async () => {
    await page.goto(`${h.base}/`); // no dialog of the test before left open
    await h.signInAsNewUser('Viewer');
    await h.open('/backups', 'Backups');
    const cfgRow = page.locator(`tr[data-config="${container}"]`);
    await cfgRow.waitFor();
    const buttons = async () => (await page.locator('main button:visible, main a.button:visible').allTextContents()).map((t) => t.trim());
    const mutating = /^(New|Add|Run|Edit|Delete|Test|Init|Rotate|Restore|Forget|Stop|Verify)\b/;
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

  it('shows an Operator verify and the maintenance tasks, but not the Berth configuration type', async () => {
    await h.signInAsNewUser('Operator');
    await h.open('/backups?tab=destinations', 'Backups');
    const row = page.locator(`tr[data-destination="local-${h.label}"]`);
    await row.getByRole('button', { name: `Verify local-${h.label}` }).waitFor();
    await row.getByLabel(`Maintenance of local-${h.label}`).selectOption('stats');
    const stats = page.getByRole('dialog', { name: `Stats local-${h.label}` });
    await stats.getByLabel('Repository statistics').waitFor({ timeout: 300_000 });
    await stats.getByRole('button', { name: 'Close' }).click();

    await page.getByRole('tab', { name: 'Configurations' }).click();
    await page.getByRole('button', { name: 'New configuration' }).click();
    const cfg = page.getByRole('dialog');
    const types = cfg.locator('select[name="type"] option');
    await types.first().waitFor({ state: 'attached' });
    assert.deepEqual(await types.allTextContents(), ["A container's volumes", "A stack's volumes and directory"], 'the Berth type is for admins only');
    await cfg.getByRole('button', { name: 'Cancel' }).click();
  });
});
