// Browser test of the Vulnerabilities screen (harness: lib/harness.mjs)
// against a real berth, the local engine and the real scanners: as an admin,
// the test scans only its own image (the scan test image, run by a container
// of a compose project of its own) from the image's page — "Scan all" would
// scan every image in use on the shared engine, which takes minutes — and the
// findings list, filtered to the test's container, shows its vulnerability
// with the container and stack; the severity filter narrows the list and the
// export links carry the filter; a viewer sees the same list without "Scan
// all" (scans need images:inspect). axe-core checks each state.
//
// Needs (scripts/test-env.sh records them in .test-env): bin/berth, a Docker
// engine, Chromium, BERTH_TEST_SCAN_IMAGE and the scanners with their
// databases (BERTH_TEST_GRYPE, BERTH_TEST_TRIVY, BERTH_TEST_GRYPE_DB,
// BERTH_TEST_TRIVY_CACHE).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { docker, removeLabelled, scannerEnv, startConsole, testImage } from './lib/harness.mjs';

const env = process.env;
const scanImage = env.BERTH_TEST_SCAN_IMAGE || 'berth-test/debian-vuln:1';
const missing = ['BERTH_TEST_GRYPE', 'BERTH_TEST_TRIVY', 'BERTH_TEST_SCAN_IMAGE'].filter((k) => !env[k]);

let h;
let page;
let label;
let stack;
let container;

describe('vulnerabilities', { timeout: 420_000, skip: missing.length ? `needs ${missing.join(', ')}` : false }, () => {
  before(async () => {
    h = await startConsole({ env: scannerEnv() });
    ({ page, label } = h);
    stack = `e2e-vuln-${label}`;
    container = `e2e-vuln-${label}`;
    docker('create', '--name', container, '--label', `berth.test=${label}`, '--label', `com.docker.compose.project=${stack}`,
      scanImage, 'true');
    await h.signIn();
  });

  after(async () => {
    removeLabelled(label);
    await h?.stop();
  });

  it('an admin scans its image and reads the findings', async () => {
    await h.open('/vulnerabilities', 'Vulnerabilities');
    await page.getByText('No findings', { exact: false }).waitFor();
    await page.getByRole('button', { name: 'Scan all' }).waitFor();
    await h.checkA11y('vulnerabilities, empty');

    // Scan the test's own image only, from its page, and wait for its results.
    const id = docker('image', 'inspect', '--format', '{{.Id}}', scanImage);
    await h.open(`/images/${encodeURIComponent(id)}`, scanImage);
    const scan = page.getByRole('region', { name: 'Vulnerability scan' });
    await scan.getByRole('button', { name: 'Scan now' }).click();
    for (const name of ['Grype', 'Trivy']) await scan.getByRole('region', { name }).waitFor({ timeout: 300_000 });

    await h.open('/vulnerabilities', 'Vulnerabilities');
    await page.getByRole('combobox', { name: /^Container/ }).selectOption(container);
    const row = page.getByRole('row').filter({ hasText: 'CVE-2099-0001' }).filter({ hasText: container });
    await row.waitFor();
    assert.match(await row.textContent(), new RegExp(stack));
    assert.match(await row.textContent(), /high/);
    await page.getByRole('region', { name: 'Counts by severity' }).waitFor();

    // The severity filter narrows the list; the exports carry it.
    await page.getByRole('combobox', { name: /^Severity/ }).selectOption('critical');
    await page.getByRole('row').filter({ hasText: 'CVE-2099-0001' }).waitFor({ state: 'detached' });
    const csv = await page.getByRole('link', { name: 'Export CSV' }).getAttribute('href');
    assert.match(csv, /severity=critical/);
    assert.match(csv, /format=csv/);
    await page.getByRole('combobox', { name: /^Severity/ }).selectOption('');
    await row.waitFor();
    await h.checkA11y('vulnerabilities');
    await h.screenshot('vulnerabilities');

    const exported = await h.api('GET', `/api/vulnerabilities/export?env=1&format=json&container=${container}`);
    assert.equal(exported.status, 200);
    assert.ok(exported.body.some((f) => f.cve === 'CVE-2099-0001' && f.stacks.includes(stack)));
  });

  it('a viewer sees the findings without "Scan all"', async () => {
    await h.signInAsNewUser('Viewer');

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Vulnerabilities', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Vulnerabilities' }).waitFor();
    await page.getByRole('combobox', { name: /^Container/ }).selectOption(container);
    await page.getByRole('row').filter({ hasText: 'CVE-2099-0001' }).filter({ hasText: container }).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Scan all' }).count(), 0, 'a viewer has no Scan all');
    await page.getByRole('link', { name: 'Export CSV' }).waitFor();
    await h.checkA11y('vulnerabilities as a viewer');
    assert.deepEqual(h.pageErrors, []);
  });
});

