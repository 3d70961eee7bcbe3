// Every screen that web/src/lib/areas.json lists for an area of the API's route
// table opens in Chromium (a reload of its path: the server's fallback to
// index.html), shows its heading, passes axe-core, raises no page error and
// does not scroll sideways on a phone. server/internal/api/console_test.go
// checks that areas.json covers every area of the route table.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { root, startConsole } from './lib/harness.mjs';

const areas = JSON.parse(readFileSync(path.join(root, 'web/src/lib/areas.json'), 'utf8'));
const paths = [...new Set(Object.values(areas.screens).flat())].filter((p) => p !== '/login').sort();

describe('every area of the route table has a screen', { timeout: 300_000 }, () => {
  let h;
  before(async () => {
    h = await startConsole();
    await h.signIn();
  });
  after(async () => {
    await h?.stop();
  });

  for (const p of paths) {
    it(`opens ${p}`, async () => {
      const errors = h.pageErrors.length;
      await h.open(p);
      assert.equal(new URL(h.page.url()).pathname, p, `${p} stays where it was asked`);
      assert.equal(await h.page.getByRole('heading', { level: 1, name: 'Page not found' }).count(), 0);
      await h.checkA11y(p);
      await h.screenshot(`area${p.replaceAll('/', '-') || '-root'}`);
      assert.deepEqual(h.pageErrors.slice(errors), []);
    });
  }

  // What a screen loads after its heading counts, and so does what it folds
  // away: every <details> is opened, the loading notes are waited out, and
  // the page is measured several times over a second.
  async function widestOverflow(p) {
    await h.page
      .getByText('Loading…')
      .first()
      .waitFor({ state: 'detached', timeout: 15_000 })
      .catch(() => {});
    let worst = 0;
    for (let i = 0; i < 5; i++) {
      const overflow = await h.page.evaluate(() => {
        for (const d of document.querySelectorAll('details')) d.open = true;
        return document.documentElement.scrollWidth - document.documentElement.clientWidth;
      });
      worst = Math.max(worst, overflow);
      await h.page.waitForTimeout(250);
    }
    return worst;
  }

  it('fits a phone screen on every one', async () => {
    await h.page.setViewportSize({ width: 390, height: 844 });
    for (const p of paths) {
      await h.open(p);
      const overflow = await widestOverflow(p);
      assert.ok(overflow <= 1, `${p} scrolls sideways on a phone by ${overflow}px`);
    }
    await h.screenshot('phone-last');
  });
});
