// Browser test of creating and changing containers like the CLI (issue 22
// point 1; harness: lib/harness.mjs), against a real berth, the local engine
// and the test registry: create from a registry image the engine does not
// have (the pull's progress, then running), create with advanced options and
// read them back with docker inspect, edit a container's environment (it is
// recreated: new id, new value; the image's own variables are not copied),
// clear an entrypoint (recreated without one), change a limit in place (same
// id), recreate one pulling its image again,
// duplicate one, kill one; a Viewer sees no
// New, Edit or Kill; the form at phone width; axe-core on each state.
//
// Everything created carries the label berth.test=<run label>; the image
// pushed to the registry is deleted from it after.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { docker, startConsole, testImage } from './lib/harness.mjs';

const env = process.env;
const registry = env.BERTH_TEST_REGISTRY || '';
const regUser = env.BERTH_TEST_REGISTRY_USER || '';
const regPassword = env.BERTH_TEST_REGISTRY_PASSWORD || '';

let h;
let page;
let label;
let repo; // the repository pushed to the test registry (host/name)
let pulledName;
let advName;
let advId;

const inspect = (name, fmt) => docker('inspect', '-f', fmt, name);

function quietly(fn) {
  try {
    fn();
  } catch {
    // already gone
  }
}

/** Deletes ref's manifest from the test registry (which allows deletes); best effort. */
async function deleteFromRegistry(ref) {
  const [name, tag] = ref.slice(registry.length + 1).split(':');
  const auth = { Authorization: `Basic ${Buffer.from(`${regUser}:${regPassword}`).toString('base64')}` };
  try {
    const head = await fetch(`http://${registry}/v2/${name}/manifests/${tag}`, {
      method: 'HEAD',
      headers: { ...auth, Accept: 'application/vnd.docker.distribution.manifest.v2+json' },
    });
    const digest = head.headers.get('docker-content-digest');
    if (digest) await fetch(`http://${registry}/v2/${name}/manifests/${digest}`, { method: 'DELETE', headers: auth });
  } catch {
    // the registry keeps it
  }
}

