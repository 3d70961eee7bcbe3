// Browser test of the web console's sign-in path (harness: lib/harness.mjs).
// The browser opens /, is sent to sign in, signs
// in, sees the dashboard, opens Containers and finds a container created
// beforehand, reloads there, and signs out. axe-core checks every page and
// fails on serious or critical violations. Screenshots go to screenshots/.
//
// Needs: bin/berth (make build), a Docker engine, Chromium (scripts/test-env.sh
// records it as BERTH_TEST_CHROMIUM) and the test image (BERTH_TEST_IMAGE).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { docker, startConsole, testImage } from './lib/harness.mjs';

let h;
let page;
let base;
let admin;
let containerName;

async function checkA11y(name) {
  await h.checkA11y(name);
}

async function screenshot(name) {
  await h.screenshot(name);
}

describe('web console', { timeout: 120_000 }, () => {
  before(async () => {
    h = await startConsole();
    ({ page, base, admin } = h);
    containerName = `e2e-console-${h.label}`;
    docker('run', '-d', '--name', containerName, '--label', `berth.test=${h.label}`, testImage, 'sleep', '600');
  });

  after(async () => {
    await h?.stop();
  });

  it('serves the console, with hashed assets cached for good', async () => {
    const res = await fetch(`${base}/containers/some-id`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type'), /^text\/html/);
    const html = await res.text();
    const asset = /(?:src|href)="(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    assert.ok(asset, `the built console (not the placeholder) is embedded: no /assets/*.js in\n${html}`);
    const js = await fetch(base + asset);
    assert.equal(js.status, 200);
    assert.match(js.headers.get('content-type'), /^text\/javascript/);
    assert.equal(js.headers.get('cache-control'), 'public, max-age=31536000, immutable');
  });

  it('sends a visitor to the sign-in page', async () => {
    await page.goto(base + '/');
    await page.waitForURL((u) => u.pathname === '/login');
    await page.getByLabel('Username', { exact: true }).waitFor();
    await checkA11y('login');
    await screenshot('login');
  });

  it('refuses a wrong password with an alert', async () => {
    await page.getByLabel('Username', { exact: true }).fill(admin.username);
    await page.getByLabel('Password', { exact: true }).fill('not-the-password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
    assert.equal(new URL(page.url()).pathname, '/login');
    await checkA11y('login with error');
  });

  it('signs in and shows the dashboard', async () => {
    await page.getByLabel('Password', { exact: true }).fill(admin.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Dashboard' }).waitFor();
    assert.equal(new URL(page.url()).pathname, '/');
    await page.getByLabel('Environment', { exact: true }).waitFor();
    await checkA11y('dashboard');
    await screenshot('dashboard');
  });

  it('lists the containers, also after a reload', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Containers', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Containers' }).waitFor();
    assert.equal(new URL(page.url()).pathname, '/containers');
    const row = page.getByRole('table').getByText(containerName, { exact: true }).first();
    await row.waitFor();
    await checkA11y('containers');
    await screenshot('containers');

    await page.reload(); // the server answers /containers with the console
    await page.getByRole('heading', { level: 1, name: 'Containers' }).waitFor();
    await page.getByRole('table').getByText(containerName, { exact: true }).first().waitFor();
  });

  it('signs out', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL((u) => u.pathname === '/login');
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    const res = await page.evaluate(async () => (await fetch('/api/containers?env=1')).status);
    assert.equal(res, 401, 'the session is gone');
    await checkA11y('signed out');
  });

  it('raised no error in the page', () => {
    assert.deepEqual(h.pageErrors, []);
  });
});
