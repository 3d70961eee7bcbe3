// Browser test of the stacks and git screens (harness: lib/harness.mjs): sign
// in; write a stack's compose file in the CodeMirror editor, see the linter
// mark broken YAML and clear once it is fixed; deploy with streamed output and
// find the stack running in the list; edit an env variable on its page; stop it
// and delete it with its volumes through the confirmation dialog; on the git
// page create a credential and a repository, sync it (a host that does not
// resolve: the failure shown in its row; then a real repository served by `git
// daemon`: the commit fetched shown), create a git stack from it on the
// new-stack page, test its files on its page and delete it, then delete the
// repository and the credential. axe-core checks
// every screen; screenshots go to screenshots/. Whatever the run created is
// removed in after(), also when a step failed midway.
//
// Needs: bin/berth (make build), a Docker engine, Chromium (scripts/test-env.sh
// records it as BERTH_TEST_CHROMIUM) and the test image (BERTH_TEST_IMAGE).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { labelledCompose as composeOf } from './lib/fixtures.mjs';
import { docker, freePort, startConsole } from './lib/harness.mjs';

let h;
let page;
let env;
let stackName;
let credName;
let repoName;
let gitDir;
let gitDaemon;

// The editable area of the CodeMirror editor.
const editor = () => page.locator('.cm-content[contenteditable="true"]');

/** Replaces the whole document of the editor as a user would: click, select all, type (pasted at once). */
async function setEditor(text) {
  await editor().click();
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Delete');
  await page.keyboard.insertText(text);
}

/** The containers of the stack's compose project on the engine. */
function projectContainers() {
  return docker('ps', '-aq', '--filter', `label=com.docker.compose.project=${stackName}`).split('\n').filter(Boolean);
}

