// Browser test of the containers list at fleet size (harness: lib/harness.mjs)
// against a real berth and the local engine: 1,000 created containers are
// listed with only the rows in view in the page, scrolled programmatically
// while the frame times are measured (printed, not asserted); the table fits
// a 1366 px laptop with the side navigation open and its actions in view; the
// column choice is the user's and survives a reload; group by stack; a
// published port is a link; on a phone each row still shows name, state and
// actions; a container run or removed outside Berth shows without a refresh
// (the engine's events); a Viewer sees no Stop, Remove or Update.
//
// Everything created carries the label berth.test=<run label> (and a name
// containing it); after() removes it.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createContainers } from './lib/engine.mjs';
import { docker, removeLabelled, startConsole, testImage } from './lib/harness.mjs';
/** E2E_LIST_COUNT makes a quicker run while working on this test. */
const COUNT = Number(process.env.E2E_LIST_COUNT || 1000);
/** At most this many container rows are in the page at once. */
const MAX_ROWS = 80;

let h;
let page;
let label;
let prefix;
let web;
let stack;
let port;

const domRows = () => page.locator('tbody tr.row').count();

/** Waits until the list says it shows n containers ("n of m containers"). */
async function showing(n, ms = 30_000) {
  let last = '';
  await h
    .waitFor(`${n} containers shown`, ms, async () => {
      last = (await page.locator('.bulk .count').innerText()).trim();
      return new RegExp(`^${n} of \\d+ containers`).test(last);
    })
    .catch((e) => {
      throw new Error(`${n} containers are not shown: the list says “${last}” (${e.message.split("\n")[0]})`);
    });
}