describe('create and change containers', { timeout: 600_000, skip: registry ? false : 'needs BERTH_TEST_REGISTRY' }, () => {
  before(async () => {
    h = await startConsole();
    ({ page, label } = h);
    repo = `${registry}/berth-e2e-create-${label}`;
    pulledName = `e2e-pulled-${label}`;
    advName = `e2e-adv-${label}`;
    // The test image under a new name in the registry, and not on the engine under that name.
    docker('tag', testImage, `${repo}:1`);
    const config = mkdtempSync(path.join(os.tmpdir(), 'berth-e2e-docker-'));
    try {
      execFileSync('docker', ['--config', config, 'login', '--username', regUser, '--password-stdin', registry], {
        input: regPassword,
        stdio: ['pipe', 'ignore', 'pipe'],
      });
      docker('--config', config, 'push', '--quiet', `${repo}:1`);
    } finally {
      rmSync(config, { recursive: true, force: true });
    }
    docker('rmi', `${repo}:1`);
    assert.throws(() => docker('image', 'inspect', `${repo}:1`));
    // The registry in Berth: its credentials for the pull, its catalog for the image field's suggestions.
    const reg = await h.api('POST', '/api/registries', { name: `e2e-${label}`, url: registry, username: regUser, password: regPassword });
    assert.ok(reg.status < 300, JSON.stringify(reg.body));
    await h.signIn();
  });

  after(async () => {
    if (repo) {
      await deleteFromRegistry(`${repo}:1`);
      quietly(() => docker('rmi', '-f', `${repo}:1`));
    }
    await h?.stop();
  });

  it('creates from a registry image the engine does not have: suggests it, pulls it with progress, runs it', async () => {
    await h.open('/containers', 'Containers');
    await page.getByRole('link', { name: 'New container' }).click();
    await page.getByRole('heading', { level: 1, name: 'New container' }).waitFor();

    const box = page.getByRole('combobox', { name: /^Image/ });
    await box.fill(`berth-e2e-create-${label}`);
    const option = page.getByRole('listbox', { name: 'Suggested images' }).getByRole('option', { name: new RegExp(repo.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')) });
    await option.waitFor({ timeout: 30_000 });
    await box.press('ArrowDown');
    assert.equal(await option.getAttribute('aria-selected'), 'true');
    await box.press('Enter');
    assert.equal(await box.inputValue(), repo);
    await box.press('End');
    await box.pressSequentially(':1');
    await h.checkA11y('create form with suggestions');

    await page.getByLabel('Name', { exact: true }).fill(pulledName);
    await page.getByLabel('Command', { exact: true }).fill('sleep 600');
    await page.getByRole('button', { name: 'Add label' }).click();
    await page.getByLabel('Label 1 name').fill('berth.test');
    await page.getByLabel('Label 1 value').fill(label);
    // The pull's progress shows (however short the pull: an observer notes it), then the new container's page.
    await page.evaluate(() => {
      window.__pullShown = '';
      new MutationObserver(() => {
        const p = document.querySelector('section[aria-label="Pull progress"]');
        if (p) window.__pullShown = p.textContent;
      }).observe(document.body, { childList: true, subtree: true, characterData: true });
    });
    await page.getByRole('button', { name: 'Create container' }).click();
    await page.waitForURL((u) => /^\/containers\/[0-9a-f]{64}$/.test(u.pathname), { timeout: 120_000 });
    await page.getByRole('heading', { level: 1, name: pulledName }).waitFor();
    assert.match(await page.evaluate(() => window.__pullShown), /Pull complete/, 'the pull progress was shown and completed');
    assert.equal(inspect(pulledName, '{{.State.Status}}'), 'running');
    assert.equal(inspect(pulledName, '{{.Config.Image}}'), `${repo}:1`);
    assert.ok(docker('image', 'inspect', '--format', '{{.Id}}', `${repo}:1`).startsWith('sha256:'), 'the engine has the image now');
  });

  it('recreates the container, pulling its image again: a new container under the same name', async () => {
    const before = inspect(pulledName, '{{.Id}}');
    await h.open(`/containers/${before}`, pulledName);
    await page.getByRole('group', { name: 'Container actions' }).getByRole('button', { name: 'Recreate' }).click();
    const dialog = page.getByRole('dialog', { name: `Recreate ${pulledName}?` });
    assert.equal(await dialog.getByLabel(/Pull a newer/).isChecked(), true);
    await h.checkA11y('recreate dialog');
    await dialog.getByRole('button', { name: 'Recreate', exact: true }).click();
    await page.waitForURL((u) => u.pathname !== `/containers/${before}`, { timeout: 120_000 });
    const after = inspect(pulledName, '{{.Id}}');
    assert.notEqual(after, before);
    assert.equal(new URL(page.url()).pathname, `/containers/${after}`);
    assert.equal(inspect(pulledName, '{{.State.Status}}'), 'running');
  });

  it('refuses "never" for an image the engine lacks before creating anything', async () => {
    await h.open('/containers/new', 'New container');
    await page.getByRole('combobox', { name: /^Image/ }).fill(`${registry}/berth-e2e-absent-${label}:1`);
    await page.getByLabel('Pull the image').selectOption('never');
    await page.getByRole('button', { name: 'Create container' }).click();
    await page.getByRole('alert').getByText(/is not on this engine and the pull policy is “never”/).waitFor();
    assert.equal(new URL(page.url()).pathname, '/containers/new');
  });

  it('creates with advanced options, as docker inspect shows', async () => {
    await h.open('/containers/new', 'New container');
    await page.getByRole('combobox', { name: /^Image/ }).fill(testImage);
    await page.getByLabel('Name', { exact: true }).fill(advName);
    await page.getByLabel('Command', { exact: true }).fill('sleep 600');
    await page.getByRole('button', { name: 'Add label' }).click();
    await page.getByLabel('Label 1 name').fill('berth.test');
    await page.getByLabel('Label 1 value').fill(label);
    await page.getByRole('button', { name: 'Add variable' }).click();
    await page.getByLabel('Variable 1 name').fill('MODE');
    await page.getByLabel('Variable 1 value').fill('first');
    await page.getByLabel('Restart policy').selectOption('on-failure');
    await page.getByLabel('Maximum retries').fill('2');
    await page.getByLabel('Memory limit').fill('64');

    await page.getByText('Advanced: process').click();
    await page.getByLabel('Working directory').fill('/tmp');
    await page.getByLabel('User', { exact: true }).fill('1000:1000');
    await page.getByLabel('Hostname').fill('advbox');
    await page.getByText('Advanced: security and devices').click();
    await page.getByLabel('Add capabilities').fill('NET_ADMIN');
    await page.getByLabel('Drop capabilities').fill('MKNOD');
    await page.getByText('Advanced: DNS and network aliases').click();
    await page.getByLabel('DNS servers').fill('1.1.1.1');
    await page.getByLabel('DNS search domains').fill('example.internal');
    await page.getByText('Advanced: health check').click();
    await page.getByLabel('Health check', { exact: true }).selectOption('custom');
    await page.getByLabel('Health check command').fill('true');
    await page.getByLabel('Interval (seconds)').fill('5');
    await page.getByLabel('Retries', { exact: true }).fill('2');
    await page.getByText('Advanced: logging').click();
    await page.getByLabel('Log driver').fill('local');
    await page.getByRole('button', { name: 'Add log option' }).click();
    await page.getByLabel('Log option 1 name').fill('max-size');
    await page.getByLabel('Log option 1 value').fill('1m');
    await page.getByText('Advanced: more limits').click();
    await page.getByLabel('Process limit').fill('100');
    await h.checkA11y('create form, advanced sections open');
    await h.screenshot('container-create-advanced');

    await page.getByRole('button', { name: 'Create container' }).click();
    await page.waitForURL((u) => /^\/containers\/[0-9a-f]{64}$/.test(u.pathname), { timeout: 60_000 });
    advId = new URL(page.url()).pathname.split('/').pop();
    const doc = JSON.parse(docker('inspect', advName))[0];
    assert.equal(doc.Config.WorkingDir, '/tmp');
    assert.equal(doc.Config.User, '1000:1000');
    assert.equal(doc.Config.Hostname, 'advbox');
    assert.deepEqual(doc.HostConfig.CapAdd, ['CAP_NET_ADMIN']);
    assert.deepEqual(doc.HostConfig.CapDrop, ['CAP_MKNOD']);
    assert.deepEqual(doc.HostConfig.Dns, ['1.1.1.1']);
    assert.deepEqual(doc.HostConfig.DnsSearch, ['example.internal']);
    assert.deepEqual(doc.Config.Healthcheck, { Test: ['CMD-SHELL', 'true'], Interval: 5e9, Retries: 2 });
    assert.equal(doc.HostConfig.LogConfig.Type, 'local');
    assert.deepEqual(doc.HostConfig.LogConfig.Config, { 'max-size': '1m' });
    assert.equal(doc.HostConfig.PidsLimit, 100);
    assert.equal(doc.HostConfig.Memory, 64 * 1024 * 1024);
    assert.deepEqual(doc.HostConfig.RestartPolicy, { Name: 'on-failure', MaximumRetryCount: 2 });
    assert.ok(doc.Config.Env.includes('MODE=first'));
    assert.equal(doc.State.Status, 'running');
  });

  it("edits the container's environment: recreated with a new id and the new value", async () => {
    await h.open(`/containers/${advId}`, advName);
    await page.getByRole('group', { name: 'Container actions' }).getByRole('link', { name: 'Edit' }).click();
    await page.getByRole('heading', { level: 1, name: `Edit ${advName}` }).waitFor();
    await page.getByLabel('Variable 1 name').waitFor();
    const row = await page.evaluate(() =>
      [...document.querySelectorAll('input[id^="f-env."][id$=".key"]')].findIndex((i) => i.value === 'MODE'),
    );
    assert.ok(row >= 0, 'MODE is among the prefilled variables');
    assert.equal(await page.getByLabel(`Variable ${row + 1} value`).inputValue(), 'first');
    const keys = await page.evaluate(() => [...document.querySelectorAll('input[id^="f-env."][id$=".key"]')].map((i) => i.value));
    assert.ok(!keys.includes('PATH'), `the image's own PATH is not copied into the form: ${keys}`);
    await page.getByLabel(`Variable ${row + 1} value`).fill('second');
    assert.equal(await page.getByLabel('Hostname').inputValue(), 'advbox'); // prefilled from the inspection
    await h.checkA11y('edit form');
    await page.getByRole('button', { name: 'Save and recreate' }).click();
    await page.getByText(new RegExp(`${advName} was recreated \\(new id [0-9a-f]{12}\\)`)).waitFor({ timeout: 120_000 });
    const doc = JSON.parse(docker('inspect', advName))[0];
    assert.notEqual(doc.Id, advId, 'a new container');
    assert.ok(doc.Config.Env.includes('MODE=second'), JSON.stringify(doc.Config.Env));
    assert.ok(!doc.Config.Env.includes('MODE=first'));
    assert.ok(doc.Config.Env.includes('PATH=/bin'), 'the engine still gives the image its PATH');
    assert.equal(doc.Config.Hostname, 'advbox');
    assert.deepEqual(doc.HostConfig.CapAdd, ['CAP_NET_ADMIN']);
    assert.equal(doc.State.Status, 'running');
    assert.throws(() => docker('inspect', advId), 'the old container is gone');
    advId = doc.Id;
  });

  it("clears an entrypoint (recreated without one), changes a limit in place (same container), then removes it with the health check back to the image's", async () => {
    const name = `e2e-ep-${label}`;
    docker('run', '-d', '--name', name, '--label', `berth.test=${label}`, '--health-cmd', 'true', '--health-interval', '30s',
      '--entrypoint', '/bin/sh', testImage, '-c', 'sleep 600');
    const first = inspect(name, '{{.Id}}');
    await h.open(`/containers/new?edit=${first}`, `Edit ${name}`);
    await page.getByLabel('Command', { exact: true }).waitFor();
    // The section is open already when the container has such settings.
    if (!(await page.getByLabel('Entrypoint').isVisible())) await page.getByText('Advanced: process').click();
    assert.equal(await page.getByLabel('Entrypoint').inputValue(), '/bin/sh');
    await page.getByLabel('Entrypoint').fill('');
    await page.getByLabel('Command', { exact: true }).fill('sleep 600');
    await page.getByRole('button', { name: 'Save and recreate' }).click();
    await page.getByText(new RegExp(`${name} was recreated`)).waitFor({ timeout: 120_000 });
    let doc = JSON.parse(docker('inspect', name))[0];
    assert.ok(!doc.Config.Entrypoint?.length, `no entrypoint: ${JSON.stringify(doc.Config.Entrypoint)}`);
    assert.deepEqual(doc.Config.Cmd, ['sleep', '600']);
    assert.equal(doc.State.Status, 'running');

    const second = doc.Id;
    await h.open(`/containers/new?edit=${second}`, `Edit ${name}`);
    await page.getByLabel('Memory limit').fill('32');
    await page.getByText(/without recreating it/).waitFor();
    await page.getByRole('button', { name: 'Apply without recreating' }).click();
    await page.getByText(new RegExp(`${name} was changed in place`)).waitFor({ timeout: 60_000 });
    doc = JSON.parse(docker('inspect', name))[0];
    assert.equal(doc.Id, second, 'the same container');
    assert.equal(doc.HostConfig.Memory, 32 * 1024 * 1024);
    assert.equal(doc.State.Status, 'running');

    // The engine's update cannot take a limit away (0 is "unchanged" to it,
    // -1 is refused): the form says that this recreates, and the new
    // container has no limit. The health check goes back to the image's
    // (the test image has none): not NONE, not the old command.
    await h.open(`/containers/new?edit=${second}`, `Edit ${name}`);
    assert.equal(await page.getByLabel('Health check', { exact: true }).inputValue(), 'custom');
    await page.getByLabel('Memory limit').fill('');
    await page.getByText(/Removing a limit recreates the container \(the memory limit\)/).waitFor();
    await page.getByLabel('Health check', { exact: true }).selectOption('image');
    await page.getByRole('button', { name: 'Save and recreate' }).click();
    await page.getByText(new RegExp(`${name} was recreated`)).waitFor({ timeout: 120_000 });
    doc = JSON.parse(docker('inspect', name))[0];
    assert.notEqual(doc.Id, second);
    assert.equal(doc.HostConfig.Memory, 0);
    assert.equal(doc.Config.Healthcheck ?? null, null, JSON.stringify(doc.Config.Healthcheck));
    assert.equal(doc.State.Status, 'running');
    // The container's cgroup has no limit: memory.max (cgroup v2) is "max",
    // memory.limit_in_bytes (v1) the kernel's largest value.
    const max = docker('exec', name, 'sh', '-c', 'cat /sys/fs/cgroup/memory.max 2>/dev/null || cat /sys/fs/cgroup/memory/memory.limit_in_bytes').trim();
    assert.ok(max === 'max' || Number(max) > 2 ** 60, `cgroup memory limit ${max}`);
  });

  it('duplicates the container under a new name', async () => {
    await h.open(`/containers/${advId}`, advName);
    await page.getByRole('group', { name: 'Container actions' }).getByRole('link', { name: 'Duplicate' }).click();
    await page.getByRole('heading', { level: 1, name: `Duplicate ${advName}` }).waitFor();
    assert.equal(await page.getByLabel('Name', { exact: true }).inputValue(), `${advName}-copy`);
    await page.getByRole('button', { name: 'Create container' }).click();
    await page.waitForURL((u) => /^\/containers\/[0-9a-f]{64}$/.test(u.pathname), { timeout: 60_000 });
    const copy = JSON.parse(docker('inspect', `${advName}-copy`))[0];
    assert.ok(copy.Config.Env.includes('MODE=second'));
    assert.equal(copy.Config.Labels['berth.test'], label);
    assert.deepEqual(copy.HostConfig.Dns, ['1.1.1.1']);
    assert.equal(copy.State.Status, 'running');
  });

  it('kills a running container with the chosen signal', async () => {
    await h.open(`/containers/${advId}`, advName);
    await page.getByRole('group', { name: 'Container actions' }).getByRole('button', { name: 'Kill' }).click();
    const dialog = page.getByRole('dialog', { name: `Kill ${advName}?` });
    await dialog.getByLabel('Signal').selectOption('SIGKILL');
    await h.checkA11y('kill dialog');
    await dialog.getByRole('button', { name: 'Kill', exact: true }).click();
    await dialog.waitFor({ state: 'detached' });
    await h.waitFor('the container to exit', 20_000, async () => inspect(advName, '{{.State.Status}}') === 'exited');
    assert.equal(inspect(advName, '{{.State.ExitCode}}'), '137');
    // on-failure restarts it: what matters is that it was killed, not stopped.
  });

  it('lays the form out at phone width', async () => {
    await page.setViewportSize({ width: 375, height: 800 });
    try {
      await h.open('/containers/new', 'New container');
      for (const s of ['Advanced: process', 'Advanced: security and devices', 'Advanced: health check']) await page.getByText(s).click();
      await page.getByRole('button', { name: 'Add device' }).click();
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow}px at 375px`);
      await page.getByRole('button', { name: 'Create container' }).isVisible();
      await h.screenshot('container-create-phone');
      await h.checkA11y('create form at phone width');
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });

  it('shows a Viewer no New, Edit, Kill or other action', async () => {
    await h.signInAsNewUser('Viewer');
    await h.open('/containers', 'Containers');
    await page.getByRole('table').first().waitFor();
    assert.equal(await page.getByRole('link', { name: 'New container' }).count(), 0);
    await h.open(`/containers/${advId}`, advName);
    const actions = page.getByRole('group', { name: 'Container actions' });
    await actions.waitFor({ state: 'attached' }); // the container is loaded; the group is empty
    assert.equal(await actions.getByRole('button').count(), 0);
    assert.equal(await actions.getByRole('link').count(), 0);
    await h.open('/containers/new', 'New container');
    await page.getByText(/You may not create containers/).waitFor();
    assert.equal(await page.getByRole('button', { name: 'Create container' }).count(), 0);
    assert.deepEqual(h.pageErrors, []);
  });
});
