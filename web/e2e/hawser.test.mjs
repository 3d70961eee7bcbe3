// Browser test of the Hawser environments (compatibility with the agent of
// the application Berth replaces; harness: lib/harness.mjs) against a real
// berth and the local engine. A hawser-standard environment points at a
// stand-in for Hawser's standard mode written here from its protocol facts
// (COMPAT.md, section Hawser: the Docker API behind X-Hawser-Token, plus
// /_hawser/info and /_hawser/health), a small proxy to the local engine's
// socket: Berth lists the engine's containers through it, a labelled
// container of this test among them; with the proxy stopped the environment
// says it is offline. A hawser-edge environment gets its token shown once,
// listed by its prefix and revoked; with no agent dialled in it says "Agent
// not connected". A viewer sees the environments with no control that
// changes them.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { docker, freePort, removeLabelled, startConsole, testImage } from './lib/harness.mjs';

let h;
let page;
let label;
let proxy;
let proxyPort;
let hawserToken;
let standardId;
let edgeId;
let ctr;
const socketPath = (process.env.DOCKER_HOST || 'unix:///var/run/docker.sock').replace(/^unix:\/\//, '');

/** Hawser's standard mode in miniature: token checked, its own routes, the rest to the engine. */
function startHawserStandard(token, port) {
  const server = http.createServer((req, res) => {
    if (req.headers['x-hawser-token'] !== token) {
      res.writeHead(401, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ error: 'Unauthorized' }));
      return;
    }
    if (req.url.startsWith('/_hawser/health')) {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ status: 'healthy' }));
      return;
    }
    if (req.url.startsWith('/_hawser/info')) {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ agentId: `e2e-${label}`, agentName: 'e2e-hawser', dockerVersion: '', hawserVersion: '0.0.0-e2e', mode: 'standard', uptime: 1 }));
      return;
    }
    const headers = { ...req.headers };
    delete headers['x-hawser-token'];
    const up = http.request({ socketPath, path: req.url, method: req.method, headers }, (r) => {
      res.writeHead(r.statusCode, r.headers);
      r.pipe(res);
    });
    up.on('error', (e) => {
      res.writeHead(502);
      res.end(String(e));
    });
    req.pipe(up);
  });
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve(server)));
}