describe('the containers list at fleet size', { timeout: 600_000 }, () => {
  before(async () => {
    h = await startConsole({ viewport: { width: 1366, height: 768 } });
    ({ page, label } = h);
    prefix = `e2e-list-${label}`;
    stack = `e2e-stack-${label}`;
    web = `${prefix}-web`;
    // Created, not started, through the engine's API (parallel requests, no
    // docker process each); every 100th is in the test's stack.
    const started = Date.now();
    await createContainers(
      Array.from({ length: COUNT }, (_, n) => ({
        name: `${prefix}-${String(n).padStart(4, '0')}`,
        image: testImage,
        cmd: ['true'],
        labels: { 'berth.test': label, ...(n % 100 === 0 ? { 'com.docker.compose.project': stack } : {}) },
      })),
    );
    console.log(`created ${COUNT} containers in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    docker('run', '-d', '--name', web, '--label', `berth.test=${label}`, '-p', '80', testImage, 'sleep', '600');
    port = /:(\d+)$/.exec(docker('port', web, '80/tcp').split('\n')[0])[1];
    await h.signIn();
  });

  after(async () => {
    removeLabelled(label);
    await h?.stop();
  });

  it('lists 1,000 containers with only the rows in view in the page, and scrolls them', async () => {
    const t0 = Date.now();
    await h.open('/containers', 'Containers');
    await page.getByLabel('Filter').fill(prefix);
    await showing(COUNT + 1, 60_000);
    console.log(`time to ${COUNT + 1} listed containers: ${Date.now() - t0} ms`);
    const first = await domRows();
    assert.ok(first > 0 && first < MAX_ROWS, `${first} rows rendered at once`);

    const m = await page.evaluate(async () => {
      const el = document.querySelector('.scroller');
      const deltas = [];
      let most = 0;
      await new Promise((resolve) => {
        let last = 0;
        const step = (t) => {
          if (last) deltas.push(t - last);
          last = t;
          most = Math.max(most, document.querySelectorAll('tbody tr.row').length);
          if (el.scrollTop + el.clientHeight >= el.scrollHeight - 1 || deltas.length > 1500) return resolve();
          el.scrollTop += 120;
          requestAnimationFrame(step);
        };
        requestAnimationFrame(step);
      });
      deltas.sort((a, b) => a - b);
      const q = (p) => deltas[Math.min(deltas.length - 1, Math.floor(p * deltas.length))];
      return {
        frames: deltas.length,
        mean: deltas.reduce((a, b) => a + b, 0) / deltas.length,
        p50: q(0.5),
        p95: q(0.95),
        max: deltas[deltas.length - 1],
        most,
      };
    });
    console.log(
      `scrolling ${COUNT + 1} containers: ${m.frames} frames, frame time mean ${m.mean.toFixed(1)} ms, ` +
        `p50 ${m.p50.toFixed(1)} ms, p95 ${m.p95.toFixed(1)} ms, max ${m.max.toFixed(1)} ms; at most ${m.most} rows in the page`,
    );
    assert.ok(m.most < MAX_ROWS, `at most ${m.most} rows in the page while scrolling`);
    // The end of the list is reached: the last one by name is there.
    await page.getByRole('link', { name: web, exact: true }).waitFor();

    // Sorting and filtering stay on the whole list.
    await page.getByRole('button', { name: /^Name/ }).click();
    await page.locator('.scroller').evaluate((el) => (el.scrollTop = 0));
    await page.getByRole('link', { name: web, exact: true }).waitFor();

    // Sorted by CPU, the order comes from one pass over every running
    // container (the stats stream without ids), again on demand, and the
    // list says when it was taken; the live figures stay with the rows in
    // view (ids=…). The only running container of the run comes first.
    const streams = [];
    const onReq = (r) => {
      const u = new URL(r.url());
      if (u.pathname === '/api/containers/stats/stream') streams.push(u.searchParams.get('ids'));
    };
    page.on('request', onReq);
    await page.getByRole('button', { name: /^CPU/ }).click();
    await page.getByText(/Sorted by CPU as of \d{1,2}:\d{2}:\d{2}/).waitFor({ timeout: 30_000 });
    await page.locator('.scroller').evaluate((el) => (el.scrollTop = 0));
    await page.locator('tbody tr.row').first().getByRole('link', { name: web, exact: true }).waitFor();
    await page.getByRole('button', { name: 'Sort again now' }).click();
    await h.waitFor('a second pass over every running container', 30_000, async () => streams.filter((i) => i === null).length >= 2);
    page.off('request', onReq);
    const live = streams.filter((i) => i !== null);
    assert.ok(live.every((i) => i.split(',').length < MAX_ROWS), `live passes ask for the rows in view only: ${live.map((i) => i.split(',').length)}`);
    console.log(`sorted by CPU: ${streams.length - live.length} passes over every running container, ${live.length} live passes of the rows in view`);
    await page.getByRole('button', { name: /^Name/ }).click();
    await page.getByRole('button', { name: /^Name/ }).click(); // back to name, descending

    await page.getByLabel('Filter').fill(`${prefix}-${String(COUNT - 1).padStart(4, '0')}`);
    await showing(1);
    assert.equal(await domRows(), 1);
  });

  it('fits a 1366 px laptop with the side navigation open, actions in view', async () => {
    await page.getByLabel('Filter').fill(prefix);
    await showing(COUNT + 1);
    assert.ok(await page.getByRole('navigation', { name: 'Main' }).isVisible(), 'side navigation open');
    const fit = await page.evaluate(() => {
      const el = document.querySelector('.scroller');
      const cell = document.querySelector('tbody tr.row td.actions');
      const buttons = [...document.querySelectorAll('tbody tr.row td.actions button')].map((b) => b.getBoundingClientRect().right);
      return {
        page: document.documentElement.scrollWidth - document.documentElement.clientWidth,
        table: el.scrollWidth - el.clientWidth,
        actionsRight: cell.getBoundingClientRect().right,
        buttonsRight: Math.max(...buttons),
        width: window.innerWidth,
      };
    });
    assert.equal(fit.page, 0, 'no horizontal scroll of the page');
    assert.ok(fit.table <= 0, `the table scrolls sideways by ${fit.table} px`);
    assert.ok(fit.actionsRight <= fit.width && fit.buttonsRight <= fit.width, `actions end at ${fit.buttonsRight} of ${fit.width} px`);
    await h.checkA11y('containers list at fleet size');
    await h.screenshot('containers-list-1366');
  });

  it('keeps the column choice across a reload, and resets it', async () => {
    const chooser = page.getByText('Columns', { exact: true });
    await chooser.click();
    await page.getByRole('checkbox', { name: 'Image', exact: true }).uncheck();
    await page.getByRole('columnheader', { name: /Image/ }).waitFor({ state: 'detached' });
    await h.waitFor('the layout saved', 10_000, async () => {
      const r = await h.api('GET', '/api/preferences/grid');
      return r.body.preferences?.containers?.columns?.some((c) => c.id === 'image' && c.visible === false);
    });
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Containers' }).waitFor();
    await page.getByRole('columnheader', { name: /State/ }).waitFor();
    assert.equal(await page.getByRole('columnheader', { name: /Image/ }).count(), 0, 'Image stays hidden after a reload');
    await page.getByText('Columns', { exact: true }).click();
    await page.getByRole('button', { name: 'Reset columns' }).click();
    await page.getByRole('columnheader', { name: /Image/ }).waitFor();
    await page.keyboard.press('Escape');
  });

  it('groups by stack, with counts, and a group collapses', async () => {
    await page.getByLabel('Filter').fill(prefix);
    await page.getByRole('checkbox', { name: 'Group by stack' }).check();
    const inStack = Math.ceil(COUNT / 100);
    const group = page.getByRole('button', { name: new RegExp(`^${stack} ${inStack} containers?, 0 running`) });
    await group.waitFor();
    assert.equal(await group.getAttribute('aria-expanded'), 'true');
    await page.getByRole('link', { name: `${prefix}-0000`, exact: true }).waitFor();
    await group.click();
    assert.equal(await group.getAttribute('aria-expanded'), 'false');
    await page.getByRole('link', { name: `${prefix}-0000`, exact: true }).waitFor({ state: 'detached' });
    await page.getByRole('button', { name: new RegExp(`No stack ${COUNT + 1 - inStack} containers, 1 running`) }).waitFor();
    await page.getByRole('checkbox', { name: 'Group by stack' }).uncheck();
  });

  it('links a published port to the browser’s host', async () => {
    await page.getByLabel('Filter').fill(web);
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: web, exact: true }) });
    const link = row.getByRole('link', { name: `${port}→80/tcp` });
    await link.waitFor();
    assert.equal(await link.getAttribute('href'), `http://127.0.0.1:${port}`);
    await row.getByText('running', { exact: true }).waitFor();
  });

  it('on a phone, each row shows its name, state and actions', async () => {
    await page.setViewportSize({ width: 375, height: 740 });
    try {
      await page.getByLabel('Filter').fill(prefix);
      await showing(COUNT + 1);
      assert.ok((await domRows()) < MAX_ROWS);
      await page.getByLabel('Filter').fill(web);
      const row = page.locator('tbody tr.row').filter({ has: page.getByRole('link', { name: web, exact: true }) });
      for (const part of [row.getByRole('link', { name: web, exact: true }), row.getByText('running', { exact: true }), row.getByRole('button', { name: `Stop ${web}` }), row.getByRole('button', { name: `Remove ${web}` })]) {
        await part.waitFor();
        const box = await part.boundingBox();
        assert.ok(box && box.x >= 0 && box.x + box.width <= 375, `${await part.textContent()} in view: ${JSON.stringify(box)}`);
      }
      assert.equal(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth), 0, 'no sideways scroll');
      await h.checkA11y('containers list on a phone');
      await h.screenshot('containers-list-phone');
    } finally {
      await page.setViewportSize({ width: 1366, height: 768 });
    }
  });

  it('follows the engine: a container run or removed outside Berth shows within 2 s, without a refresh', async () => {
    const ext = `${prefix}-outside`;
    await h.open('/containers', 'Containers');
    await page.getByLabel('Filter').fill(ext);
    await page.getByText(/No container matches/).waitFor();
    const t0 = Date.now();
    docker('run', '-d', '--name', ext, '--label', `berth.test=${label}`, testImage, 'sleep', '600');
    await page.getByRole('link', { name: ext, exact: true }).waitFor({ timeout: 5_000 });
    const shown = Date.now() - t0;
    docker('rm', '-f', ext);
    const t1 = Date.now();
    await page.getByRole('link', { name: ext, exact: true }).waitFor({ state: 'detached', timeout: 5_000 });
    const gone = Date.now() - t1;
    console.log(`outside changes shown after ${shown} ms (run) and ${gone} ms (remove)`);
    assert.ok(shown < 2_500 && gone < 2_500, `shown after ${shown} ms, gone after ${gone} ms`);
  });

  it('a Viewer sees no Stop, Remove, Update or New', async () => {
    await h.signInAsNewUser('Viewer');
    await h.open('/containers', 'Containers');
    await page.getByLabel('Filter').fill(web);
    await page.getByRole('link', { name: web, exact: true }).waitFor();
    await page.getByText('running', { exact: true }).waitFor();
    for (const name of [`Stop ${web}`, `Restart ${web}`, `Remove ${web}`, `Update ${web}`]) {
      assert.equal(await page.getByRole('button', { name }).count(), 0, `no ${name}`);
    }
    assert.equal(await page.getByRole('link', { name: 'New container' }).count(), 0);
    assert.equal(await page.getByRole('button', { name: 'Check for updates' }).count(), 0);
    assert.equal(await page.getByRole('checkbox', { name: /^Select/ }).count(), 0);
    assert.deepEqual(h.pageErrors, []);
  });
});
