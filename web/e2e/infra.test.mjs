// Browser test of the infrastructure screens (harness: lib/harness.mjs): the
// dashboard's tile of the local engine against `docker ps`, its live CPU chart
// and the recent events; a volume and a network created, inspected and removed
// through the console (the network with a container connected and
// disconnected); a second environment on the local socket, tested, seen in the
// switcher and deleted. axe-core checks each screen; screenshots go to
// screenshots/. Everything created carries the run's label or name.
//
// Needs: bin/berth (make build), a Docker engine, Chromium (scripts/test-env.sh
// records it as BERTH_TEST_CHROMIUM) and the test image (BERTH_TEST_IMAGE).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { docker, startConsole, testImage } from './lib/harness.mjs';

let h;
let page;
let name; // e2e-<label>: the volume, network and environment of this run
let worker; // a labelled running container

function count(...args) {
  return docker('ps', '-q', ...args).split('\n').filter(Boolean).length;
}

/** The figure under a label (dt) in a dashboard tile. */
async function figure(tile, label) {
  return (await tile.locator('dl > div').filter({ has: page.locator('dt', { hasText: new RegExp(`^${label}$`) }) }).locator('dd').textContent()).trim();
}

describe('infrastructure screens', { timeout: 300_000 }, () => {
  before(async () => {
    h = await startConsole();
    page = h.page;
    name = `e2e-${h.label}`;
    worker = `e2e-infra-${h.label}`;
    docker('run', '-d', '--name', worker, '--label', `berth.test=${h.label}`, testImage, 'sleep', '600');
    await h.signIn();
  });

  after(async () => {
    // Environments are not engine objects: remove this run's by name if a test stopped halfway.
    if (h) {
      const envs = await h.api('GET', '/api/environments').catch(() => ({ body: [] }));
      for (const e of Array.isArray(envs.body) ? envs.body : []) {
        if (e.name === name) await h.api('DELETE', `/api/environments/${e.id}`);
      }
    }
    await h?.stop();
  });

  it('shows the local tile with the counts of docker ps and a live CPU chart', async () => {
    await h.open('/', 'Dashboard');
    const tile = page.getByRole('article', { name: 'local' });
    await tile.getByText('Online', { exact: true }).waitFor();
    // Other test runs share the engine: compare with docker ps taken just before
    // and just after a refresh, until both agree with the tile.
    await h.waitFor('the tile to agree with docker ps', 30_000, async () => {
      const before = [count(), count('-a')];
      await page.getByRole('button', { name: 'Refresh', exact: true }).click();
      await page.getByRole('button', { name: 'Refresh', exact: true }).waitFor(); // "Refreshing…" is over
      const shown = [Number(await figure(tile, 'Running')), Number(await figure(tile, 'Containers'))];
      const afterwards = [count(), count('-a')];
      return shown.every((v, i) => v === before[i] && v === afterwards[i]);
    });
    assert.ok(Number(await figure(tile, 'Running')) >= 1, 'the labelled container runs');
    const cpu = tile.getByRole('img', { name: /^CPU of local: CPU [\d.]+ %$/ });
    await cpu.waitFor({ timeout: 30_000 });
    await tile.getByRole('img', { name: /^Memory of local: Memory / }).waitFor();
    await h.checkA11y('dashboard');
  });

  it('lists a recent event when a container starts', async () => {
    const events = page.getByRole('region', { name: 'Recent events' });
    await events.getByText('Listening on local').waitFor();
    const started = `e2e-event-${h.label}`;
    docker('run', '-d', '--name', started, '--label', `berth.test=${h.label}`, testImage, 'sleep', '600');
    const row = events.getByRole('row').filter({ hasText: started }).filter({ hasText: 'start' });
    await row.first().waitFor({ timeout: 20_000 });
    assert.match(await row.first().textContent(), /container/);
    // A second pass of samples draws the lines.
    await page.getByRole('article', { name: 'local' }).locator('svg polyline').first().waitFor({ state: 'attached', timeout: 30_000 });
    await h.checkA11y('dashboard with events');
    await h.screenshot('dashboard');
  });

  it('creates a volume, shows it, opens it and removes it after confirmation', async () => {
    await h.open('/volumes', 'Volumes');
    await page.getByRole('button', { name: 'New volume' }).click();
    const form = page.getByRole('region', { name: 'New volume' });
    await form.getByLabel('Name', { exact: true }).fill(name);
    await form.getByLabel('Labels', { exact: true }).fill(`berth.test=${h.label}`);
    await form.getByRole('button', { name: 'Create volume' }).click();
    const link = page.getByRole('table').getByRole('link', { name, exact: true });
    await link.waitFor();
    assert.equal(docker('volume', 'inspect', '-f', '{{index .Labels "berth.test"}}', name), h.label);
    await h.checkA11y('volumes');
    await h.screenshot('volumes');

    await link.click();
    await page.getByRole('heading', { level: 1, name }).waitFor();
    assert.equal(new URL(page.url()).pathname, `/volumes/${name}`);
    await page.getByText('No container uses this volume.').waitFor();
    await page.getByText('Inspect JSON').click();
    await page.getByText(`"berth.test": "${h.label}"`).waitFor();
    await h.checkA11y('volume');

    await page.getByRole('button', { name: 'Remove' }).click();
    const dialog = page.getByRole('dialog', { name: `Remove volume ${name}?` });
    await dialog.getByRole('button', { name: 'Remove' }).click();
    await page.getByRole('heading', { level: 1, name: 'Volumes' }).waitFor();
    // The list, or its empty state when that volume was the engine's only one.
    await page.getByRole('table').or(page.getByText('No volumes on this environment.')).waitFor();
    assert.equal(await page.getByRole('link', { name, exact: true }).count(), 0);
    assert.equal(docker('volume', 'ls', '-q', '--filter', `name=^${name}$`), '');
  });

  it('creates a network, connects and disconnects a container, and removes it', async () => {
    await h.open('/networks', 'Networks');
    const bridge = page.getByRole('row').filter({ has: page.getByRole('link', { name: 'bridge', exact: true }) });
    await bridge.getByText('Protected').waitFor();
    await page.getByRole('button', { name: 'New network' }).click();
    const form = page.getByRole('region', { name: 'New network' });
    await form.getByLabel('Name', { exact: true }).fill(name);
    await form.getByLabel('Labels', { exact: true }).fill(`berth.test=${h.label}`);
    await form.getByRole('button', { name: 'Create network' }).click();
    const link = page.getByRole('table').getByRole('link', { name, exact: true });
    await link.waitFor();
    await h.checkA11y('networks');
    await h.screenshot('networks');

    await link.click();
    await page.getByRole('heading', { level: 1, name }).waitFor();
    await page.getByText('No running container is attached.').waitFor();
    // The searchable picker: type, then choose the match with the keyboard.
    const picker = page.getByRole('combobox', { name: 'Connect a container' });
    await picker.fill(worker);
    await page.getByRole('option', { name: worker }).waitFor();
    await picker.press('Enter');
    await page.getByRole('button', { name: 'Connect', exact: true }).click();
    await page.getByRole('table').getByRole('link', { name: worker }).waitFor();
    assert.match(docker('inspect', '-f', '{{json .NetworkSettings.Networks}}', worker), new RegExp(`"${name}"`));
    await h.checkA11y('network');

    await page.getByRole('button', { name: `Disconnect ${worker}` }).click();
    await page.getByRole('dialog', { name: `Disconnect ${worker}?` }).getByRole('button', { name: 'Disconnect' }).click();
    await page.getByText('No running container is attached.').waitFor();
    assert.doesNotMatch(docker('inspect', '-f', '{{json .NetworkSettings.Networks}}', worker), new RegExp(`"${name}"`));

    await page.getByRole('button', { name: 'Remove' }).click();
    await page.getByRole('dialog', { name: `Remove network ${name}?` }).getByRole('button', { name: 'Remove' }).click();
    await page.getByRole('heading', { level: 1, name: 'Networks' }).waitFor();
    await page.getByRole('table').waitFor();
    assert.equal(await page.getByRole('link', { name, exact: true }).count(), 0);
    assert.equal(docker('network', 'ls', '-q', '--filter', `name=^${name}$`), '');
  });

  it('adds a socket environment, tests it, sees it in the switcher and deletes it', async () => {
    await h.open('/environments', 'Environments');
    const local = page.getByRole('row').filter({ has: page.getByRole('link', { name: 'local', exact: true }) });
    await local.getByText('Online').waitFor();
    await h.checkA11y('environments');
    await h.screenshot('environments');

    await page.getByRole('link', { name: 'New environment' }).click();
    await page.getByRole('heading', { level: 1, name: 'New environment' }).waitFor();
    await page.getByLabel('Name', { exact: true }).fill(name);
    await page.getByLabel('Local socket').check();
    await page.getByLabel('Socket path').fill('/var/run/docker.sock');
    await page.getByRole('button', { name: 'Test connection' }).click();
    await page.getByText(/^Connected: .*engine \S+/).waitFor({ timeout: 20_000 });
    await h.checkA11y('environment-edit');
    await h.screenshot('environment-edit');

    await page.getByRole('button', { name: 'Create environment' }).click();
    await page.getByRole('heading', { level: 1, name }).waitFor();
    assert.match(new URL(page.url()).pathname, /^\/environments\/\d+$/);
    const switcher = page.getByLabel('Environment', { exact: true });
    await switcher.locator('option', { hasText: name }).waitFor({ state: 'attached' });

    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog', { name: `Delete environment ${name}?` }).getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('heading', { level: 1, name: 'Environments' }).waitFor();
    await page.getByRole('table').waitFor();
    assert.equal(await page.getByRole('link', { name, exact: true }).count(), 0);
    assert.equal(await switcher.locator('option', { hasText: name }).count(), 0);
    const envs = await h.api('GET', '/api/environments');
    assert.ok(!envs.body.some((e) => e.name === name), 'deleted on the server');
  });

  it('fits a phone and passes axe in the dark theme', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.evaluate(() => localStorage.setItem('berth.theme', 'dark'));
    for (const [p, heading] of [
      ['/', 'Dashboard'],
      ['/volumes', 'Volumes'],
      ['/networks', 'Networks'],
      ['/networks/bridge', 'bridge'],
      ['/environments', 'Environments'],
      ['/environments/new', 'New environment'],
      ['/environments/1', 'local'],
    ]) {
      await h.open(p, heading);
      await page.getByText('Loading…', { exact: true }).first().waitFor({ state: 'detached' });
      assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), 'dark');
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 1, `${p} scrolls sideways on a phone by ${overflow}px`);
      await h.checkA11y(`${p} (phone, dark)`);
    }
    await h.screenshot('environment-phone-dark');
    await page.evaluate(() => localStorage.removeItem('berth.theme'));
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it('raised no error in the page', () => {
    assert.deepEqual(h.pageErrors, []);
  });
});