describe('Hawser environments', { timeout: 240_000 }, () => {
  before(async () => {
    h = await startConsole();
    ({ page, label } = h);
    hawserToken = `e2e-hawser-${label}-token`;
    proxyPort = await freePort();
    proxy = await startHawserStandard(hawserToken, proxyPort);
    ctr = `e2e-hawser-${label}`;
    docker('run', '-d', '--name', ctr, '--label', `berth.test=${label}`, testImage, 'sleep', '600');
    await h.signIn();
  });

  after(async () => {
    proxy?.closeAllConnections?.();
    proxy?.close();
    removeLabelled(label);
    await h?.stop();
  });

  it('an admin creates a hawser-standard environment and reaches the engine through it', async () => {
    const name = `e2e-hs-${label}`;
    await h.open('/environments/new', 'New environment');
    await page.getByLabel('Name', { exact: true }).fill(name);
    await page.getByLabel('Hawser (standard) — compatibility').check();
    await page.getByText(/X-Hawser-Token\)/).waitFor();
    await page.getByLabel('Host', { exact: true }).fill('127.0.0.1');
    await page.getByLabel('Port', { exact: true }).fill(String(proxyPort));
    await page.getByLabel('Hawser token', { exact: true }).fill(hawserToken);
    await page.getByRole('button', { name: 'Test connection' }).click();
    const result = page.locator('p.result');
    await result.waitFor({ timeout: 30_000 });
    assert.match(await result.textContent(), /^Connected/);
    await h.checkA11y('environment hawser-standard');
    await page.getByRole('button', { name: 'Create environment' }).click();
    await page.getByRole('heading', { level: 1, name }).waitFor();
    standardId = Number(/^\/environments\/(\d+)$/.exec(new URL(page.url()).pathname)?.[1]);
    assert.ok(standardId > 0, page.url());
    const env = await h.api('GET', `/api/environments/${standardId}`);
    assert.equal(env.body.connectionType, 'hawser-standard');
    assert.ok(!JSON.stringify(env.body).includes(hawserToken), 'the token is never answered');

    // The engine behind the stand-in: this test's container is listed.
    const list = await h.api('GET', `/api/containers?env=${standardId}`);
    assert.equal(list.status, 200, JSON.stringify(list.body));
    assert.ok(list.body.some((c) => c.name === ctr), `${ctr} listed through Hawser`);

    // The list says so when the agent is gone.
    proxy.closeAllConnections?.();
    await new Promise((r) => proxy.close(r));
    proxy = null;
    await h.open('/environments', 'Environments');
    const row = page.getByRole('row').filter({ hasText: name });
    await row.getByText('Offline', { exact: true }).waitFor({ timeout: 30_000 });
    assert.match(await row.textContent(), /Hawser \(standard, compatibility\)/);
  });

  it('an admin creates a hawser-edge environment: its token shown once, listed, revoked; the agent not connected', async () => {
    const name = `e2e-he-${label}`;
    await h.open('/environments/new', 'New environment');
    await page.getByLabel('Name', { exact: true }).fill(name);
    await page.getByLabel('Hawser (edge) — compatibility').check();
    await page.getByText(/dials Berth's \/api\/hawser\/connect/).first().waitFor();
    assert.equal(await page.getByLabel('Host', { exact: true }).count(), 0, 'an edge environment asks no host');
    await page.getByRole('button', { name: 'Create environment' }).click();
    await page.getByRole('heading', { level: 1, name }).waitFor();
    edgeId = Number(/^\/environments\/(\d+)$/.exec(new URL(page.url()).pathname)?.[1]);
    assert.ok(edgeId > 0, page.url());

    const panel = page.getByRole('region', { name: /Hawser agent/ });
    const issued = panel.getByRole('region', { name: 'Connect the agent' });
    await issued.waitFor();
    const token = await issued.getByLabel('Token', { exact: true }).inputValue();
    assert.ok(token.length >= 32, `a token: ${token}`);
    assert.match(await issued.getByLabel('Hawser command line').textContent(), new RegExp(`--token ${token}$`));
    await panel.getByText('Agent not connected', { exact: true }).waitFor();
    const tokens = panel.getByRole('table', { name: 'Tokens' });
    const prefix = (await h.api('GET', '/api/hawser/tokens')).body.find((t) => t.environmentId === edgeId)?.tokenPrefix;
    assert.ok(prefix && token.startsWith(prefix), `the listed prefix ${prefix} is the token's`);
    await tokens.getByRole('row').filter({ hasText: `${prefix}…` }).filter({ hasText: 'active' }).waitFor();
    await h.checkA11y('environment hawser-edge');
    await h.screenshot('environment-hawser-edge');

    // Shown once: gone after Done, and not after a reload.
    await issued.getByRole('button', { name: 'Done: hide the token' }).click();
    await issued.waitFor({ state: 'detached' });
    assert.ok(!(await page.content()).includes(token), 'the token is gone from the page');
    await h.open(`/environments/${edgeId}`, name);
    await tokens.getByRole('row').filter({ hasText: `${prefix}…` }).waitFor();
    assert.ok(!(await page.content()).includes(token), 'the token is not shown again');

    // Revoked after confirmation.
    await tokens.getByRole('button', { name: `Revoke token ${prefix}` }).click();
    await page.getByRole('dialog', { name: `Revoke token ${prefix}…?` }).getByRole('button', { name: 'Revoke' }).click();
    await tokens.getByRole('row').filter({ hasText: `${prefix}…` }).filter({ hasText: 'revoked' }).waitFor();
    await panel.getByText(/no active token/).waitFor();
    const after = (await h.api('GET', '/api/hawser/tokens')).body.find((t) => t.tokenPrefix === prefix);
    assert.equal(after.isActive, false);

    // The list is honest about it too.
    await h.open('/environments', 'Environments');
    const row = page.getByRole('row').filter({ hasText: name });
    await row.getByText('Offline', { exact: true }).waitFor({ timeout: 30_000 });
  });

  it('a viewer sees the Hawser environments with no control that changes them', async () => {
    await h.signInAsNewUser('Viewer');

    await h.open('/environments', 'Environments');
    const name = `e2e-he-${label}`;
    await page.getByRole('link', { name: `View ${name}` }).waitFor();
    assert.equal(await page.getByRole('link', { name: 'New environment' }).count(), 0, 'no New environment');
    for (const what of ['Edit', 'Delete', 'Test connection of']) {
      assert.equal(await page.getByRole('button', { name: new RegExp(`^${what} `) }).count(), 0, `no ${what}`);
      assert.equal(await page.getByRole('link', { name: new RegExp(`^${what} `) }).count(), 0, `no ${what}`);
    }
    await page.getByRole('link', { name: `View ${name}` }).click();
    await page.getByRole('heading', { level: 1, name }).waitFor();
    await page.getByText('You may view this environment, not change it.').waitFor();
    await page.getByText('Agent not connected', { exact: true }).waitFor();
    for (const b of ['Save', 'Delete', 'Generate a new token', 'Test connection']) {
      assert.equal(await page.getByRole('button', { name: b, exact: true }).count(), 0, `no ${b}`);
    }
    assert.equal(await page.getByRole('button', { name: /^Revoke token/ }).count(), 0, 'no Revoke');
    await h.checkA11y('environment hawser-edge as a viewer');
    assert.deepEqual(h.pageErrors, []);
  });
});
