// Browser test of logs and terminal (issue 22 point 7), against a real berth
// and the local engine with two busybox containers that print lines: the log
// viewer's timestamp column, wrap, search with next/previous, download; the
// merged view of both; the shells offered (sh, not bash, on busybox) and a
// command that does not exist said in words; the terminal session living on
// while another tab is shown; the standalone terminal page; the phone layout;
// a Viewer who reads logs but gets no terminal. axe-core checks each screen.
//
// Everything created carries the label berth.test=<run label>; stop() removes it.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { docker, startConsole, testImage } from './lib/harness.mjs';

let h;
let page;
let label;
let alpha;
let bravo;

// The rows of the xterm on a page, as text.
const rows = (p) => p.evaluate(() => Array.from(document.querySelectorAll('.xterm-rows > div')).map((r) => r.textContent.trim()));

async function typeInTerminal(p, text) {
  await p.locator('.xterm-helper-textarea').focus();
  await p.keyboard.type(text);
  await p.keyboard.press('Enter');
}

describe('logs and terminal', { timeout: 240_000 }, () => {
  before(async () => {
    h = await startConsole();
    ({ page, label } = h);
    alpha = `e2e-lt-alpha-${label}`;
    bravo = `e2e-lt-bravo-${label}`;
    const lbl = ['--label', `berth.test=${label}`];
    docker('run', '-d', '--name', alpha, ...lbl, testImage, 'sh', '-c',
      'echo "alpha one"; echo "alpha error two"; printf "\\033[31malpha three error\\033[0m\\n"; ' +
        'i=0; while true; do i=$((i+1)); echo "alpha tick $i"; sleep 1; done');
    docker('run', '-d', '--name', bravo, ...lbl, testImage, 'sh', '-c',
      'echo "bravo start"; while true; do echo "bravo tick"; sleep 1; done');
    await h.signIn();
  });

  after(async () => {
    await h?.stop();
  });

  it('shows logs with a timestamp column, wrap, search next/previous, and downloads them', async () => {
    await h.open(`/containers/${alpha}?tab=logs`, alpha);
    const log = page.getByRole('log', { name: `Logs of ${alpha}` });
    await log.getByText('alpha three error').waitFor();
    const first = log.locator('.line').first();
    assert.equal(await first.locator('.text').innerText(), 'alpha one');
    assert.match(await first.locator('.ts').innerText(), /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}$/);
    assert.ok(await log.locator('.c31').count(), 'the red line keeps its colour');
    // Timestamps off and on: a column, not part of the text.
    await page.getByLabel('Timestamps').uncheck();
    assert.equal(await log.locator('.ts').count(), 0);
    await page.getByLabel('Timestamps').check();
    await first.locator('.ts').waitFor();
    // Wrap off: long lines stay on one line.
    await page.getByLabel('Wrap lines').uncheck();
    assert.match(await log.getAttribute('class'), /\bnowrap\b/);
    await page.getByLabel('Wrap lines').check();

    // Search: a counter, next and previous.
    await page.getByLabel('Search logs').fill('error');
    await page.getByText('2 matches', { exact: true }).waitFor();
    await page.getByRole('button', { name: 'Next match' }).click();
    await page.getByText('1 of 2', { exact: true }).waitFor();
    assert.match(await log.locator('.line.current').innerText(), /alpha error two/);
    await page.getByRole('button', { name: 'Next match' }).click();
    await page.getByText('2 of 2', { exact: true }).waitFor();
    assert.match(await log.locator('.line.current').innerText(), /alpha three error/);
    await page.getByRole('button', { name: 'Previous match' }).click();
    await page.getByText('1 of 2', { exact: true }).waitFor();
    assert.match(await log.locator('.line.current').innerText(), /alpha error two/);
    await h.checkA11y('container logs with search');

    // Download: a .log file of the lines, each with its full timestamp.
    const [dl] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download' }).click()]);
    assert.match(dl.suggestedFilename(), new RegExp(`^${alpha}-\\d{8}-\\d{6}\\.log$`));
    const text = readFileSync(await dl.path(), 'utf8');
    const lines = text.trimEnd().split('\n');
    assert.match(lines[0], /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z alpha one$/);
    assert.match(lines[2], /Z alpha three error$/, 'no escape codes in the file');
    await page.getByLabel('Search logs').fill('');

    // Full screen and back.
    await page.getByRole('button', { name: 'Full screen' }).click();
    await page.getByRole('region', { name: `Logs of ${alpha}, full screen` }).waitFor();
    await page.keyboard.press('Escape');
    await page.getByRole('button', { name: 'Full screen' }).waitFor();
  });

  it('merges the logs of two containers', async () => {
    await page.getByRole('link', { name: 'With other containers…' }).click();
    await page.getByRole('heading', { level: 1, name: 'Logs' }).waitFor();
    assert.equal(new URL(page.url()).search, `?containers=${alpha}`);
    await page.getByLabel('Filter containers').fill(bravo);
    await page.getByRole('checkbox', { name: new RegExp(bravo) }).check();
    const log = page.getByRole('log', { name: 'Merged logs' });
    await log.locator('.src', { hasText: alpha }).first().waitFor();
    await log.locator('.src', { hasText: bravo }).first().waitFor();
    await log.getByText('bravo start').waitFor();
    await log.getByText('alpha one').waitFor();
    // Each container has its colour.
    const ca = await log.locator('.src', { hasText: alpha }).first().getAttribute('class');
    const cb = await log.locator('.src', { hasText: bravo }).first().getAttribute('class');
    assert.notEqual(ca, cb);
    await page.getByText(/^Live: 2 containers/).waitFor();
    await h.checkA11y('merged logs');
    await h.screenshot('merged-logs');
  });

  it('offers the shells the container has and says when a command cannot start', async () => {
    await h.open(`/containers/${alpha}?tab=terminal`, alpha);
    await page.getByText(`Connected to ${alpha} (/bin/sh)`).waitFor({ timeout: 30_000 });
    const options = await page.getByLabel('Shell').locator('option').allTextContents();
    assert.ok(options.includes('sh (/bin/sh)'), options.join(', '));
    assert.ok(!options.some((o) => /bash/i.test(o)), `bash is not offered on busybox: ${options.join(', ')}`);
    assert.ok(options.includes('Custom command…'));
    await page.getByRole('button', { name: 'Disconnect' }).click();
    await page.getByLabel('Shell').selectOption('custom');
    await page.getByLabel('Command', { exact: true }).fill('no-such-shell');
    await page.getByRole('button', { name: 'Reconnect' }).click();
    await page
      .getByRole('alert')
      .getByText('Terminal: The command “no-such-shell” could not be started: it does not exist in the container.', { exact: false })
      .waitFor({ timeout: 20_000 });
    await h.checkA11y('terminal start failure');
  });

  it('keeps the terminal session while another tab is used', async () => {
    await h.open(`/containers/${alpha}?tab=terminal`, alpha);
    await page.getByText(`Connected to ${alpha} (/bin/sh)`).waitFor({ timeout: 30_000 });
    await page.locator('.xterm-rows').getByText('#').first().waitFor();
    await typeInTerminal(page, `echo before-${label}`);
    await h.waitFor('the first output', 15_000, async () => (await rows(page)).includes(`before-${label}`));

    await page.getByRole('tab', { name: 'Logs' }).click();
    await page.getByRole('log', { name: `Logs of ${alpha}` }).getByText('alpha one').waitFor();
    assert.match(docker('top', alpha, '-o', 'pid,args'), /\/bin\/sh\s*$/m, 'the shell still runs');
    await page.getByRole('tab', { name: 'Terminal' }).click();
    await page.getByText(`Connected to ${alpha} (/bin/sh)`).waitFor();
    assert.ok((await rows(page)).includes(`before-${label}`), 'the earlier output is still there');
    await typeInTerminal(page, `echo after-${label}`);
    await h.waitFor('the session to answer', 15_000, async () => (await rows(page)).includes(`after-${label}`));
    await h.checkA11y('terminal after a tab switch');
  });

  it('opens the standalone terminal page in a new tab', async () => {
    const [popup] = await Promise.all([
      h.context.waitForEvent('page'),
      page.getByRole('link', { name: 'Open in a new tab' }).click(),
    ]);
    await popup.getByRole('heading', { level: 1, name: `Terminal: ${alpha}` }).waitFor({ timeout: 30_000 });
    assert.match(new URL(popup.url()).pathname, /^\/containers\/[0-9a-f]{64}\/terminal$/);
    assert.equal(await popup.getByRole('button', { name: 'Sign out' }).count(), 0, 'the whole window, no top bar');
    await popup.getByText(`Connected to ${alpha} (/bin/sh)`).waitFor({ timeout: 30_000 });
    await popup.locator('.xterm-rows').getByText('#').first().waitFor();
    await typeInTerminal(popup, `echo standalone-${label}`);
    await h.waitFor('the standalone output', 15_000, async () => (await rows(popup)).includes(`standalone-${label}`));
    const box = await popup.locator('.term').boundingBox();
    assert.ok(box.height > 500, `the terminal fills the window (${box.height}px high)`);
    await popup.close();
  });

  it('fits a phone screen', async () => {
    await page.setViewportSize({ width: 375, height: 812 });
    try {
      for (const [p, heading] of [
        [`/logs?containers=${alpha},${bravo}`, 'Logs'],
        [`/containers/${alpha}?tab=logs`, alpha],
        [`/containers/${alpha}?tab=terminal`, alpha],
      ]) {
        await h.open(p, heading);
        await page.getByRole(p.includes('terminal') ? 'group' : 'log').first().waitFor();
        const wide = await page.evaluate(() => document.documentElement.scrollWidth);
        assert.ok(wide <= 375, `${p}: the page is ${wide}px wide on a 375px screen`);
      }
      await h.open(`/containers/${alpha}?tab=logs`, alpha);
      await page.getByRole('log', { name: `Logs of ${alpha}` }).getByText('alpha one').waitFor();
      await h.checkA11y('container logs, phone');
      await h.screenshot('container-logs-phone');
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });

  it('shows a Viewer the logs but no terminal', async () => {
    await h.signInAsNewUser('Viewer');
    await h.open(`/containers/${alpha}`, alpha);
    await page.getByRole('tab', { name: 'Logs' }).click();
    await page.getByRole('log', { name: `Logs of ${alpha}` }).getByText('alpha one').waitFor();
    assert.equal(await page.getByRole('tab', { name: 'Terminal' }).count(), 0);
    await h.open(`/containers/${alpha}/terminal`, `Terminal: ${alpha}`);
    await page.getByRole('alert').getByText(/You may not open a terminal/).waitFor();
    assert.equal(await page.locator('.xterm').count(), 0);
    await h.open(`/logs?containers=${alpha}`, 'Logs');
    await page.getByRole('log', { name: 'Merged logs' }).getByText('alpha one').waitFor();
  });

  it('raised no error in the page', () => {
    assert.deepEqual(h.pageErrors, []);
  });
});
