// Browser test of the System screen (harness: lib/harness.mjs): Berth's
// facts, the database's health, and the local engine's host and disk usage
// against `docker info` and `docker system df`; a prune asked and cancelled
// removes nothing (a labelled stopped container survives it). Pruning for
// real is not done here: other tests share the engine, and the console's
// prunes are not narrowed by label (the API's are, and its tests prune only
// their own objects). axe-core checks the screen; a screenshot goes to
// screenshots/.
//
// Needs: a Berth binary (BERTH_BIN), a Docker engine, Chromium and the test
// image (scripts/test-env.sh).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { docker, startConsole, testImage } from './lib/harness.mjs';

let h;
let page;
let stopped; // a labelled stopped container

/** The text of the dd under a dt in a section. */
async function fact(section, label) {
  const dt = section.locator('dt', { hasText: new RegExp(`^${label}$`) });
  return (await dt.locator('xpath=following-sibling::dd[1]').textContent()).trim();
}

describe('System screen', { timeout: 180_000 }, () => {
  before(async () => {
    h = await startConsole();
    page = h.page;
    stopped = `e2e-system-${h.label}`;
    docker('create', '--name', stopped, '--label', `berth.test=${h.label}`, testImage, 'sleep', '600');
    await h.signIn();
  });

  after(async () => {
    await h?.stop();
  });

  it("shows Berth's facts, a healthy database and the local host as docker info tells it", async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'System' }).click();
    await page.getByRole('heading', { level: 1, name: 'System' }).waitFor();
    const berth = page.locator('section', { has: page.getByRole('heading', { name: 'Berth' }) });
    await berth.locator('dt', { hasText: /^Version$/ }).waitFor();
    assert.equal(await fact(berth, 'Database'), 'SQLite');
    assert.equal(await fact(berth, 'Environments'), '1');
    await page.getByText('Healthy', { exact: true }).waitFor();

    const host = page.locator('section', { has: page.getByRole('heading', { name: /^Host of / }) });
    await host.locator('dt', { hasText: /^Kernel$/ }).waitFor();
    const info = JSON.parse(docker('info', '--format', '{{json .}}'));
    assert.equal(await fact(host, 'Kernel'), info.KernelVersion);
    assert.equal(await fact(host, 'CPUs'), String(info.NCPU));
    assert.equal(await fact(host, 'Name'), info.Name);
    assert.ok((await fact(host, 'Docker')).startsWith(`${info.ServerVersion} (API `), 'the Docker version');

    // The engine's disk usage is slow on a busy engine: allow it a minute.
    const images = page.getByRole('row', { name: /^Images/ });
    await images.waitFor({ timeout: 60_000 });
    const cells = (await images.locator('td').allTextContents()).map((s) => s.trim());
    const count = Number(cells[0]);
    assert.ok(count >= 1, `images counted: ${cells}`);
    await h.checkA11y('system');
    await h.screenshot('system');
  });

  it('asks before a prune, and a cancelled prune removes nothing', async () => {
    await page.getByRole('button', { name: 'Prune stopped containers' }).click();
    const dialog = page.getByRole('dialog', { name: 'Remove stopped containers?' });
    await dialog.waitFor();
    await h.checkA11y('system prune dialog');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    assert.equal(docker('ps', '-a', '-q', '--filter', `name=^${stopped}$`).trim().length > 0, true, 'the stopped container is still there');
    assert.equal(await page.getByRole('status').filter({ hasText: /^Removed / }).count(), 0);
  });
});
