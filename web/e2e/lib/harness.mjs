// The harness of the console's browser tests: a real berth (bin/berth serve, a
// fresh data directory, the local engine) driven through the system Chromium
// with playwright-core. startConsole() starts both, creates the first admin
// through the API with the setup token from berth's log, and returns helpers;
// stop() removes everything the run created (the server, its data directory,
// the containers, volumes, networks and images labelled berth.test=<label>).
//
// Needs: bin/berth (make build), a Docker engine, Chromium (scripts/test-env.sh
// records it as BERTH_TEST_CHROMIUM) and the test image (BERTH_TEST_IMAGE).
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
export const root = path.resolve(here, '../../..');
// BERTH_BIN: another berth binary; WEB_DIR (passed on to berth) serves a console build from a directory.
const berthBin = process.env.BERTH_BIN || path.join(root, 'bin/berth');
const chromiumPath = process.env.BERTH_TEST_CHROMIUM || '/usr/bin/chromium';
export const testImage = process.env.BERTH_TEST_IMAGE || 'berth-test/busybox:1';
const shots = path.join(here, '..', 'screenshots');
const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** Runs the docker CLI against the test engine and returns its trimmed output. */
export function docker(...args) {
  return execFileSync('docker', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

function lines(s) {
  return s.split('\n').filter(Boolean);
}

/** Removes every container, volume, network and image labelled berth.test=<label>. */
export function removeLabelled(label) {
  const f = ['--filter', `label=berth.test=${label}`];
  const ids = lines(docker('ps', '-aq', ...f));
  if (ids.length) docker('rm', '-f', '-v', ...ids);
  const vols = lines(docker('volume', 'ls', '-q', ...f));
  if (vols.length) docker('volume', 'rm', '-f', ...vols);
  const nets = lines(docker('network', 'ls', '-q', ...f));
  if (nets.length) docker('network', 'rm', ...nets);
  const imgs = lines(docker('images', '-q', ...f));
  if (imgs.length) docker('rmi', '-f', ...new Set(imgs));
}

/**
 * Starts berth and Chromium. Options: viewport ({width, height}), env (extra
 * variables for berth). The returned object has base (the server's URL),
 * label (berth.test value of this run), admin ({username, password}), page,
 * context, browser, pageErrors, and the helpers below.
 */
/** The environment that points a console's scanners at the test's pinned Grype and Trivy and their offline databases
 * (scripts/test-env.sh provides them). */
export function scannerEnv() {
  const env = process.env;
  return {
    GRYPE_PATH: env.BERTH_TEST_GRYPE,
    TRIVY_PATH: env.BERTH_TEST_TRIVY,
    GRYPE_DB_DIR: env.BERTH_TEST_GRYPE_DB,
    TRIVY_CACHE_DIR: env.BERTH_TEST_TRIVY_CACHE,
    SCANNER_OFFLINE: 'true',
  };
}

export async function startConsole(opts = {}) {
  assert.ok(existsSync(berthBin), `${berthBin} is missing: run make build`);
  assert.ok(existsSync(chromiumPath), `${chromiumPath} is missing: run scripts/test-env.sh`);
  mkdirSync(shots, { recursive: true });
  const label = randomBytes(6).toString('hex');
  const admin = { username: 'admin', password: `e2e-${label}-password` };
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'berth-e2e-'));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  let serverLog = '';
  const server = spawn(berthBin, ['serve'], {
    // The test services (LDAP, the OpenID provider, git, the registry) listen on loopback, which Berth's outbound
    // policy refuses by default.
    env: { ...process.env, DATA_DIR: dataDir, HOST: '127.0.0.1', PORT: String(port), DATABASE_URL: '',
      OUTBOUND_ALLOW: 'private,loopback', ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  server.stdout.on('data', (d) => (serverLog += d));
  server.stderr.on('data', (d) => (serverLog += d));

  const h = {
    base,
    label,
    admin,
    dataDir,
    server,
    pageErrors: [],
    log: () => serverLog,
    browser: null,
    context: null,
    page: null,
    cookie: '',
  };

  h.waitFor = async (what, ms, fn) => {
    const deadline = Date.now() + ms;
    for (;;) {
      const v = await fn().catch(() => undefined);
      if (v) return v;
      if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}\nberth log:\n${serverLog}`);
      if (server.exitCode !== null) throw new Error(`berth exited (${server.exitCode}) while waiting for ${what}\n${serverLog}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };

  // A fresh install prints the setup token with which the first admin is created.
  const token = await h.waitFor('the setup token in the log', 20_000, async () => /setup_token=([0-9a-f]{32,})/.exec(serverLog)?.[1]);
  await h.waitFor('GET /api/health', 20_000, async () => (await fetch(`${base}/api/health`)).ok);
  const res = await fetch(`${base}/api/users`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Setup-Token': token },
    body: JSON.stringify(admin),
  });
  assert.equal(res.status, 201, `create the first admin: ${res.status} ${await res.text()}`);

  /**
   * Calls the API as the admin (a session of its own, not the browser's) and
   * returns {status, body}; body is parsed JSON when the answer is JSON.
   */
  h.api = async (method, p, body) => {
    if (!h.cookie) {
      const r = await fetch(`${base}/api/auth/login`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(admin),
      });
      assert.equal(r.status, 200, `API sign-in: ${r.status}`);
      h.cookie = r.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
    }
    const r = await fetch(base + p, {
      method,
      headers: { Cookie: h.cookie, Origin: base, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    let parsed = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON
    }
    return { status: r.status, body: parsed };
  };

  h.browser = await chromium.launch({
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
  h.context = await h.browser.newContext({ viewport: opts.viewport ?? { width: 1280, height: 800 } }); // a fresh profile
  h.page = await h.context.newPage();
  h.page.setDefaultTimeout(15_000);
  h.page.on('pageerror', (e) => h.pageErrors.push(String(e)));
  // Requests in flight other than event streams (which stay open): h.settled() waits for none.
  const inFlight = new Set();
  const isStream = (r) => /text\/event-stream/.test(r.headers().accept ?? '') || r.resourceType() === 'eventsource' || r.resourceType() === 'websocket';
  h.page.on('request', (r) => {
    if (!isStream(r)) inFlight.add(r);
  });
  for (const ev of ['requestfinished', 'requestfailed']) h.page.on(ev, (r) => inFlight.delete(r));
  // The last failures the page saw (a request the browser gave up on, with its reason; an answer >= 400 to a
  // static file; a console error): h.open prints them when a screen does not come, so that a failed chunk or
  // stylesheet load says whether the server answered it and how.
  const failures = [];
  const failure = (line) => {
    failures.push(`${new Date().toISOString().slice(11, 23)} ${line}`);
    if (failures.length > 30) failures.shift();
  };
  h.page.on('requestfailed', (r) => {
    if (!isStream(r)) failure(`request failed: ${r.method()} ${r.url()}: ${r.failure()?.errorText ?? '?'}`);
  });
  h.page.on('response', (r) => {
    if (r.status() >= 400 && !new URL(r.url()).pathname.startsWith('/api/')) failure(`answer ${r.status()}: ${r.url()}`);
  });
  h.page.on('console', (m) => {
    if (m.type() === 'error' || /preload/i.test(m.text())) failure(`console ${m.type()}: ${m.text().slice(0, 300)}`);
  });
  /** Waits until the page has had no request in flight (event streams aside) for quietMs, at most maxMs:
   * unlike Playwright's networkidle it is not held up by a screen's open event stream. */
  h.settled = async (quietMs = 400, maxMs = 10_000) => {
    const end = Date.now() + maxMs;
    let quietSince = Date.now();
    while (Date.now() < end) {
      if (inFlight.size > 0) quietSince = Date.now();
      else if (Date.now() - quietSince >= quietMs) return;
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  // A resource or script the Content-Security-Policy refused is an error of the page too: the console must work
  // under the policy every answer carries (no inline script, no eval).
  h.page.on('console', (m) => {
    if (m.type() === 'error' && /Content Security Policy/i.test(m.text())) h.pageErrors.push('CSP: ' + m.text());
  });

  /** Signs in through the sign-in page and waits for the dashboard. */
  h.signIn = async () => {
    const page = h.page;
    await page.goto(base + '/login');
    await page.getByLabel('Username', { exact: true }).fill(admin.username);
    await page.getByLabel('Password', { exact: true }).fill(admin.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Dashboard' }).waitFor();
  };

  /** Creates a user with the role roleName (through the API, as the admin), signs out of the console and signs in
   * as that user, waiting for the dashboard. Returns the user's {id, username, password}. */
  h.signInAsNewUser = async (roleName, username = `${roleName.toLowerCase()}-${label}`) => {
    const password = `e2e-${label}-${roleName.toLowerCase()}-pw`;
    const created = await h.api('POST', '/api/users', { username, password });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const roles = await h.api('GET', '/api/roles');
    const role = roles.body.find((r) => r.name === roleName);
    assert.ok(role, `no role named ${roleName}`);
    const assigned = await h.api('POST', `/api/users/${created.body.id}/roles`, { roleId: role.id });
    assert.ok(assigned.status < 300, JSON.stringify(assigned.body));
    const page = h.page;
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL((u) => u.pathname === '/login');
    await page.getByLabel('Username', { exact: true }).fill(username);
    await page.getByLabel('Password', { exact: true }).fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Dashboard' }).waitFor();
    return { id: created.body.id, username, password };
  };

  /** Opens a path of the console and waits for its h1 (name: string or RegExp, optional). A
   * screen's first load also fetches its code, which a busy machine can take a while over. */
  h.open = async (p, heading) => {
    const h1 = heading === undefined ? h.page.getByRole('heading', { level: 1 }) : h.page.getByRole('heading', { level: 1, name: heading });
    // What the page showed and what it was still waiting for: a time-out alone tells nothing.
    const state = async () => {
      const shown = await h.page.evaluate(() => document.body?.innerText?.slice(0, 600) ?? '').catch(() => '?');
      const pending = [...inFlight].map((r) => `${r.method()} ${r.url()}`).join(', ');
      return `page ${h.page.url()} showed: ${JSON.stringify(shown)}; requests in flight: ${pending || 'none'}; last failures: ${failures.length ? '\n    ' + failures.join('\n    ') : 'none'}`;
    };
    await h.page.goto(base + p);
    try {
      await h1.first().waitFor({ timeout: 30_000 });
      return;
    } catch {
      // KNOWN OPEN BUG (issue 22 notes): now and then the first page opened after signing in never shows
      // its screen, while a second load of the same address does. Said loudly, loaded once more; a second
      // failure fails the test.
      console.error(`h.open(${p}): no heading after 30 s, loading it again. ${await state()}\nberth log (last 3000 chars):\n${serverLog.slice(-3000)}`);
    }
    await h.page.goto(base + p);
    try {
      await h1.first().waitFor({ timeout: 30_000 });
    } catch (err) {
      const more = `\n  ${await state()}`;
      err.message += more;
      if (err.stack) err.stack = err.stack.replace(/\n/, `${more}\n`);
      throw err;
    }
  };

  // Runs axe-core on the page and fails on serious or critical violations,
  // naming each rule and the elements it found.
  h.checkA11y = async (name) => {
    // Evaluated through the DevTools protocol: a script tag would be refused by the console's CSP (no inline script).
    await h.page.evaluate(axeSource);
    const violations = await h.page.evaluate(async () => {
      // eslint-disable-next-line no-undef
      const r = await axe.run(document, { resultTypes: ['violations'] });
      return r.violations.map((v) => ({
        id: v.id,
        impact: v.impact,
        help: v.help,
        nodes: v.nodes.map((n) => n.target.join(' ')).slice(0, 5),
      }));
    });
    const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    assert.deepEqual(bad, [], `${name}: axe violations:\n${JSON.stringify(bad, null, 2)}`);
  };

  h.screenshot = async (name) => {
    await h.page.screenshot({ path: path.join(shots, `${name}.png`), fullPage: true });
  };

  h.stop = async () => {
    await h.browser?.close().catch(() => {});
    if (server.exitCode === null) {
      const exited = new Promise((r) => server.once('exit', r));
      server.kill('SIGTERM');
      const timer = setTimeout(() => server.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    try {
      removeLabelled(label);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  };

  return h;
}
