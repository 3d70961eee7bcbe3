// Browser test of a container's Files tab (harness: lib/harness.mjs): on a
// labelled running container, a file is uploaded from the browser, opened in
// the editor, changed and saved (checked with docker exec), and its directory
// downloaded as a tar whose content is compared. axe-core checks the tab. On a
// stopped container a file is renamed and another deleted from the console
// (checked with docker cp, which reads a stopped container too), and its
// Processes, Stats and Terminal tabs say it is not running.
//
// Needs: a berth binary and console build (BERTH_BIN, WEB_DIR), a Docker
// engine, Chromium and the test image (BERTH_TEST_IMAGE).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { docker, startConsole, testImage } from './lib/harness.mjs';

let h;
let page;
let name;

describe('container files', { timeout: 120_000 }, () => {
  before(async () => {
    h = await startConsole();
    page = h.page;
    name = `e2e-files-${h.label}`;
    docker('run', '-d', '--name', name, '--label', `berth.test=${h.label}`, testImage, 'sleep', '600');
    await h.signIn();
  });

  after(async () => {
    await h?.stop();
  });

  it('uploads, edits and downloads a file', async () => {
    await h.open(`/containers/${name}?tab=files`);
    await page.getByRole('table', { name: 'Files of /' }).waitFor();
    await h.checkA11y('files tab');
    await page.getByRole('table', { name: 'Files of /' }).getByRole('button', { name: 'tmp/' }).click();
    await page.getByRole('table', { name: 'Files of /tmp' }).waitFor();

    const dir = mkdtempSync(path.join(tmpdir(), 'berth-e2e-files-'));
    const local = path.join(dir, 'notes.txt');
    writeFileSync(local, 'first line\n');
    await page.getByLabel('Upload files').setInputFiles(local);
    await page.getByRole('status').filter({ hasText: 'Uploaded notes.txt' }).waitFor();
    assert.equal(docker('exec', name, 'cat', '/tmp/notes.txt'), 'first line');

    await page.getByRole('button', { name: 'notes.txt', exact: true }).click();
    const editor = page.getByRole('dialog', { name: 'Edit /tmp/notes.txt' });
    await editor.getByRole('textbox', { name: 'Content' }).fill('edited in the browser\n');
    await editor.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved /tmp/notes.txt' }).waitFor();
    assert.equal(docker('exec', name, 'cat', '/tmp/notes.txt'), 'edited in the browser');

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Download notes.txt' }).click(),
    ]);
    assert.equal(download.suggestedFilename(), 'notes.txt.tar');
    const tarPath = await download.path();
    const content = execFileSync('tar', ['-xOf', tarPath, 'notes.txt'], { encoding: 'utf8' });
    assert.equal(content, 'edited in the browser\n');
    assert.deepEqual(h.pageErrors, []);
  });

  it('renames and deletes files of a stopped container', async () => {
    const stopped = `${name}-stopped`;
    docker('run', '--name', stopped, '--label', `berth.test=${h.label}`, testImage, 'sh', '-c',
      'mkdir /work && echo keep > /work/old.txt && echo gone > /work/gone.txt');
    await h.open(`/containers/${stopped}?tab=files`);
    await page.getByText('Container is not running: these are the files of its stopped filesystem').waitFor();
    await page.getByRole('table', { name: 'Files of /' }).getByRole('button', { name: 'work/' }).click();
    const table = page.getByRole('table', { name: 'Files of /work' });
    await table.waitFor();

    await table.getByRole('button', { name: 'Rename old.txt' }).click();
    const rename = page.getByRole('dialog', { name: 'Rename old.txt' });
    await rename.getByRole('textbox', { name: 'Name' }).fill('new.txt');
    await rename.getByRole('button', { name: 'Rename' }).click();
    await table.getByRole('button', { name: 'new.txt', exact: true }).waitFor();

    await table.getByRole('button', { name: 'Delete gone.txt' }).click();
    const confirm = page.getByRole('dialog', { name: 'Delete gone.txt?' });
    await confirm.getByRole('button', { name: 'Delete' }).click();
    await confirm.waitFor({ state: 'detached' });
    await table.getByRole('button', { name: 'gone.txt', exact: true }).waitFor({ state: 'detached' });

    const content = execFileSync('sh', ['-c', `docker cp ${stopped}:/work/new.txt - | tar -xO`], { encoding: 'utf8' });
    assert.equal(content, 'keep\n');
    assert.throws(() => docker('cp', `${stopped}:/work/gone.txt`, '-'));
    assert.throws(() => docker('cp', `${stopped}:/work/old.txt`, '-'));
    assert.equal(docker('inspect', '-f', '{{.State.Running}}', stopped), 'false');

    // The tabs that need a running container say so, with no error.
    for (const [tab, words] of [
      ['Processes', 'Container is not running: its processes are listed while it runs.'],
      ['Stats', 'Container is not running: statistics are sampled while it runs.'],
      ['Terminal', `Container is not running: start ${stopped} to open a terminal.`],
    ]) {
      await page.getByRole('tab', { name: tab }).click();
      await page.getByRole('tabpanel').getByText(words).waitFor();
    }
    assert.equal(await page.getByRole('alert').count(), 0);
    assert.deepEqual(h.pageErrors, []);
  });
});
