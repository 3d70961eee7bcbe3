// Browser test of a volume's content (harness: lib/harness.mjs): a labelled
// volume filled by a labelled container is browsed on its screen (a
// directory, a text file, a binary file refused), downloaded as a tar,
// cloned through the dialog (the clone is browsed in turn), and the helper
// is released; the image screen's Export downloads a `docker load`-able tar.
// axe-core checks the screens. Everything created carries the run's label.
//
// Needs: a berth binary and console build (BERTH_BIN, WEB_DIR), a Docker
// engine, Chromium and the test image (scripts/test-env.sh).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { docker, removeLabelled, startConsole, testImage } from './lib/harness.mjs';

let h;
let page;
let vol;
let clone;

/** Removes Berth's helper containers on volume v, if any are left. */
function removeHelpers(v) {
  const ids = docker('ps', '-aq', '--filter', `label=berth.helper.volume=${v}`).split('\n').filter(Boolean);
  if (ids.length) docker('rm', '-f', ...ids);
}

function helpers(v) {
  return docker('ps', '-aq', '--filter', `label=berth.helper.volume=${v}`).split('\n').filter(Boolean);
}

describe('volume content', { timeout: 120_000 }, () => {
  before(async () => {
    h = await startConsole();
    page = h.page;
    vol = `e2e-browse-${h.label}`;
    clone = `${vol}-copy`;
    docker('volume', 'create', '--label', `berth.test=${h.label}`, vol);
    docker('run', '--rm', '--label', `berth.test=${h.label}`, '-v', `${vol}:/d`, testImage, 'sh', '-c',
      "mkdir -p /d/conf && printf 'listen 80\\n' > /d/conf/site.conf && printf 'a\\000b' > /d/blob.bin && echo top > /d/readme.txt");
    await h.signIn();
  });

  after(async () => {
    if (vol) {
      removeHelpers(vol);
      removeHelpers(clone);
    }
    if (h) removeLabelled(h.label);
    await h?.stop();
  });

  it('browses directories and shows a text file, refusing a binary one', async () => {
    await h.open(`/volumes/${vol}`, vol);
    await page.getByRole('button', { name: 'Browse content' }).click();
    const root = page.getByRole('table', { name: 'Content of /' });
    await root.waitFor();
    for (const n of ['conf/', 'blob.bin', 'readme.txt']) await root.getByRole('button', { name: n, exact: true }).waitFor();
    assert.equal(helpers(vol).length, 1, 'one helper browses the volume');

    await root.getByRole('button', { name: 'conf/', exact: true }).click();
    const conf = page.getByRole('table', { name: 'Content of /conf' });
    await conf.getByRole('button', { name: 'site.conf', exact: true }).click();
    const content = page.getByLabel('Content of /conf/site.conf');
    await content.waitFor();
    assert.equal(await content.textContent(), 'listen 80\n');
    await h.checkA11y('volume content');
    await h.screenshot('volume-content');

    await page.getByRole('navigation', { name: 'Path' }).getByRole('button', { name: vol, exact: true }).click();
    await page.getByRole('table', { name: 'Content of /' }).getByRole('button', { name: 'blob.bin', exact: true }).click();
    await page.getByRole('alert').filter({ hasText: 'File is binary and cannot be shown as text' }).waitFor();

    await page.getByRole('button', { name: 'Close browser' }).click();
    await h.waitFor('the helper to be removed', 10_000, async () => helpers(vol).length === 0);
  });

  it('downloads the volume as a tar', async () => {
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download .tar', exact: true }).click()]);
    assert.equal(download.suggestedFilename(), `${vol}.tar`);
    const names = execFileSync('tar', ['-tf', await download.path()], { encoding: 'utf8' }).split('\n');
    for (const n of ['./conf/site.conf', './blob.bin', './readme.txt']) assert.ok(names.includes(n), `${n} in ${names}`);
  });

  it('clones the volume through the dialog and browses the clone', async () => {
    await page.getByRole('button', { name: 'Clone', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: `Clone volume ${vol}` });
    await dialog.getByLabel('Name of the clone').fill(clone);
    await dialog.getByRole('button', { name: 'Clone', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: clone }).waitFor({ timeout: 30_000 });
    assert.equal(docker('volume', 'inspect', '-f', '{{index .Labels "berth.clone-of"}}', clone), vol);
    await page.getByRole('button', { name: 'Browse content' }).click();
    await page.getByRole('table', { name: 'Content of /' }).getByRole('button', { name: 'readme.txt', exact: true }).click();
    assert.equal(await page.getByLabel('Content of /readme.txt').textContent(), 'top\n');
    await page.getByRole('button', { name: 'Close browser' }).click();
    await h.waitFor('the clone helper to be removed', 10_000, async () => helpers(clone).length === 0);
  });

  it('exports an image from its screen', async () => {
    await h.open(`/images/${encodeURIComponent(testImage)}`);
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Export', exact: true }).click()]);
    assert.equal(download.suggestedFilename(), `${testImage.replace(/[/:]/g, '_')}.tar`);
    const manifest = JSON.parse(execFileSync('tar', ['-xOf', await download.path(), 'manifest.json'], { encoding: 'utf8' }));
    assert.ok(manifest[0].RepoTags.includes(testImage), JSON.stringify(manifest));
    await h.checkA11y('image with export');
  });
});