describe('stacks and git screens', { timeout: 300_000 }, () => {
  before(async () => {
    h = await startConsole();
    page = h.page;
    stackName = `e2e-${h.label}`;
    credName = `e2e-cred-${h.label}`;
    repoName = `e2e-repo-${h.label}`;
    const envs = await h.api('GET', '/api/environments');
    assert.equal(envs.status, 200);
    env = envs.body[0]?.id;
    assert.ok(env, 'an environment exists');
  });

  after(async () => {
    if (!h) return;
    try {
      // A run that failed midway leaves its stack, repository or credential behind: remove them.
      const list = await h.api('GET', `/api/stacks?env=${env}`);
      if (Array.isArray(list.body) && list.body.some((s) => s.name === stackName)) {
        await h.api('DELETE', `/api/stacks/${stackName}?env=${env}&force=true`);
      }
      const gitStacks = await h.api('GET', '/api/git/stacks');
      for (const g of Array.isArray(gitStacks.body) ? gitStacks.body : []) {
        if (g.stackName === `${stackName}-git`) await h.api('DELETE', `/api/git/stacks/${g.id}`);
      }
      const repos = await h.api('GET', '/api/git/repositories');
      for (const r of Array.isArray(repos.body) ? repos.body : []) {
        if (r.name === repoName) await h.api('DELETE', `/api/git/repositories/${r.id}`);
      }
      const creds = await h.api('GET', '/api/git/credentials');
      for (const c of Array.isArray(creds.body) ? creds.body : []) {
        if (c.name === credName) await h.api('DELETE', `/api/git/credentials/${c.id}`);
      }
    } finally {
      // The project's network carries no label of ours: remove it by the compose label.
      try {
        const nets = docker('network', 'ls', '-q', '--filter', `label=com.docker.compose.project=${stackName}`).split('\n').filter(Boolean);
        if (nets.length) docker('network', 'rm', ...nets);
      } catch {
        // gone already
      }
      gitDaemon?.kill();
      if (gitDir) rmSync(gitDir, { recursive: true, force: true });
      await h.stop();
    }
  });

  it('signs in and shows the stack list', async () => {
    await h.signIn();
    await h.open('/stacks', 'Stacks');
    // The engine is shared: other compose projects may be listed, never this run's stack.
    await page.locator('table, .empty').first().waitFor();
    assert.equal(await page.getByRole('link', { name: stackName, exact: true }).count(), 0);
    await h.checkA11y('stacks (before)');
  });

  it('writes a compose file in the editor: a lint error for broken YAML, gone once fixed', async () => {
    await page.getByRole('link', { name: 'New stack' }).click();
    await page.getByRole('heading', { level: 1, name: 'New stack' }).waitFor();
    await page.getByLabel('Name', { exact: true }).fill(stackName);
    await editor().waitFor();

    await setEditor('services:\n  web:\n    image: "berth-test/busybox:1\n');
    await page.getByText(/1 error in the compose file/).waitFor();
    await page.locator('.cm-lintRange-error').first().waitFor();
    assert.match(await page.locator('.problems li').first().innerText(), /^Line 3: .*quote/i);
    await h.checkA11y('stack editor with a lint error');
    await h.screenshot('stack-editor');

    await setEditor(composeOf(h.label));
    await page.getByText('No problems found.').waitFor();
    assert.equal(await page.locator('.cm-lintRange-error').count(), 0);
    assert.equal((await editor().innerText()).trim(), composeOf(h.label).trim(), 'the editor holds the typed document as typed');

    // Undo and redo (the editor's own history).
    await page.keyboard.press('Control+Z');
    assert.notEqual((await editor().innerText()).trim(), composeOf(h.label).trim(), 'undo takes the typing back');
    await page.keyboard.press('Control+Shift+Z');
    assert.equal((await editor().innerText()).trim(), composeOf(h.label).trim(), 'redo brings it again');
    await page.getByText('No problems found.').waitFor();
  });

  it('deploys with streamed output, then lists the stack as running', async () => {
    await page.getByRole('button', { name: 'Deploy', exact: true }).click();
    const log = page.getByRole('log', { name: `Deploy ${stackName} output` });
    await log.waitFor();
    await page.getByText(`Deploy ${stackName}: done.`).waitFor({ timeout: 90_000 });
    const output = await log.innerText();
    assert.match(output, /Started|Running|Created/, `compose output streamed:\n${output}`);
    await h.checkA11y('stack deployed');
    await h.screenshot('stack-deploy');

    await page.getByRole('link', { name: 'All stacks' }).last().click();
    await page.getByRole('heading', { level: 1, name: 'Stacks' }).waitFor();
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: stackName, exact: true }) });
    await row.getByText('running', { exact: true }).waitFor();
    await row.getByText('internal', { exact: true }).waitFor();
    assert.equal(projectContainers().length, 1);
    await h.checkA11y('stacks');
    await h.screenshot('stacks');
  });

  it('edits an env variable on the stack page', async () => {
    await page.getByRole('link', { name: stackName, exact: true }).click();
    await page.getByRole('heading', { level: 1, name: stackName }).waitFor();
    await page.getByRole('link', { name: new RegExp(`^${stackName}-web-1`) }).waitFor();
    // No wait for the page's reads: a row added while a read of the variables is still on its way is kept
    // (it was replaced by that read before).
    await page.getByRole('button', { name: 'Add variable' }).click();
    await page.getByLabel('Name of variable 1').fill('GREETING');
    await page.getByLabel('Value of GREETING').fill('hello');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByText('Saved. Deploy or restart the stack to apply it.').waitFor();
    let raw = await h.api('GET', `/api/stacks/${stackName}/env/raw?env=${env}`);
    assert.equal(raw.body.content, 'GREETING=hello\n');

    await page.getByLabel('Value of GREETING').fill('hello world');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Saved. Deploy or restart the stack to apply it.' }).waitFor();
    await page.getByText(/^Unsaved changes/).waitFor({ state: 'detached' });
    await page.waitForFunction(async ([n, e]) => {
      const r = await fetch(`/api/stacks/${n}/env/raw?env=${e}`);
      return (await r.json()).content === "GREETING='hello world'\n";
    }, [stackName, env]);
    raw = await h.api('GET', `/api/stacks/${stackName}/env/raw?env=${env}`);
    assert.equal(raw.body.content, "GREETING='hello world'\n");
    await h.checkA11y('stack page');
  });

  it('fits a phone and passes axe in the dark theme', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.emulateMedia({ colorScheme: 'dark' });
    try {
      for (const p of [`/stacks/${stackName}`, '/stacks/new', '/stacks']) {
        await h.open(p);
        if (p !== '/stacks') await editor().waitFor();
        assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), 'dark');
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        assert.ok(overflow <= 1, `${p} scrolls sideways on a phone by ${overflow}px`);
        await h.checkA11y(`${p} (phone, dark)`);
      }
      await h.open(`/stacks/${stackName}`, stackName);
      await editor().waitFor();
      await h.screenshot('stack-phone-dark');
    } finally {
      await page.emulateMedia({ colorScheme: 'light' });
      await page.setViewportSize({ width: 1280, height: 800 });
    }
    await h.open(`/stacks/${stackName}`, stackName);
  });

  it('stops the stack and deletes it with its volumes through the confirmation', async () => {
    await page.getByRole('button', { name: 'Stop', exact: true }).click();
    await page.getByText(`Stop ${stackName}: done.`).waitFor({ timeout: 60_000 });
    await page.locator('.head .badge', { hasText: 'stopped' }).waitFor();
    assert.equal(docker('ps', '-q', '--filter', `label=com.docker.compose.project=${stackName}`), '', 'no container of it runs');
    const volume = `${stackName}_data`;
    assert.equal(docker('volume', 'ls', '-q', '--filter', `name=^${volume}$`), volume, 'its named volume exists');

    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    const dialog = page.getByRole('dialog', { name: `Delete stack ${stackName}?` });
    await dialog.getByRole('checkbox', { name: /Remove volumes/ }).check();
    await h.checkA11y('delete stack dialog');
    await dialog.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.waitForURL((u) => u.pathname === '/stacks');
    await page.getByRole('heading', { level: 1, name: 'Stacks' }).waitFor();
    await page.locator('table, .empty').first().waitFor();
    assert.equal(await page.getByRole('link', { name: stackName, exact: true }).count(), 0);
    assert.deepEqual(projectContainers(), []);
    assert.equal(docker('volume', 'ls', '-q', '--filter', `name=^${volume}$`), '', 'its volume is gone');
    const list = await h.api('GET', `/api/stacks?env=${env}`);
    assert.ok(!list.body.some((s) => s.name === stackName));
  });

  it('creates and deletes a git credential and a repository', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Git', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Git' }).waitFor();
    await page.getByText(/No credentials yet/).waitFor();

    await page.getByRole('button', { name: 'New credential' }).click();
    const credForm = page.getByRole('form', { name: 'New credential' });
    await credForm.getByLabel('Name', { exact: true }).fill(credName);
    await credForm.getByLabel('Username').fill('robot');
    await credForm.getByLabel('Password or token').fill('not-a-real-token');
    await credForm.getByRole('button', { name: 'Create credential' }).click();
    const credRow = page.getByRole('row').filter({ has: page.getByRole('cell', { name: credName, exact: true }) });
    await credRow.getByText('password stored').waitFor();
    const creds = await h.api('GET', '/api/git/credentials');
    assert.ok(!JSON.stringify(creds.body).includes('not-a-real-token'), 'the secret is never read back');

    await page.getByRole('tab', { name: 'Repositories' }).click();
    await page.getByText('No repositories yet.').waitFor();
    await page.getByRole('button', { name: 'New repository' }).click();
    const repoForm = page.getByRole('form', { name: 'New repository' });
    await repoForm.getByLabel('Name', { exact: true }).fill(repoName);
    await repoForm.getByLabel('URL').fill('https://git.invalid/berth/e2e.git');
    await repoForm.getByLabel('Branch').fill('main');
    await repoForm.getByLabel('Credential').selectOption({ label: `${credName} (password)` });
    await repoForm.getByRole('checkbox', { name: /Webhook/ }).check();
    await repoForm.getByRole('button', { name: 'Create repository' }).click();
    const secret = await page.getByLabel('Webhook secret').inputValue();
    assert.match(secret, /^[0-9a-f]{64}$/);
    assert.match(await page.getByLabel('Webhook URL').inputValue(), /\/api\/git\/webhook\/\d+$/);
    const repoRow = page.getByRole('row').filter({ has: page.getByRole('cell', { name: repoName, exact: true }) });
    await repoRow.getByRole('cell', { name: credName, exact: true }).waitFor();
    await h.checkA11y('git repositories');

    // Sync: the host does not resolve, so the fetch fails and the row says why.
    await repoRow.getByRole('button', { name: `Sync ${repoName}` }).click();
    await page.getByRole('alert').filter({ hasText: `Sync of ${repoName} failed:` }).waitFor({ timeout: 60_000 });
    await repoRow.getByText(/Last fetch failed/).waitFor();

    // A real repository over git:// (git daemon; that protocol takes no credential).
    gitDir = mkdtempSync(path.join(os.tmpdir(), 'berth-e2e-git-'));
    const git = (cwd, ...args) =>
      execFileSync('git', ['-c', 'user.email=e2e@example.test', '-c', 'user.name=e2e', ...args], { cwd, encoding: 'utf8' }).trim();
    git(gitDir, 'init', '-q', '--bare', '--initial-branch=main', 'e2e.git');
    git(gitDir, 'init', '-q', '--initial-branch=main', 'work');
    writeFileSync(path.join(gitDir, 'work', 'compose.yaml'), composeOf(h.label));
    git(path.join(gitDir, 'work'), 'add', '-A');
    git(path.join(gitDir, 'work'), 'commit', '-q', '-m', 'e2e');
    git(path.join(gitDir, 'work'), 'push', '-q', path.join(gitDir, 'e2e.git'), 'main');
    const head = git(path.join(gitDir, 'work'), 'rev-parse', 'HEAD');
    const port = await freePort();
    gitDaemon = spawn('git', ['daemon', '--reuseaddr', '--export-all', '--listen=127.0.0.1', `--port=${port}`, `--base-path=${gitDir}`, gitDir], {
      stdio: 'ignore',
    });
    await repoRow.getByRole('button', { name: `Edit ${repoName}` }).click();
    const editForm = page.getByRole('form', { name: `Edit repository ${repoName}` });
    await editForm.getByLabel('URL').fill(`git://127.0.0.1:${port}/e2e.git`);
    await editForm.getByLabel('Credential').selectOption({ label: 'None (public repository)' });
    await editForm.getByRole('button', { name: 'Save repository' }).click();
    await editForm.waitFor({ state: 'detached' });
    await repoRow.getByRole('cell', { name: `git://127.0.0.1:${port}/e2e.git` }).waitFor();
    // The daemon may need a moment to listen: sync again until the fetch succeeds.
    for (let i = 0; ; i++) {
      await repoRow.getByRole('button', { name: `Sync ${repoName}` }).click();
      await repoRow.getByRole('button', { name: `Sync ${repoName}` }).and(page.locator(':enabled')).waitFor({ timeout: 60_000 });
      if (await repoRow.getByText(head.slice(0, 12)).count()) break;
      assert.ok(i < 20, 'the repository served by git daemon was never fetched');
      await page.waitForTimeout(250);
    }
    assert.equal(await repoRow.getByText(/Last fetch failed/).count(), 0);
    const synced = await h.api('GET', '/api/git/repositories');
    const rec = synced.body.find((r) => r.name === repoName);
    assert.equal(rec.syncStatus, 'success');
    assert.equal(rec.syncCommit, head);
    await h.checkA11y('git repositories after a sync');
    await h.screenshot('git');

    // A git stack from it on the new-stack page (not deployed: only a clone),
    // its page (source, Test of the files at the branch head), its delete.
    const gitStack = `${stackName}-git`;
    await h.open('/stacks/new', 'New stack');
    await page.getByLabel('Name', { exact: true }).fill(gitStack);
    await page.getByRole('radio', { name: /Git repository/ }).check();
    await page.getByLabel('Repository', { exact: true }).selectOption({ label: `${repoName} — git://127.0.0.1:${port}/e2e.git` });
    await page.getByRole('checkbox', { name: /Webhook: deploy on push/ }).uncheck();
    await page.getByRole('checkbox', { name: /Deploy now/ }).uncheck();
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await page.getByRole('heading', { name: `Git stack ${gitStack} created` }).waitFor({ timeout: 60_000 });
    await page.getByRole('link', { name: 'Open the git stack' }).click();
    await page.getByRole('heading', { level: 1, name: gitStack }).waitFor();
    await page.locator('dd').filter({ hasText: `git://127.0.0.1:${port}/e2e.git` }).waitFor();
    await page.getByRole('button', { name: 'Test', exact: true }).click();
    const tested = page.getByRole('status', { name: 'Test result' });
    await tested.getByText(`Test passed at commit ${head.slice(0, 12)} of main.`).waitFor({ timeout: 60_000 });
    await tested.getByText(/Compose file\s*compose.yaml: found/).waitFor();
    await h.checkA11y('git stack');
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByRole('dialog', { name: `Delete stack ${gitStack}?` }).getByRole('button', { name: 'Delete' }).click();
    await page.waitForURL((u) => u.pathname === '/stacks');
    const gitStacks = await h.api('GET', '/api/git/stacks');
    assert.ok(!gitStacks.body.some((g) => g.stackName === gitStack), 'the git stack is deleted');
    await h.open('/git#repositories', 'Git');

    await repoRow.getByRole('button', { name: `Delete ${repoName}` }).click();
    await page.getByRole('dialog', { name: `Delete repository ${repoName}?` }).getByRole('button', { name: 'Delete' }).click();
    await page.getByText('No repositories yet.').waitFor();

    await page.getByRole('tab', { name: 'Credentials' }).click();
    await credRow.getByRole('button', { name: `Delete ${credName}` }).click();
    await page.getByRole('dialog', { name: `Delete credential ${credName}?` }).getByRole('button', { name: 'Delete' }).click();
    await page.getByText(/No credentials yet/).waitFor();
    await h.checkA11y('git credentials');
    const repos = await h.api('GET', '/api/git/repositories');
    assert.deepEqual(repos.body, []);
  });

  it('raised no error in the page', () => {
    assert.deepEqual(h.pageErrors, []);
  });
});
