// Browser bench of the console (make bench, after the Go bench; not part of
// make test or make e2e): time to content in Chromium, from navigation to the
// screen's content shown, of the dashboard, the containers list with 200 and
// 1,000 containers, a stack's page and the API docs; and the console's initial
// JavaScript (gzip -9, scripts/bundle-size.mjs; budget 250 kB). Each figure
// is the median of RUNS page loads. Everything it creates carries the label
// berth.test=<run label> and is removed at the end.
//
// Needs: a Berth binary (BERTH_BIN, default bin/berth) with its console built
// into web/dist, the test engine and Chromium (.test-env).
// Usage: node bench.mjs   (BENCH_RUNS=5, BENCH_LARGE=1000 by default)
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { createContainers as createMany } from './lib/engine.mjs';
import { labelledCompose } from './lib/fixtures.mjs';
import { removeLabelled, root, startConsole, testImage } from './lib/harness.mjs';

const RUNS = Number(process.env.BENCH_RUNS || 5);
/** The large list's size (BENCH_LARGE, for a quicker run while working on the bench). */
const LARGE = Number(process.env.BENCH_LARGE || 1000);

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function createContainers(label, prefix, from, to) {
  await createMany(
    Array.from({ length: to - from }, (_, k) => ({
      name: `${prefix}-${String(from + k).padStart(4, '0')}`,
      image: testImage,
      cmd: ['true'],
      labels: { 'berth.test': label },
    })),
  );
}

const h = await startConsole({ viewport: { width: 1366, height: 768 } });
const { page, label } = h;
const prefix = `bench-${label}`;
const stack = `bench-stack-${label}`;
const results = [];

/** Median time from navigation to `ready` resolving, over RUNS loads of path. */
async function measure(name, p, ready) {
  const times = [];
  for (let i = 0; i < RUNS; i++) {
    await page.goto('about:blank');
    const t0 = Date.now();
    await page.goto(h.base + p);
    await ready();
    times.push(Date.now() - t0);
  }
  results.push({ name, ms: median(times), min: Math.min(...times), max: Math.max(...times) });
  console.log(`${name}: ${median(times)} ms (min ${Math.min(...times)}, max ${Math.max(...times)}, ${RUNS} loads)`);
}

/** The containers list shows at least n containers ("x of y containers"). */
const listed = (n) => async () => {
  await page.waitForFunction(
    (want) => {
      const m = /of (\d+) containers?/.exec(document.querySelector('.bulk .count')?.textContent ?? '');
      return !!m && Number(m[1]) >= want;
    },
    n,
    { timeout: 120_000 },
  );
};

try {
  await h.signIn();
  await createContainers(label, prefix, 0, 200);
  // A stack deployed through the API (a running container of the test image).
  const env = (await h.api('GET', '/api/environments')).body[0].id;
  const deployed = await h.api('POST', `/api/stacks?env=${env}`, { name: stack, compose: labelledCompose(label) });
  if (deployed.status !== 200 || !/"success":true/.test(String(deployed.body))) throw new Error(`stack deploy: ${deployed.status} ${String(deployed.body).slice(-300)}`);

  await measure('dashboard', '/', async () => {
    await page.getByRole('heading', { level: 1, name: 'Dashboard' }).waitFor({ timeout: 60_000 });
    await page.waitForFunction(() => !/Loading/.test(document.querySelector('main')?.textContent ?? 'Loading'), null, { timeout: 60_000 });
  });
  await measure('containers (200)', '/containers', listed(200));
  await measure('stack detail', `/stacks/${stack}`, async () => {
    await page.getByRole('heading', { level: 1, name: stack }).waitFor({ timeout: 60_000 });
    await page.getByRole('heading', { level: 2, name: 'Containers' }).waitFor({ timeout: 60_000 }).catch(async (e) => {
      throw new Error(`stack page: ${(await page.locator('main').innerText()).slice(0, 400)}`, { cause: e });
    });
  });
  await measure('API docs', '/api/docs', async () => {
    await page.locator('summary[data-path]').first().waitFor({ timeout: 60_000 });
  });

  await createContainers(label, prefix, 200, LARGE);
  await measure(`containers (${LARGE.toLocaleString('en')})`, '/containers', listed(LARGE));

  const size = execFileSync('node', ['scripts/bundle-size.mjs', 'dist'], { cwd: path.join(root, 'web'), encoding: 'utf8' });
  console.log(size.split('\n')[0]);
  console.log('\ntime to content (median of', RUNS, 'loads, Chromium):');
  for (const r of results) console.log(`  ${r.name.padEnd(20)} ${String(r.ms).padStart(6)} ms`);
} finally {
  await h.api('DELETE', `/api/stacks/${stack}?force=true`).catch(() => {});
  await h.stop();
  removeLabelled(label);
}
