// Browser test of the API reference (harness: lib/harness.mjs): the console's
// top bar links to /api/docs, whose page (the console build's docs.html)
// reads /api/openapi.json with the browser's session and lists the operations
// of Berth's route table by tag within 1.5 s (printed); the vendored Swagger UI
// loads only on "Try it". Signed out, the page says to sign in instead. A screenshot goes to screenshots/.
//
// Needs: a Berth binary (BERTH_BIN) serving a console build that has
// docs.html (WEB_DIR or the embedded one), Chromium (scripts/test-env.sh).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { startConsole } from './lib/harness.mjs';

let h;
let page;

describe('API reference', { timeout: 120_000 }, () => {
  before(async () => {
    h = await startConsole();
    page = h.page;
  });

  after(async () => {
    await h?.stop();
  });

  it('signed out, the page asks to sign in', async () => {
    await page.goto(h.base + '/api/docs');
    await page.getByRole('status').getByText('Sign in to Berth to read its API reference.').waitFor();
    assert.equal(await page.getByRole('link', { name: 'Sign in' }).getAttribute('href'), '/');
    await h.checkA11y('api docs, signed out');
  });

  it('the top bar links to the page, which lists the operations within 1.5 s', async () => {
    await h.signIn();
    const started = Date.now();
    await page.getByRole('banner').getByRole('link', { name: 'API' }).click();
    await page.waitForURL(h.base + '/api/docs');
    assert.equal(await page.title(), 'Berth API reference');
    // The light list (no Swagger UI bundle on first view) shows the
    // operations by tag.
    await page.locator('summary[data-path="/api/containers"]').first().waitFor({ timeout: 30_000 });
    const ms = Date.now() - started;
    console.log(`api docs: first operation visible ${ms} ms after navigation`);
    assert.ok(ms < 1500, `first operation visible after ${ms} ms (budget 1,500 ms)`);
    await page.getByRole('heading', { level: 1, name: /Berth API/ }).waitFor();
    // The served document describes every route (the Go tests compare it
    // with the route table); the page lists them all by tag.
    const spec = await page.evaluate(async () => (await fetch('/api/openapi.json')).json());
    const ops = Object.values(spec.paths).reduce((n, item) => n + Object.keys(item).length, 0);
    assert.ok(ops > 100, `the document has ${ops} operations`);
    assert.equal(await page.locator('details.op').count(), ops);
    // No Swagger UI yet: the page's first view loads only its own script.
    const scripts = await page.evaluate(() => performance.getEntriesByType('resource').map((e) => e.name).filter((n) => n.endsWith('.js')));
    assert.ok(!scripts.some((n) => /swagger/i.test(n)), `scripts loaded: ${scripts.join(', ')}`);
    await page.getByLabel('Filter operations').fill('/api/containers get');
    await page.getByRole('status').getByText(/ of \d+ operations/).waitFor();
    const containers = page.locator('summary[data-path="/api/containers"]:visible');
    assert.equal(await containers.count(), 1, 'GET /api/containers');
    await page.getByLabel('Filter operations').fill('containers logs');
    // An operation opens on its permission (the x-berth-permission extension).
    await page.locator('summary[data-path="/api/containers/{id}/logs"]').click();
    const op = page.locator('details.op[open]');
    await op.getByText('containers:logs').waitFor();
    await op.getByRole('columnheader', { name: 'Name' }).waitFor();
    await op.getByText('tail', { exact: true }).waitFor();
    await h.checkA11y('api docs');
    await h.screenshot('apidocs');
    // Phone: the list fits 375 px without sideways scrolling.
    await page.setViewportSize({ width: 375, height: 740 });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 1, `page scrolls sideways by ${overflow} px at 375 px`);
    await h.checkA11y('api docs, phone');
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it('"Try it" loads Swagger UI on demand', async () => {
    await page.getByLabel('Filter operations').fill('');
    await page.getByRole('button', { name: 'Try it (Swagger UI)' }).click();
    await page.locator('.swagger-ui .info .title', { hasText: 'Berth API' }).waitFor({ timeout: 60_000 });
    await page.getByPlaceholder('Filter by tag').fill('containers');
    const containers = page.locator('.opblock-summary-path[data-path="/api/containers"]');
    await containers.first().waitFor({ timeout: 30_000 });
    assert.equal(await containers.count(), 2, 'GET and POST /api/containers');
    await h.checkA11y('api docs, Swagger UI');
    assert.deepEqual(h.pageErrors, []);
  });
});
