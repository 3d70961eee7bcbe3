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
import { docker, removeLabelled, scannerEnv, startConsole } from './lib/harness.mjs';

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