// Without a scanner, Scan is not offered; the screens say how to get one, and
// a scanner image a configured registry serves is pulled in one click (a tiny
// image pushed to the test registry under Grype's name, never the internet).
const registry = env.BERTH_TEST_REGISTRY || '127.0.0.1:5000';
const grypeImage = 'anchore/grype:v0.120.1'; // the image Berth runs Grype from
const regMissing = ['BERTH_TEST_REGISTRY', 'BERTH_TEST_REGISTRY_USER', 'BERTH_TEST_REGISTRY_PASSWORD'].filter((k) => !env[k]);
const onEngine = (ref) => {
  try {
    docker('image', 'inspect', ref);
    return true;
  } catch {
    return false;
  }
};

describe('no scanner', { timeout: 180_000, skip: regMissing.length ? `needs ${regMissing.join(', ')}` : onEngine(grypeImage) ? `${grypeImage} is on the engine` : false }, () => {
  let g;
  const mirrored = `${registry}/${grypeImage}`;
  before(async () => {
    g = await startConsole({ env: { GRYPE_PATH: '/nonexistent/grype', TRIVY_PATH: '/nonexistent/trivy' } });
    const config = mkdtempSync(path.join(os.tmpdir(), 'berth-e2e-docker-'));
    try {
      execFileSync('docker', ['--config', config, 'login', '--username', env.BERTH_TEST_REGISTRY_USER, '--password-stdin', registry], {
        input: env.BERTH_TEST_REGISTRY_PASSWORD,
        stdio: ['pipe', 'ignore', 'pipe'],
      });
      docker('tag', testImage, mirrored);
      docker('--config', config, 'push', '--quiet', mirrored);
      docker('rmi', mirrored);
    } finally {
      rmSync(config, { recursive: true, force: true });
    }
    const created = await g.api('POST', '/api/registries', {
      name: `mirror-${g.label}`, url: registry, username: env.BERTH_TEST_REGISTRY_USER, password: env.BERTH_TEST_REGISTRY_PASSWORD,
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    await g.signIn();
  });

  after(async () => {
    for (const ref of [grypeImage, mirrored]) {
      try {
        docker('rmi', ref);
      } catch {
        // not pulled
      }
    }
    await g?.stop();
  });

  it('offers no Scan, says how to get a scanner, and pulls its image in one click', async () => {
    const p = g.page;
    await g.open('/vulnerabilities', 'Vulnerabilities');
    const help = p.getByRole('region', { name: 'No vulnerability scanner on this environment' });
    await help.waitFor();
    assert.equal(await p.getByRole('button', { name: 'Scan all' }).count(), 0, 'no Scan all without a scanner');

    // Settings shows each scanner's state with the same one-click pull.
    await g.open('/settings', 'Settings');
    const scanners = p.getByRole('list', { name: 'Scanners on this environment' });
    await scanners.getByText(/Trivy cannot run: \/nonexistent\/trivy does not exist/).waitFor();
    await scanners.getByRole('button', { name: 'Pull Grype image' }).waitFor();

    await g.open('/images', 'Images');
    await help.waitFor();
    await p.getByRole('table').waitFor();
    assert.equal(await p.getByRole('button', { name: /^Scan / }).count(), 0, 'no Scan without a scanner');
    await help.getByText(/Trivy cannot run: \/nonexistent\/trivy does not exist/).waitFor();
    await g.checkA11y('images without a scanner');
    await help.getByRole('button', { name: 'Pull Grype image' }).click();
    await p.getByRole('status').filter({ hasText: `Pulled ${grypeImage} from mirror-${g.label}: Grype can scan now.` }).waitFor({ timeout: 60_000 });
    await help.waitFor({ state: 'detached' });
    await p.getByRole('button', { name: `Scan ${testImage}` }).waitFor();
    assert.ok(onEngine(grypeImage), 'the scanner image has its name on the engine');

    // The setting names Trivy, which cannot run: the server refuses it before
    // any job, and "Scan all" asks for Grype, which can (the request is stopped
    // here: it would scan every image in use on the shared engine).
    assert.equal((await g.api('POST', '/api/settings/scanner?env=1', { scanner: 'scanner_b' })).status, 200);
    const refused = await g.api('POST', '/api/vulnerabilities/scan-all?env=1&scanner=scanner_b');
    assert.equal(refused.status, 400, JSON.stringify(refused.body));
    assert.match(refused.body.error, /Trivy cannot run: \/nonexistent\/trivy does not exist/);
    let asked = null;
    await p.route('**/api/vulnerabilities/scan-all?*', (route) => {
      asked = new URL(route.request().url()).searchParams.get('scanner');
      return route.fulfill({ status: 400, contentType: 'application/json', body: JSON.stringify({ error: 'Stopped by the test' }) });
    });
    await g.open('/vulnerabilities', 'Vulnerabilities');
    await p.getByText('"Scan all" scans with Grype: Trivy cannot run on this environment.').waitFor();
    await p.getByRole('button', { name: 'Scan all' }).click();
    await p.getByRole('alert').filter({ hasText: 'Stopped by the test' }).waitFor();
    assert.equal(asked, 'scanner_a');
    await p.unroute('**/api/vulnerabilities/scan-all?*');
    assert.deepEqual(g.pageErrors, []);
  });
});
