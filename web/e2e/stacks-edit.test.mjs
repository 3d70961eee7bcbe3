// Browser test of editing a stack safely (issue 22 point 6; harness:
// lib/harness.mjs): a two-service stack (web depends on db, a named volume)
// is created through the API; on its page the compose file AND a variable are
// changed and one "Save and redeploy" stores both and recreates the
// containers (checked with docker inspect: the new command and the variable
// in the container's env); leaving with unsaved changes asks (Cancel stays,
// Leave goes); the editor offers `healthcheck` inside a service; the Graph
// tab draws the services and the depends_on edge; a Viewer sees the compose
// file read-only with no Save, Deploy or Delete; the page fits a phone; axe
// checks each step. Everything the run creates carries its berth.test label
// and is removed in after().
//
// Needs: bin/berth (make build), a Docker engine, Chromium and the test image.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { docker, startConsole, testImage } from './lib/harness.mjs';

let h;
let page;
let env;
let stackName;

const composeOf = (label, sleep) => `volumes:
  data:
    labels:
      berth.test: "${label}"
services:
  db:
    image: ${testImage}
    command: sleep 600
    labels:
      berth.test: "${label}"
    volumes:
      - data:/data
  web:
    image: ${testImage}
    command: sleep ${sleep}
    depends_on: [db]
    environment:
      GREETING: \${GREETING:-none}
    labels:
      berth.test: "${label}"
`;

const editor = () => page.locator('.cm-content');

/** The running container of a service of the stack. */
function containerOf(service) {
  const id = docker('ps', '-q', '--filter', `label=com.docker.compose.project=${stackName}`, '--filter', `label=com.docker.compose.service=${service}`);
  assert.ok(id, `a running container of ${service}`);
  return JSON.parse(docker('inspect', id.split('\n')[0]))[0];
}

