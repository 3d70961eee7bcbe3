// Browser test of the Containers screens (harness: lib/harness.mjs), against a
// real berth and the local engine: create a container through the form with a
// label, start it and see it running in the list; run a command in its
// terminal (xterm.js over the exec WebSocket); follow the logs of a container
// that prints a coloured counter and see new lines arrive; see its statistics;
// stop two containers with a bulk action; remove one after confirmation.
// axe-core checks each screen; screenshots go to screenshots/.
//
// Everything created carries the label berth.test=<run label> (and a name
// containing it); stop() removes it.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { docker, startConsole, testImage } from './lib/harness.mjs';

let h;
let page;
let label;
let formName;
let formId;
let logsName;
let bulkA;
let bulkB;

const state = (name) => docker('inspect', '-f', '{{.State.Status}}', name);

describe('containers screens', { timeout: 240_000 }, () => {
  before(async () => {
    h = await startConsole();
    ({ page, label } = h);
    formName = `e2e-form-${label}`;
    logsName = `e2e-logs-${label}`;
    bulkA = `e2e-bulk-a-${label}`;
    bulkB = `e2e-bulk-b-${label}`;
    const lbl = ['--label', `berth.test=${label}`];
    // A counter every second, green (SGR 32) so that the colours show.
    docker('run', '-d', '--name', logsName, ...lbl, testImage, 'sh', '-c',
      'i=0; while true; do i=$((i+1)); printf "\\033[32mtick %d\\033[0m\\n" $i; sleep 1; done');
    for (const n of [bulkA, bulkB]) docker('run', '-d', '--name', n, ...lbl, testImage, 'sleep', '600');
    await h.signIn();
  });

  after(async () => {
    await h?.stop();
  });

  it('creates a container through the form and starts it', async () => {
    await h.open('/containers', 'Containers');
    await page.getByRole('link', { name: 'New container' }).click();
    await page.getByRole('heading', { level: 1, name: 'New container' }).waitFor();
    assert.equal(new URL(page.url()).pathname, '/containers/new');

    // Submitting empty explains what is missing.
    await page.getByRole('button', { name: 'Create container' }).click();
    await page.getByRole('alert').getByText('Image is required.').waitFor();

    await page.getByLabel(/^Image/).fill(testImage);
    await page.getByLabel('Name', { exact: true }).fill(formName);
    await page.getByLabel('Command', { exact: true }).fill('sleep 600');
    await page.getByRole('button', { name: 'Add label' }).click();
    await page.getByLabel('Label 1 name').fill('berth.test');
    await page.getByLabel('Label 1 value').fill(label);
    await page.getByLabel('Start after create').uncheck();
    await h.checkA11y('container create');
    await h.screenshot('container-create');

    await page.getByRole('button', { name: 'Create container' }).click();
    await page.waitForURL((u) => /^\/containers\/[0-9a-f]{64}$/.test(u.pathname));
    formId = new URL(page.url()).pathname.split('/').pop();
    await page.getByRole('heading', { level: 1, name: formName }).waitFor();
    const actions = page.getByRole('group', { name: 'Container actions' });
    await actions.getByRole('button', { name: 'Start', exact: true }).waitFor();
    assert.equal(state(formName), 'created');
    assert.equal(docker('inspect', '-f', '{{index .Config.Labels "berth.test"}}', formName), label);
    assert.equal(docker('inspect', '-f', '{{json .Config.Cmd}}', formName), '["sleep","600"]');

    await actions.getByRole('button', { name: 'Start', exact: true }).click();
    await actions.getByRole('button', { name: 'Stop', exact: true }).waitFor();
    assert.equal(state(formName), 'running');
  });

  it('shows it running in the list', async () => {
    await h.open('/containers', 'Containers');
    await page.getByLabel('Filter').fill(label);
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: formName, exact: true }) });
    await row.waitFor();
    await row.getByText('running', { exact: true }).waitFor();
    // CPU and memory arrive from the stats stream for running containers.
    await row.getByText(/ (B|KiB|MiB)$/).waitFor({ timeout: 30_000 });
    await h.checkA11y('containers');
    await h.screenshot('containers');
  });

  it('runs a command in the terminal', async () => {
    await h.open(`/containers/${formId}?tab=terminal`, formName);
    await page.getByText(`Connected to ${formName} (/bin/sh)`).waitFor({ timeout: 30_000 });
    await page.locator('.xterm-rows').getByText('#').first().waitFor(); // the prompt
    await page.locator('.xterm-helper-textarea').focus();
    await page.keyboard.type(`echo hello-${label}`);
    await page.keyboard.press('Enter');
    // The command line echoes the text after the prompt; the output is a row of its own.
    await h.waitFor('the echo output in the terminal', 15_000, async () =>
      page.evaluate(
        (want) => Array.from(document.querySelectorAll('.xterm-rows > div')).some((r) => r.textContent.trim() === want),
        `hello-${label}`,
      ),
    );
    await h.checkA11y('container terminal');
    await h.screenshot('container-terminal');

    // Another tab keeps the shell; leaving the container's page ends it.
    await page.getByRole('tab', { name: 'Overview' }).click();
    assert.match(docker('top', formName, '-o', 'pid,args'), /\/bin\/sh/);
    await h.open('/containers', 'Containers');
    await h.waitFor('the exec session to end', 15_000, async () => {
      const top = docker('top', formName, '-o', 'pid,args');
      return !/\/bin\/sh/.test(top);
    });
  });

  it('follows the logs live, with colours and search', async () => {
    await h.open('/containers', 'Containers');
    // The list is windowed: on a busy engine the row may be out of view until filtered.
    await page.getByLabel('Filter').fill(logsName);
    await page.getByRole('link', { name: logsName, exact: true }).click();
    await page.getByRole('heading', { level: 1, name: logsName }).waitFor();
    await page.getByRole('tab', { name: 'Logs' }).click();
    const log = page.getByRole('log', { name: `Logs of ${logsName}` });
    await log.getByText(/^tick \d+$/).first().waitFor();
    await page.getByText('Live', { exact: true }).waitFor();
    const last = async () =>
      Math.max(...(await log.locator('.line').allTextContents()).map((t) => Number(/tick (\d+)/.exec(t)?.[1] ?? 0)));
    const first = await last();
    await h.waitFor('a new log line', 15_000, async () => (await last()) >= first + 2);
    // SGR 32 is rendered as a colour, the escape codes are gone.
    assert.ok(await log.locator('.c32').count(), 'green lines are coloured');
    assert.doesNotMatch(await log.innerText(), /\[32m|\[0m/);

    await page.getByLabel('Search logs').fill('tick 1');
    await log.locator('mark').first().waitFor();
    await h.checkA11y('container logs');
    await h.screenshot('container-logs');

    // The colours stay readable in the dark theme.
    await page.getByRole('button', { name: 'Switch to dark theme' }).click();
    await page.getByRole('button', { name: 'Switch to light theme' }).waitFor();
    await h.checkA11y('container logs, dark');
    await page.getByRole('button', { name: 'Switch to light theme' }).click();
    await page.getByLabel('Search logs').fill('');
  });

  it('draws the statistics', async () => {
    await page.getByRole('tab', { name: 'Stats' }).click();
    await page.getByRole('img', { name: /^CPU usage: CPU \d/ }).waitFor({ timeout: 30_000 });
    await h.waitFor('three samples', 30_000, async () => /^([3-9]|\d\d+) samples/.test(await page.locator('.note').innerText()));
    await page.getByRole('img', { name: /^Network traffic per second: Received \d/ }).waitFor();
    await h.checkA11y('container stats');
    await h.screenshot('container-stats');
    // Reloading the state (every 10 s) does not restart the sampling.
    const before = Number(/^(\d+)/.exec(await page.locator('.note').innerText())[1]);
    await page.waitForTimeout(11_000);
    const later = Number(/^(\d+)/.exec(await page.locator('.note').innerText())[1]);
    assert.ok(later > before, `samples went from ${before} to ${later}`);
  });

  it('fits a phone screen', async () => {
    const phone = await h.browser.newContext({ viewport: { width: 390, height: 844 }, storageState: await h.context.storageState() });
    const p = await phone.newPage();
    p.on('pageerror', (e) => h.pageErrors.push(String(e)));
    try {
      const logsId = docker('inspect', '-f', '{{.Id}}', logsName);
      for (const [path, heading] of [
        ['/containers', 'Containers'],
        ['/containers/new', 'New container'],
        [`/containers/${logsId}?tab=logs`, logsName],
        [`/containers/${logsId}?tab=stats`, logsName],
        [`/containers/${logsId}?tab=inspect`, logsName],
      ]) {
        await p.goto(h.base + path);
        await p.getByRole('heading', { level: 1, name: heading }).waitFor();
        if (path === '/containers') await p.getByRole('table').waitFor();
        else if (path.includes('tab=')) await p.getByRole('tabpanel').waitFor();
        const overflow = await p.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        assert.ok(overflow <= 1, `${path} scrolls sideways on a phone by ${overflow}px`);
      }
      await p.screenshot({ path: new URL('./screenshots/container-phone.png', import.meta.url).pathname, fullPage: true });
    } finally {
      await phone.close();
    }
  });

  it('stops two containers with a bulk action', async () => {
    await h.open('/containers', 'Containers');
    await page.getByLabel('Filter').fill(`e2e-bulk ${label}`);
    await page.getByRole('link', { name: bulkA, exact: true }).waitFor();
    await page.getByRole('link', { name: bulkB, exact: true }).waitFor();
    assert.equal(await page.getByRole('table').getByRole('link').filter({ hasText: 'e2e-bulk' }).count(), 2);
    await page.getByRole('checkbox', { name: 'Select all shown containers' }).check();
    const toolbar = page.getByRole('toolbar', { name: 'Selected containers' });
    await toolbar.getByText('2', { exact: true }).waitFor();
    await toolbar.getByRole('button', { name: 'Stop', exact: true }).click();
    await page.getByRole('region', { name: 'Stop: 2 done' }).waitFor({ timeout: 60_000 });
    assert.equal(state(bulkA), 'exited');
    assert.equal(state(bulkB), 'exited');
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: bulkA, exact: true }) });
    await row.getByText('exited', { exact: true }).waitFor();
  });

  it('removes a container after confirmation', async () => {
    await page.getByRole('button', { name: `Remove ${bulkA}` }).click();
    const dialog = page.getByRole('dialog', { name: `Remove ${bulkA}?` });
    await dialog.waitFor();
    await h.checkA11y('remove dialog');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    assert.equal(state(bulkA), 'exited', 'Cancel keeps it');

    await page.getByRole('button', { name: `Remove ${bulkA}` }).click();
    await dialog.getByRole('button', { name: 'Remove', exact: true }).click();
    await page.getByRole('link', { name: bulkA, exact: true }).waitFor({ state: 'detached' });
    assert.equal(docker('ps', '-aq', '--filter', `name=^${bulkA}$`), '');
    await page.getByRole('link', { name: bulkB, exact: true }).waitFor();
  });

  it('raised no error in the page', () => {
    assert.deepEqual(h.pageErrors, []);
  });
});
