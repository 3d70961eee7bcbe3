// Browser test of the command palette (harness: lib/harness.mjs): Ctrl+K opens
// it from any screen, it finds a container of the selected environment and a
// screen by fuzzy filter, Enter navigates, Escape closes and focus goes back;
// the top bar's Search button opens it too, and on a phone (375 px) it fits.
// axe on the open palette.
//
// Needs: a Berth binary (BERTH_BIN), the test engine, Chromium (scripts/test-env.sh).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { docker, removeLabelled, startConsole, testImage } from './lib/harness.mjs';

let h;
let page;
let name;

describe('command palette', { timeout: 180_000 }, () => {
  before(async () => {
    h = await startConsole();
    page = h.page;
    name = `pal-${h.label}`;
    docker('run', '-d', '--name', name, '--label', `berth.test=${h.label}`, testImage, 'sleep', '600');
    await h.signIn();
  });

  after(async () => {
    await h?.stop();
    if (h) removeLabelled(h.label);
  });

  it('Ctrl+K finds a container; Enter opens it', async () => {
    await page.keyboard.press('Control+k');
    const dialog = page.getByRole('dialog', { name: 'Go to' });
    const input = dialog.getByRole('combobox');
    await input.waitFor();
    assert.equal(await input.evaluate((e) => e === document.activeElement), true, 'the input has focus');
    await input.fill(name);
    const option = dialog.getByRole('option', { name: new RegExp(name) });
    await option.waitFor({ timeout: 30_000 });
    assert.equal(await option.first().getAttribute('aria-selected'), 'true');
    await h.checkA11y('command palette');
    await input.press('Enter');
    await page.waitForURL((u) => u.pathname.startsWith('/containers/'));
    await page.getByRole('heading', { level: 1, name }).waitFor({ timeout: 30_000 });
    assert.equal(await dialog.count(), 0);
  });

  it('finds a screen with a fuzzy filter and arrow keys; Escape closes and focus returns', async () => {
    const button = page.getByRole('button', { name: 'Search (Ctrl+K)' });
    await button.click();
    const dialog = page.getByRole('dialog', { name: 'Go to' });
    const input = dialog.getByRole('combobox');
    await input.fill('vlms');
    await dialog.getByRole('option', { name: /Volumes/ }).waitFor();
    await input.press('Escape');
    await dialog.waitFor({ state: 'detached' });
    assert.equal(await button.evaluate((e) => e === document.activeElement), true, 'focus back on the Search button');
    await page.keyboard.press('Control+k');
    await input.fill('netw');
    await input.press('ArrowDown');
    await input.press('ArrowUp');
    await input.press('Enter');
    await page.waitForURL(h.base + '/networks');
    await page.getByRole('heading', { level: 1, name: 'Networks' }).waitFor();
  });

  it('is usable on a phone', async () => {
    await page.setViewportSize({ width: 375, height: 740 });
    await page.getByRole('button', { name: 'Search (Ctrl+K)' }).click();
    const dialog = page.getByRole('dialog', { name: 'Go to' });
    await dialog.getByRole('combobox').fill('dash');
    const box = await dialog.boundingBox();
    assert.ok(box && box.x >= 0 && box.x + box.width <= 375, `dialog fits 375 px: ${JSON.stringify(box)}`);
    await dialog.getByRole('option', { name: /Dashboard/ }).click();
    await page.getByRole('heading', { level: 1, name: 'Dashboard' }).waitFor();
    await h.checkA11y('command palette, phone');
    await h.screenshot('palette-phone');
    assert.deepEqual(h.pageErrors, []);
  });
});