describe('stack editing', { timeout: 300_000 }, () => {
  before(async () => {
    h = await startConsole();
    page = h.page;
    stackName = `e2e-edit-${h.label}`;
    const envs = await h.api('GET', '/api/environments');
    env = envs.body[0]?.id;
    assert.ok(env, 'an environment exists');
    const r = await h.api('POST', `/api/stacks?env=${env}`, { name: stackName, compose: composeOf(h.label, 700) });
    assert.ok(r.status < 300, JSON.stringify(r.body));
    await h.signIn();
  });

  after(async () => {
    if (!h) return;
    try {
      await h.api('DELETE', `/api/stacks/${stackName}?env=${env}&force=true`);
    } finally {
      try {
        const nets = docker('network', 'ls', '-q', '--filter', `label=com.docker.compose.project=${stackName}`).split('\n').filter(Boolean);
        if (nets.length) docker('network', 'rm', ...nets);
      } catch {
        // gone already
      }
      await h.stop();
    }
  });

  it('lists the stack with an honest state', async () => {
    await h.open('/stacks', 'Stacks');
    const row = page.getByRole('row').filter({ has: page.getByRole('link', { name: stackName, exact: true }) });
    await row.getByText('running', { exact: true }).waitFor({ timeout: 60_000 });
    await row.getByText('2 / 2 running').waitFor();
    await h.checkA11y('stacks list');
  });

  it('one Save and redeploy stores the compose change and a variable, and recreates with both', async () => {
    await page.getByRole('link', { name: stackName, exact: true }).click();
    await page.getByRole('heading', { level: 1, name: stackName }).waitFor();
    await editor().waitFor();
    const before = containerOf('web').Id;

    // The compose file: web sleeps 701 instead of 700 (typed into the editor).
    await editor().getByText('sleep 700').click();
    await page.keyboard.press('End');
    await page.keyboard.press('Backspace');
    await page.keyboard.type('1');
    await page.getByText('Unsaved changes: compose file', { exact: true }).waitFor();
    // A variable, in the other section.
    await page.getByRole('button', { name: 'Add variable' }).click();
    await page.getByLabel('Name of variable 1').fill('GREETING');
    await page.getByLabel('Value of GREETING').fill('hello from berth');
    await page.getByText('Unsaved changes: compose file and variables').waitFor();
    await h.checkA11y('stack page with unsaved changes');

    await page.getByRole('button', { name: 'Save and redeploy' }).click();
    await page.getByText('Saved and redeployed.').waitFor({ timeout: 120_000 });
    await page.getByText(/^Unsaved changes/).waitFor({ state: 'detached' });

    const compose = await h.api('GET', `/api/stacks/${stackName}/compose?env=${env}`);
    assert.match(compose.body.content, /command: sleep 701\n/);
    const raw = await h.api('GET', `/api/stacks/${stackName}/env/raw?env=${env}`);
    assert.equal(raw.body.content, "GREETING='hello from berth'\n");
    const web = containerOf('web');
    assert.notEqual(web.Id, before, 'web was recreated');
    assert.deepEqual(web.Config.Cmd, ['sleep', '701']);
    assert.ok(web.Config.Env.includes('GREETING=hello from berth'), `the variable reached the container: ${web.Config.Env}`);
  });

  it('asks before leaving with unsaved changes: Cancel stays, Leave goes', async () => {
    await page.getByLabel('Value of GREETING').fill('changed, not saved');
    await page.getByRole('link', { name: 'All stacks' }).click();
    const dialog = page.getByRole('dialog', { name: 'Leave without saving?' });
    await dialog.waitFor();
    await h.checkA11y('leave dialog');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
    assert.equal(new URL(page.url()).pathname, `/stacks/${stackName}`);
    assert.equal(await page.getByLabel('Value of GREETING').inputValue(), 'changed, not saved');

    // The browser's back button asks the same.
    await page.goBack();
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    assert.equal(new URL(page.url()).pathname, `/stacks/${stackName}`);
    assert.equal(await page.getByLabel('Value of GREETING').inputValue(), 'changed, not saved');

    // Switching environment asks the same; Cancel keeps this one selected.
    const other = await h.api('POST', '/api/environments', { name: `e2e-edit-other-${h.label}`, connectionType: 'agent-edge' });
    assert.equal(other.status, 201, JSON.stringify(other.body));
    try {
      await page.reload();
      await page.getByLabel('Value of GREETING').fill('changed, not saved');
      const select = page.locator('#env-select');
      await select.selectOption(String(other.body.id));
      await dialog.waitFor();
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      await dialog.waitFor({ state: 'detached' });
      assert.equal(await select.inputValue(), String(env), 'the select still shows this environment');
      assert.equal(await page.getByLabel('Value of GREETING').inputValue(), 'changed, not saved');
    } finally {
      await h.api('DELETE', `/api/environments/${other.body.id}`);
    }

    await page.getByRole('link', { name: 'All stacks' }).click();
    await dialog.getByRole('button', { name: 'Leave' }).click();
    await page.waitForURL((u) => u.pathname === '/stacks');
    await page.getByRole('heading', { level: 1, name: 'Stacks' }).waitFor();
    const raw = await h.api('GET', `/api/stacks/${stackName}/env/raw?env=${env}`);
    assert.equal(raw.body.content, "GREETING='hello from berth'\n", 'the dropped change was not saved');
  });

  it('offers healthcheck when completing a key inside a service', async () => {
    await h.open(`/stacks/${stackName}`, stackName);
    await editor().waitFor();
    await editor().click();
    await page.keyboard.press('Control+End'); // the last line, empty, after web's labels
    await page.keyboard.type('    hea');
    const options = page.locator('.cm-tooltip-autocomplete [role="option"]');
    await options.first().waitFor();
    const labels = await options.allInnerTexts();
    assert.ok(labels.includes('healthcheck'), `offered: ${labels.join(', ')}`);
    // CodeMirror takes no Enter for 75 ms after the list opens (its interactionDelay, against accidental
    // accepts): a test that presses at once on a fast turn gets a new line instead.
    await page.waitForTimeout(200);
    await page.keyboard.press('Enter');
    await h.waitFor('healthcheck inserted', 5_000, async () => /\n {4}healthcheck:\n/.test(await editor().innerText()));
    await page.getByRole('button', { name: 'Revert' }).click();
    await page.getByText(/^Unsaved changes/).waitFor({ state: 'detached' });
  });

  it('draws the service graph with the depends_on edge, and a list of the same', async () => {
    await page.getByRole('tab', { name: 'Graph' }).click();
    const graph = page.getByRole('group', { name: 'Service graph' });
    await graph.waitFor();
    await graph.getByRole('img', { name: /^Service web; image .*; depends on db; networks default/ }).waitFor();
    await graph.getByRole('img', { name: /^Service db;.*volumes data/ }).waitFor();
    await graph.getByRole('img', { name: 'Volume data; used by db' }).waitFor();
    assert.equal(await page.locator('path[data-edge="web->db"]').count(), 1);
    // Each node takes the focus with its label.
    await graph.getByRole('img', { name: /^Service db/ }).focus();
    assert.match(await page.evaluate(() => document.activeElement?.getAttribute('aria-label') ?? ''), /^Service db/);
    await page.getByRole('list', { name: 'As a list' }).getByText(/depends on db/).waitFor();
    await h.checkA11y('service graph');
    await h.screenshot('stack-graph');
  });

  it('fits a phone', async () => {
    await page.setViewportSize({ width: 375, height: 812 });
    try {
      for (const p of [`/stacks/${stackName}`, '/stacks']) {
        await h.open(p);
        await page.locator('table').first().waitFor();
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        assert.ok(overflow <= 1, `${p} scrolls sideways on a phone by ${overflow}px`);
        await h.checkA11y(`${p} (phone)`);
      }
      await h.open(`/stacks/${stackName}`, stackName);
      await page.getByRole('tab', { name: 'Graph' }).click();
      await page.getByRole('group', { name: 'Service graph' }).waitFor();
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 1, `the graph scrolls the page sideways on a phone by ${overflow}px`);
      await h.screenshot('stack-edit-phone');
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });

  it('shows a Viewer the compose file read-only, with no Save, Deploy or Delete', async () => {
    await h.signInAsNewUser('Viewer');
    await h.open(`/stacks/${stackName}`, stackName);
    await page.locator('.cm-content[contenteditable="false"]').waitFor();
    await page.getByText('You may read this compose file, not change it.').waitFor();
    assert.equal(await page.getByLabel('Value of GREETING').isDisabled(), true);
    for (const name of ['Save', 'Save and redeploy', 'Deploy', 'Stop', 'Delete', 'Down']) {
      assert.equal(await page.getByRole('button', { name, exact: true }).count(), 0, `a Viewer sees no ${name}`);
    }
    await h.checkA11y('stack page (Viewer)');
    await h.open('/stacks', 'Stacks');
    await page.getByRole('link', { name: stackName, exact: true }).waitFor();
    assert.equal(await page.getByRole('link', { name: 'New stack' }).count(), 0);
    assert.equal(await page.getByRole('button', { name: `Delete ${stackName}` }).count(), 0);
  });

  it('raised no error in the page', () => {
    assert.deepEqual(h.pageErrors, []);
  });
});
