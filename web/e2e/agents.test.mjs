// Browser test of the agent environments (harness: lib/harness.mjs): a real
// berth with its edge agents' port, a real bin/berth-agent and the second
// Docker engine of the test environment (the "remote host"). Through the
// console: an edge environment created, its install lines shown once and a new
// token generated after confirmation; the agent started with the token and
// server URL read from the page; the status turning Connected with the agent's
// version and capabilities; the connection test; the remote engine's container
// listed after switching to the environment; the agent killed and the status
// turning Disconnected with its last-seen time; the environment deleted. axe
// checks each state, in the light theme and on a phone in the dark one;
// screenshots go to screenshots/.
//
// Needs: bin/berth (make build) or BERTH_BIN, bin/berth-agent (make agent) or
// BERTH_AGENT_BIN, the second engine (BERTH_TEST_ENGINE2_SOCKET, from
// scripts/test-env.sh), Chromium and the test image.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, root, startConsole, testImage } from './lib/harness.mjs';

const engine2 = process.env.BERTH_TEST_ENGINE2_SOCKET || '';
const agentBin = process.env.BERTH_AGENT_BIN || path.join(root, 'bin/berth-agent');

/** Runs the docker CLI against the second engine and returns its trimmed output. */
function docker2(...args) {
  return execFileSync('docker', ['-H', `unix://${engine2}`, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
}

/** Makes sure the second engine has the test image (imported from the local engine if not). */
function ensureImage() {
  try {
    docker2('image', 'inspect', testImage);
  } catch {
    execFileSync('sh', ['-c', 'docker save "$1" | docker -H "unix://$2" load', 'sh', testImage, engine2], { stdio: 'ignore' });
  }
}

let h;
let page;
let name; // e2e-edge-<label>: the environment of this run
let worker; // the labelled container on the second engine
let agentDir; // the agent's data directory
let agent = null; // the berth-agent process
let agentLog = '';
let agentPort;
let envId;
let token;
let serverUrl;
const agentVersion = execFileSync(agentBin, ['--version'], { encoding: 'utf8' }).trim().split(/\s+/).pop();

/** The Agent region of the environment's page. */
const agentRegion = () => page.getByRole('region', { name: 'Agent', exact: true });

/** The install lines' token and server URL as shown on the page. */
async function readInstall() {
  const install = page.getByRole('region', { name: 'Install the agent' });
  await install.waitFor();
  const t = await install.getByLabel('Token', { exact: true }).inputValue();
  const url = await install.getByLabel('Server URL', { exact: true }).inputValue();
  const lines = await install.locator('pre').allTextContents();
  return { t, url, lines };
}

function startAgent() {
  agentLog = '';
  agent = spawn(agentBin, ['--server', serverUrl, '--token', token, '--data-dir', agentDir, '--name', `e2e-agent-${h.label}`], {
    env: { ...process.env, DOCKER_SOCKET: engine2, LOG_LEVEL: 'debug' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  agent.stdout.on('data', (d) => (agentLog += d));
  agent.stderr.on('data', (d) => (agentLog += d));
}

async function stopAgent(signal = 'SIGKILL') {
  if (!agent || agent.exitCode !== null || agent.signalCode !== null) return;
  const exited = new Promise((r) => agent.once('exit', r));
  agent.kill(signal);
  await exited;
}

describe('agent environments', { timeout: 300_000 }, () => {
  before(async () => {
    assert.ok(engine2 && existsSync(engine2), 'BERTH_TEST_ENGINE2_SOCKET names the second engine: run scripts/test-env.sh');
    assert.ok(existsSync(agentBin), `${agentBin} is missing: run make agent (or set BERTH_AGENT_BIN)`);
    ensureImage();
    agentPort = await freePort();
    h = await startConsole({ env: { AGENT_PORT: String(agentPort), AGENT_HOST: '127.0.0.1' } });
    page = h.page;
    name = `e2e-edge-${h.label}`;
    worker = `e2e-agent-${h.label}`;
    agentDir = mkdtempSync(path.join(os.tmpdir(), 'berth-e2e-agent-'));
    await h.signIn();
  });

  after(async () => {
    await stopAgent().catch(() => {});
    if (engine2 && h) {
      try {
        const ids = docker2('ps', '-aq', '--filter', `label=berth.test=${h.label}`).split('\n').filter(Boolean);
        if (ids.length) docker2('rm', '-f', '-v', ...ids);
      } catch {
        // the engine is gone: nothing to remove
      }
    }
    if (h) {
      const envs = await h.api('GET', '/api/environments').catch(() => ({ body: [] }));
      for (const e of Array.isArray(envs.body) ? envs.body : []) {
        if (e.name === name) await h.api('DELETE', `/api/environments/${e.id}`);
      }
    }
    await h?.stop();
    if (agentDir) rmSync(agentDir, { recursive: true, force: true });
  });

  it('creates an edge environment and shows its install lines once', async () => {
    await h.open('/environments/new', 'New environment');
    await page.getByLabel('Name', { exact: true }).fill(name);
    await page.getByLabel('Agent (edge)').check();
    await page.getByText(/dials Berth's agent port/).waitFor();
    assert.equal(await page.getByLabel('Host', { exact: true }).count(), 0, 'an edge environment asks no host');
    assert.equal(await page.getByRole('button', { name: 'Test connection' }).count(), 0, 'no agent to test before it exists');
    await page.getByRole('button', { name: 'Create environment' }).click();

    await page.getByRole('heading', { level: 1, name }).waitFor();
    envId = Number(/^\/environments\/(\d+)$/.exec(new URL(page.url()).pathname)?.[1]);
    assert.ok(envId > 0, `the environment's page: ${page.url()}`);
    const first = await readInstall();
    assert.match(first.t, /^bae_\S{20,}$/);
    assert.equal(first.url, `http://127.0.0.1:${agentPort}`);
    assert.ok(first.lines.some((l) => l.startsWith('docker run') && l.includes(`BERTH_TOKEN=${first.t}`)), 'the docker run line');
    assert.ok(first.lines.some((l) => l === `berth-agent --server ${first.url} --token ${first.t}`), 'the command line');
    await agentRegion().getByText('Waiting for the agent', { exact: true }).waitFor();
    await h.checkA11y('environment-edge');
    await h.screenshot('environment-edge');

    // Done hides the token for good: not on the page, not after a reload.
    await page.getByRole('button', { name: 'Done: hide the token' }).click();
    await page.getByRole('region', { name: 'Install the agent' }).waitFor({ state: 'detached' });
    assert.ok(!(await page.content()).includes(first.t), 'the token is gone from the page');
    await h.open(`/environments/${envId}`, name);
    await agentRegion().getByText('Waiting for the agent', { exact: true }).waitFor();
    assert.ok(!(await page.content()).includes(first.t), 'the token is not shown again');
    const env = await h.api('GET', `/api/environments/${envId}`);
    assert.equal(env.body.hasAgentToken, true);
    assert.ok(!JSON.stringify(env.body).includes(first.t), 'the API never answers the token again');

    // A new token, after confirmation, replaces it.
    await agentRegion().getByRole('button', { name: 'Generate a new token' }).click();
    const dialog = page.getByRole('dialog', { name: `Generate a new token for ${name}?` });
    await dialog.getByText(/current token stops working/).waitFor();
    await dialog.getByRole('button', { name: 'Generate a new token' }).click();
    const second = await readInstall();
    assert.notEqual(second.t, first.t);
    token = second.t;
    serverUrl = second.url;
  });

  it('shows the agent connected, with its version and capabilities, and tests it', async () => {
    startAgent();
    const region = agentRegion();
    await region.getByText('Connected', { exact: true }).waitFor({ timeout: 30_000 }).catch((e) => {
      throw new Error(`${e.message}\nagent log:\n${agentLog}\nberth log:\n${h.log()}`);
    });
    const fact = (label) => region.locator('dl > div').filter({ has: page.locator('dt', { hasText: new RegExp(`^${label}$`) }) }).locator('dd');
    assert.equal((await fact('Version').textContent()).trim(), agentVersion);
    assert.match(await fact('Agent').textContent(), new RegExp(`e2e-agent-${h.label}`));
    assert.match(await fact('Connects from').textContent(), /^127\.0\.0\.1:\d+$/);
    assert.match(await fact('Last seen').textContent(), /just now|\d+ s ago/);
    for (const cap of ['exec', 'compose', 'metrics']) await fact('Capabilities').getByText(cap, { exact: true }).waitFor();
    // The install lines are still there until dismissed.
    await page.getByRole('button', { name: 'Done: hide the token' }).click();
    await h.checkA11y('environment-edge-connected');
    await h.screenshot('environment-edge-connected');

    await page.getByRole('button', { name: 'Test connection' }).click();
    const result = page.getByText(/^Connected: .*engine \S+.*Agent /);
    await result.waitFor({ timeout: 20_000 });
    assert.match(await result.textContent(), new RegExp(`Agent e2e-agent-${h.label} ${agentVersion.replace(/[.+]/g, '\\$&')}\\.$`));

    // The list shows the same.
    await h.open('/environments', 'Environments');
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name, exact: true }) });
    await row.getByText('Connected', { exact: true }).waitFor();
    await row.getByText(`e2e-agent-${h.label} ${agentVersion}`).waitFor();
    await row.getByText(/from 127\.0\.0\.1:\d+/).waitFor();
    await h.checkA11y('environments with an edge agent');
  });

  it("lists the remote engine's containers after switching to the environment", async () => {
    docker2('run', '-d', '--name', worker, '--label', `berth.test=${h.label}`, testImage, 'sleep', '600');
    const switcher = page.getByLabel('Environment', { exact: true });
    await switcher.locator('option', { hasText: name }).waitFor({ state: 'attached' });
    await switcher.selectOption({ label: name });
    await h.open('/containers', 'Containers');
    await page.getByRole('link', { name: worker, exact: true }).waitFor({ timeout: 20_000 });
    // The local engine does not have it: it is the remote host's.
    assert.equal(execFileSync('docker', ['ps', '-aq', '--filter', `name=^${worker}$`], { encoding: 'utf8' }).trim(), '');
    await switcher.selectOption({ label: 'local' });
  });

  it('shows the agent disconnected with its last-seen time once it is killed', async () => {
    await h.open(`/environments/${envId}`, name);
    const region = agentRegion();
    await region.getByText('Connected', { exact: true }).waitFor();
    await stopAgent('SIGKILL');
    await region.getByText('Disconnected', { exact: true }).waitFor({ timeout: 30_000 });
    const seen = region.locator('dl > div').filter({ has: page.locator('dt', { hasText: /^Last seen$/ }) }).locator('dd');
    assert.match(await seen.textContent(), /just now|ago/);
    assert.equal(await seen.locator('time').count(), 1);
    await page.getByRole('button', { name: 'Test connection' }).click();
    const alert = page.getByRole('alert').filter({ hasText: 'Connection failed' });
    await alert.waitFor({ timeout: 20_000 });
    assert.match(await alert.textContent(), /Edge agent not connected/);
    await h.checkA11y('environment-edge disconnected');
  });

  it('fits a phone in the dark theme, install lines included', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.evaluate(() => localStorage.setItem('berth.theme', 'dark'));
    try {
      await h.open('/environments', 'Environments');
      await page.getByRole('table').waitFor();
      let overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 1, `/environments scrolls sideways on a phone by ${overflow}px`);
      await h.checkA11y('environments (phone, dark)');

      await h.open(`/environments/${envId}`, name);
      await agentRegion().getByRole('button', { name: 'Generate a new token' }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Generate a new token' }).click();
      await readInstall();
      assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), 'dark');
      overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 1, `the environment's page scrolls sideways on a phone by ${overflow}px`);
      await h.checkA11y('environment-edge (phone, dark)');
      await h.screenshot('environment-edge-phone-dark');
      await page.getByRole('button', { name: 'Done: hide the token' }).click();
    } finally {
      await page.evaluate(() => localStorage.removeItem('berth.theme'));
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });

  it('deletes the environment after confirmation', async () => {
    await h.open(`/environments/${envId}`, name);
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByRole('dialog', { name: `Delete environment ${name}?` }).getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('heading', { level: 1, name: 'Environments' }).waitFor();
    await page.getByRole('table').waitFor();
    assert.equal(await page.getByRole('link', { name, exact: true }).count(), 0);
    const envs = await h.api('GET', '/api/environments');
    assert.ok(!envs.body.some((e) => e.name === name), 'deleted on the server');
  });

  it('raised no error in the page', () => {
    assert.deepEqual(h.pageErrors, []);
  });
});
