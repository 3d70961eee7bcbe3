// Browser test of the Activity screen (harness: lib/harness.mjs), against a
// real berth and the local engine: with the screen open, a labelled container
// is started through the engine's API (the docker CLI); its start event
// appears at the top of the table as the collector stores it (live stream,
// no reload); the container filter narrows the table to it; axe-core checks
// the screen; clearing, after confirmation, empties it. The dashboard fills
// its tiles from the stats stream.
//
// Everything created carries the label berth.test=<run label>; stop() removes it.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { docker, startConsole, testImage } from './lib/harness.mjs';

let h;
let page;
let name;

describe('activity', { timeout: 180_000 }, () => {
  before(async () => {
    h = await startConsole();
    page = h.page;
    name = `berth-e2e-act-${h.label}`;
    await h.signIn();
  });
  after(async () => {
    await h?.stop();
  });

  it('shows a container started through the engine as it happens', async () => {
    await h.open('/activity', 'Activity');
    await page.getByRole('status').filter({ hasText: /^Live$/ }).waitFor();
    docker('run', '-d', '--name', name, '--label', `berth.test=${h.label}`, testImage, 'sleep', '300');
    // The collector follows the engine from the server's start; should its
    // subscription still be opening, a restart makes the engine send another
    // start event.
    const started = page
      .getByRole('row')
      .filter({ hasText: name })
      .filter({ has: page.getByRole('cell', { name: 'Started', exact: true }) });
    const deadline = Date.now() + 60_000;
    for (;;) {
      try {
        await started.first().waitFor({ timeout: 10_000 });
        break;
      } catch (e) {
        if (Date.now() > deadline) throw e;
        docker('restart', '-t', '0', name);
      }
    }
    const first = page.getByRole('row').nth(1);
    assert.match(await first.innerText(), new RegExp(name));
    assert.deepEqual(h.pageErrors, []);
  });

  it('filters by container', async () => {
    await page.getByLabel('Container', { exact: true }).fill(name);
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByRole('row').filter({ hasText: name }).first().waitFor();
    const rows = await page.getByRole('row').allInnerTexts();
    assert.ok(rows.length >= 3, `header, create and start at least: ${rows.join(' | ')}`);
    for (const r of rows.slice(1)) assert.match(r, new RegExp(name));
    const { body } = await h.api('GET', `/api/activity?container=${name}&action=create`);
    assert.equal(body.total, 1, JSON.stringify(body));
    await h.checkA11y('activity');
  });

  it('clears the activity after confirmation', async () => {
    await page.getByRole('button', { name: 'Clear…' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByText(/every environment/).waitFor();
    await dialog.getByRole('button', { name: 'Clear', exact: true }).click();
    await dialog.waitFor({ state: 'detached' });
    const { body } = await h.api('GET', `/api/activity?container=${name}&action=create`);
    assert.equal(body.total, 0, JSON.stringify(body));
  });

  it('fills the dashboard from the stats stream', async () => {
    const streamed = page.waitForRequest((r) => r.url().includes('/api/dashboard/stats/stream'));
    await h.open('/', 'Dashboard');
    await streamed;
    await page.getByRole('link', { name: /^Containers of / }).first().waitFor();
    assert.deepEqual(h.pageErrors, []);
  });
});
