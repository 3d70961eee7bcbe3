// Browser test of the containers screen's bulk actions (harness:
// lib/harness.mjs) against a real berth and the local engine: selected
// containers are stopped through one POST /api/batch job, and each one's
// outcome is shown, a failure included (a container removed behind the
// console's back); a viewer has no selection and no bulk action.
//
// Everything created carries the label berth.test=<run label> (and a name
// containing it); after() removes it.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { docker, removeLabelled, startConsole, testImage } from './lib/harness.mjs';

let h;
let page;
let label;
let a;
let b;
const batches = [];

const state = (name) => docker('inspect', '-f', '{{.State.Status}}', name);

describe('bulk actions through /api/batch', { timeout: 240_000 }, () => {
  before(async () => {
    h = await startConsole();
    ({ page, label } = h);
    a = `e2e-batch-a-${label}`;
    b = `e2e-batch-b-${label}`;
    for (const n of [a, b]) docker('run', '-d', '--name', n, '--label', `berth.test=${label}`, testImage, 'sleep', '600');
    page.on('request', (r) => {
      if (r.method() === 'POST' && new URL(r.url()).pathname === '/api/batch') batches.push(r.postDataJSON());
    });
    await h.signIn();
  });

  after(async () => {
    removeLabelled(label);
    await h?.stop();
  });

  const selectBoth = async () => {
    await h.open('/containers', 'Containers');
    await page.getByLabel('Filter').fill(`e2e-batch ${label}`);
    await page.getByRole('link', { name: a, exact: true }).waitFor();
    await page.getByRole('link', { name: b, exact: true }).waitFor();
    await page.getByRole('checkbox', { name: `Select ${a}` }).check();
    await page.getByRole('checkbox', { name: `Select ${b}` }).check();
    const toolbar = page.getByRole('toolbar', { name: 'Selected containers' });
    await toolbar.getByText('2', { exact: true }).waitFor();
    return toolbar;
  };

  it('an admin stops two containers with one batch and sees each outcome', async () => {
    const toolbar = await selectBoth();
    await toolbar.getByRole('button', { name: 'Stop', exact: true }).click();
    const results = page.getByRole('region', { name: 'Stop: 2 done' });
    await results.waitFor({ timeout: 60_000 });
    for (const n of [a, b]) {
      await results.getByRole('listitem').filter({ hasText: n }).filter({ hasText: 'stopped' }).waitFor();
      assert.equal(state(n), 'exited');
    }
    assert.equal(batches.length, 1, 'one POST /api/batch');
    assert.equal(batches[0].operation, 'stop');
    assert.equal(batches[0].entityType, 'containers');
    assert.deepEqual(batches[0].items.map((i) => i.name).sort(), [a, b].sort());
    await h.checkA11y('containers, batch results');
    await h.screenshot('containers-batch');
    await results.getByRole('button', { name: 'Dismiss' }).click();
  });

  it('a failed item is reported as failed, the others done', async () => {
    const toolbar = await selectBoth();
    // b goes away behind the console's back: the batch reports it failed.
    docker('rm', '-f', b);
    await toolbar.getByRole('button', { name: 'Start', exact: true }).click();
    const results = page.getByRole('region', { name: 'Start: 1 done, 1 failed' });
    await results.waitFor({ timeout: 60_000 });
    await results.getByRole('listitem').filter({ hasText: a }).filter({ hasText: 'started' }).waitFor();
    await results.getByRole('listitem').filter({ hasText: b }).filter({ hasText: 'failed:' }).waitFor();
    assert.equal(state(a), 'running');
    assert.equal(batches.length, 2);
    assert.equal(batches[1].operation, 'start');
  });

  it('a viewer has no selection and no bulk action', async () => {
    await h.signInAsNewUser('Viewer');

    await h.open('/containers', 'Containers');
    await page.getByLabel('Filter').fill(`e2e-batch ${label}`);
    await page.getByRole('link', { name: a, exact: true }).waitFor();
    assert.equal(await page.getByRole('checkbox', { name: /^Select/ }).count(), 0, 'no selection boxes');
    const toolbar = page.getByRole('toolbar', { name: 'Selected containers' });
    for (const name of ['Start', 'Stop', 'Restart', 'Pause', 'Unpause', 'Remove…']) {
      assert.equal(await toolbar.getByRole('button', { name, exact: true }).count(), 0, `no bulk ${name}`);
    }
    await h.checkA11y('containers as a viewer');
    assert.deepEqual(h.pageErrors, []);
  });
});
