// Browser test of the API reference (harness: lib/harness.mjs): the console's
// top bar links to /api/docs, whose page (the console build's docs.html with
// the vendored Swagger UI) reads /api/openapi.json with the browser's session
// and lists the operations of Berth's route table; signed out, the page says
// to sign in instead. A screenshot goes to screenshots/.
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

  it('the top bar links to the page, which lists the operations', async () => {
    await h.signIn();
    await page.getByRole('banner').getByRole('link', { name: 'API' }).click();
    await page.waitForURL(h.base + '/api/docs');
    assert.equal(await page.title(), 'Berth API reference');
    // Swagger UI renders the document (a few hundred operations: allow a
    // loaded machine time).
    await page.locator('.swagger-ui .info .title', { hasText: 'Berth API' }).waitFor({ timeout: 60_000 });
    // The served document describes every route (the Go tests compare it
    // with the route table); the page lists them by tag.
    const spec = await page.evaluate(async () => (await fetch('/api/openapi.json')).json());
    const ops = Object.values(spec.paths).reduce((n, item) => n + Object.keys(item).length, 0);
    assert.ok(ops > 100, `the document has ${ops} operations`);
    await page.getByPlaceholder('Filter by tag').fill('containers');
    const containers = page.locator('.opblock-summary-path[data-path="/api/containers"]');
    await containers.first().waitFor({ timeout: 30_000 });
    assert.equal(await containers.count(), 2, 'GET and POST /api/containers');
    // An operation opens on its permission (the x-berth-permission extension).
    await page.locator('.opblock-summary-path[data-path="/api/containers/{id}/logs"]').first().click();
    await page.getByText('containers:logs').first().waitFor();
    await h.checkA11y('api docs');
    assert.deepEqual(h.pageErrors, []);
    await h.screenshot('apidocs');
  });
});
