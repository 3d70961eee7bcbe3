// Browser test of the web console: a real berth (bin/berth serve, a fresh data
// directory, the local engine) driven through the system Chromium with
// playwright-core. A first admin is created through the API with the setup
// token from berth's log; the browser then opens /, is sent to sign in, signs
// in, sees the dashboard, opens Containers and finds a container created
// beforehand, reloads there, and signs out. axe-core checks every page and
// fails on serious or critical violations. Screenshots go to screenshots/.
//
// Needs: bin/berth (make build), a Docker engine, Chromium (scripts/test-env.sh
// records it as BERTH_TEST_CHROMIUM) and the test image (BERTH_TEST_IMAGE).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const berthBin = path.join(root, 'bin/berth');
const chromiumPath = process.env.BERTH_TEST_CHROMIUM || '/usr/bin/chromium';
const testImage = process.env.BERTH_TEST_IMAGE || 'berth-test/busybox:1';
const shots = path.join(here, 'screenshots');
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

const label = randomBytes(6).toString('hex'); // value of berth.test on what this run creates
const containerName = `e2e-console-${label}`;
const admin = { username: 'admin', password: `e2e-${label}-password` };

let dataDir;
let server;
let serverLog = '';
let base;
let browser;
let page;
const pageErrors = [];

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function waitFor(what, ms, fn) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}\nberth log:\n${serverLog}`);
    if (server.exitCode !== null) throw new Error(`berth exited (${server.exitCode}) while waiting for ${what}\n${serverLog}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function docker(...args) {
  return execFileSync('docker', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

function removeContainers() {
  const ids = docker('ps', '-aq', '--filter', `label=berth.test=${label}`).split('\n').filter(Boolean);
  if (ids.length) docker('rm', '-f', ...ids);
}

// checkA11y runs axe-core on the page and fails on serious or critical
// violations, naming each rule and the elements it found.
async function checkA11y(name) {
  await page.addScriptTag({ content: axeSource });
  const violations = await page.evaluate(async () => {
    // eslint-disable-next-line no-undef
    const res = await axe.run(document, { resultTypes: ['violations'] });
    return res.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => n.target.join(' ')).slice(0, 5),
    }));
  });
  const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  assert.deepEqual(bad, [], `${name}: axe violations:\n${JSON.stringify(bad, null, 2)}`);
}

async function screenshot(name) {
  await page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: true });
}

describe('web console', { timeout: 120_000 }, () => {
  before(async () => {
    assert.ok(existsSync(berthBin), `${berthBin} is missing: run make build`);
    assert.ok(existsSync(chromiumPath), `${chromiumPath} is missing: run scripts/test-env.sh`);
    mkdirSync(shots, { recursive: true });
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'berth-e2e-'));

    removeContainers();
    docker('run', '-d', '--name', containerName, '--label', `berth.test=${label}`, testImage, 'sleep', '600');

    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    server = spawn(berthBin, ['serve'], {
      env: { ...process.env, DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: String(port), DATABASE_URL: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    server.stdout.on('data', (d) => (serverLog += d));
    server.stderr.on('data', (d) => (serverLog += d));

    // A fresh install prints the setup token with which the first admin is created.
    const token = await waitFor('the setup token in the log', 20_000, async () => /setup_token=([0-9a-f]{32,})/.exec(serverLog)?.[1]);
    await waitFor('GET /api/health', 20_000, async () => (await fetch(`${base}/api/health`)).ok);
    const res = await fetch(`${base}/api/users`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Setup-Token': token },
      body: JSON.stringify(admin),
    });
    assert.equal(res.status, 201, `create the first admin: ${res.status} ${await res.text()}`);

    browser = await chromium.launch({
      executablePath: chromiumPath,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } }); // a fresh profile
    page = await context.newPage();
    page.setDefaultTimeout(15_000);
    page.on('pageerror', (e) => pageErrors.push(String(e)));
  });

  after(async () => {
    await browser?.close().catch(() => {});
    if (server && server.exitCode === null) {
      const exited = new Promise((r) => server.once('exit', r));
      server.kill('SIGTERM');
      const timer = setTimeout(() => server.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    try {
      removeContainers();
    } finally {
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    }
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
    assert.deepEqual(pageErrors, []);
  });
});
