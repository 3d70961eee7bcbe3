// Browser test of the templates gallery (harness: lib/harness.mjs): sign in;
// add a template source served over HTTP by this test (a Portainer-format
// list whose container template runs the local test image); find its card by
// search and category; deploy it through the dialog with a variable; land on
// the new stack's page and see it running on the engine. axe-core checks the
// screen and the dialog. The stack, its network and the source are removed in
// after(), also when a step failed midway.
//
// Needs: a berth binary (BERTH_BIN), a Docker engine, Chromium and the test
// image (BERTH_TEST_IMAGE).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { docker, startConsole, testImage } from './lib/harness.mjs';

let h;
let page;
let env;
let stackName;
let server;
let sourceURL;
let base;
let logoRequests = 0;

// A 16×16 PNG (one colour), the logo the source lists.
const LOGO_PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAIAAACQkWg2AAAAFklEQVR42mOQqzhBEmIY1TCqYfhqAABoaV4QiY2AzgAAAABJRU5ErkJggg==',
  'base64',
);

const listOf = (label, base) =>
  JSON.stringify({
    version: '2',
    templates: [
      {
        type: 1,
        title: `Sleeper ${label}`,
        name: 'sleeper',
        description: 'A busybox that sleeps',
        categories: [`e2e-${label}`],
        logo: `${base}/logo.png`,
        image: testImage,
        command: 'sleep 600',
        env: [{ name: 'GREETING', label: 'Greeting', default: 'hello' }],
        labels: [{ name: 'berth.test', value: label }],
        restart_policy: 'no',
      },
    ],
  });

function projectContainers() {
  return docker('ps', '-q', '--filter', `label=com.docker.compose.project=${stackName}`).split('\n').filter(Boolean);
}

describe('templates screen', { timeout: 120_000 }, () => {
  before(async () => {
    h = await startConsole();
    page = h.page;
    stackName = `e2e-tpl-${h.label}`;
    server = http.createServer((req, res) => {
      if (req.url === '/logo.png') {
        logoRequests++;
        res.writeHead(200, { 'Content-Type': 'image/png' }).end(LOGO_PNG);
        return;
      }
      if (req.url !== '/templates.json') {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(listOf(h.label, base));
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${server.address().port}`;
    sourceURL = `${base}/templates.json`;
  });

  after(async () => {
    if (!h) return;
    try {
      if (env) await h.api('DELETE', `/api/stacks/${stackName}?env=${env}&force=true`);
      const nets = docker('network', 'ls', '-q', '--filter', `label=com.docker.compose.project=${stackName}`).split('\n').filter(Boolean);
      if (nets.length) docker('network', 'rm', ...nets);
    } catch {
      // gone already
    } finally {
      server?.close();
      await h.stop();
    }
  });

  it('adds a source and finds its template by search and category', async () => {
    await h.signIn();
    const envs = await h.api('GET', '/api/environments');
    env = envs.body[0]?.id;
    assert.ok(env, 'an environment exists');
    // Logos: the built-in templates' are shipped in Berth and served by it;
    // the browser asks nothing of another origin (offline-safe).
    const requests = [];
    const record = (req) => requests.push(req.url());
    page.on('request', record);
    await h.open('/templates', 'Templates');
    await page.getByRole('list', { name: 'Templates' }).waitFor();
    await page.locator('.card img').first().waitFor();
    await page.waitForLoadState('networkidle');
    page.off('request', record);
    const outside = requests.filter((u) => new URL(u).hostname !== '127.0.0.1');
    assert.deepEqual(outside, [], 'requests that left 127.0.0.1');
    const imgs = await page.locator('.card img').evaluateAll((els) => els.map((e) => e.getAttribute('src')));
    assert.ok(imgs.every((src) => src.startsWith('/')), `logos: ${imgs.join(', ')}`);
    await page.getByLabel('Source name').fill(`e2e ${h.label}`);
    await page.getByLabel('URL or absolute file path').fill(sourceURL);
    await page.getByRole('button', { name: 'Add source' }).click();
    await page.getByText(`Source e2e ${h.label} added with 1 templates.`).waitFor();
    await page.getByRole('searchbox').fill(h.label);
    await page.getByLabel('Category').selectOption(`e2e-${h.label}`);
    const cards = page.getByRole('list', { name: 'Templates' }).getByRole('listitem');
    await page.getByRole('heading', { level: 2, name: `Sleeper ${h.label}` }).waitFor();
    assert.equal(await cards.count(), 1);
    // Its logo: fetched by Berth when the source was added (once), shown from
    // Berth's own origin, and loaded.
    const img = cards.first().locator('img');
    await img.waitFor();
    const src = await img.getAttribute('src');
    assert.match(src, /^\/api\/templates\/[^/]+\/logo$/);
    await h.waitFor('the logo loaded', 10_000, async () => (await img.evaluate((e) => e.complete && e.naturalWidth)) > 0);
    assert.equal(await img.evaluate((e) => new URL(e.currentSrc).origin), new URL(page.url()).origin);
    assert.equal(logoRequests, 1, 'Berth fetched the logo once; the browser never asked the source');
    await h.checkA11y('templates');
    await h.screenshot('templates');
  });

  it('deploys the template and opens the running stack', async () => {
    await page.getByRole('button', { name: `Deploy Sleeper ${h.label}` }).click();
    const dialog = page.getByRole('dialog', { name: `Deploy Sleeper ${h.label}` });
    await dialog.waitFor();
    assert.equal(await dialog.getByLabel('Greeting').inputValue(), 'hello');
    await dialog.getByLabel('Stack name').fill(stackName);
    await dialog.getByLabel('Greeting').fill('bonjour');
    await h.checkA11y('template deploy dialog');
    await dialog.getByRole('button', { name: 'Deploy', exact: true }).click();
    await page.waitForURL(`**/stacks/${stackName}`, { timeout: 60_000 });
    await page.getByRole('heading', { level: 1, name: stackName }).waitFor();
    await h.waitFor('the stack container running', 30_000, async () => projectContainers().length === 1);
    const envVars = docker('inspect', '--format', '{{json .Config.Env}}', projectContainers()[0]);
    assert.ok(envVars.includes('GREETING=bonjour'), envVars);
    const list = await h.api('GET', `/api/stacks?env=${env}`);
    assert.equal(list.body.find((s) => s.name === stackName)?.status, 'running');
  });
});
