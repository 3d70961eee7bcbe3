// Browser test of the Config sets and Labels screens (harness: lib/harness.mjs):
// sign in; open Config sets from the navigation; create a set with a plain and
// a secret variable, a label, a port and a restart policy; see the secret's
// value nowhere in the page nor in the API's answer (masked); a duplicate name
// is refused inline with the API's message; edit the set (the secret's box is
// empty, and the console sends the mask back, so the server keeps it); apply
// it in the container form and create the container; delete the set after
// confirming. Then the Labels screen: a label an environment carries shows
// with its count, and is defined with a colour; renamed through POST
// /api/labels it shows under its new name with its colour, and deleted it
// leaves the environment. axe-core checks the screens
// and the dialogs.
//
// Everything created on the engine carries berth.test=<run label>; stop()
// removes it. Needs: a berth binary (BERTH_BIN), a Docker engine, Chromium and
// the test image (BERTH_TEST_IMAGE).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { docker, startConsole, testImage } from './lib/harness.mjs';

let h;
let page;
let setName;
let secret;
let containerName;
let env;
let envLabels;
let envLabel;

const nav = () => page.getByRole('navigation', { name: 'Main' });
const rowOf = (name) => page.getByRole('table', { name: 'Config sets' }).getByRole('row').filter({ has: page.getByRole('rowheader', { name: name }) });

describe('config sets and labels screens', { timeout: 180_000 }, () => {
  before(async () => {
    h = await startConsole();
    page = h.page;
    setName = `e2e-set-${h.label}`;
    containerName = `e2e-cfg-${h.label}`;
    envLabel = `e2e-${h.label}`;
    secret = `s3cret-${randomBytes(8).toString('hex')}`;
    await h.signIn();
  });

  after(async () => {
    if (!h) return;
    try {
      if (env && envLabels) await h.api('PUT', `/api/environments/${env}`, { labels: envLabels });
    } finally {
      await h.stop();
    }
  });

  it('creates a config set with a secret that is never shown back', async () => {
    await nav().getByRole('link', { name: 'Config sets' }).click();
    await page.getByRole('heading', { level: 1, name: 'Config sets' }).waitFor();
    assert.equal(new URL(page.url()).pathname, '/config-sets');
    await page.getByText('No config set yet.').waitFor();

    await page.getByRole('button', { name: 'New config set' }).click();
    const dialog = page.getByRole('dialog', { name: 'New config set' });
    await dialog.waitFor();
    await dialog.getByLabel('Name', { exact: true }).fill(setName);
    await dialog.getByLabel('Description').fill('made by the browser test');
    await dialog.getByRole('button', { name: 'Add variable' }).click();
    await dialog.getByLabel('Variable 1 name').fill('GREETING');
    await dialog.getByLabel('Variable 1 value').fill('hello');
    await dialog.getByRole('button', { name: 'Add variable' }).click();
    await dialog.getByLabel('Variable 2 name').fill('API_TOKEN');
    await dialog.getByLabel('Variable 2 secret').check();
    assert.equal(await dialog.getByLabel('Variable 2 value').getAttribute('type'), 'password');
    await dialog.getByLabel('Variable 2 value').fill(secret);
    await dialog.getByRole('button', { name: 'Add label' }).click();
    await dialog.getByLabel('Label 1 name').fill('berth.test');
    await dialog.getByLabel('Label 1 value').fill(h.label);
    await dialog.getByRole('button', { name: 'Add port' }).click();
    await dialog.getByLabel('Port 1 container port').fill('8080');
    await dialog.getByLabel('Restart policy').selectOption('unless-stopped');
    await h.checkA11y('config set dialog');
    await h.screenshot('config-set-dialog');
    await dialog.getByRole('button', { name: 'Create', exact: true }).click();
    await page.getByText(`Config set ${setName} created.`).waitFor();
    await dialog.waitFor({ state: 'detached' });

    const row = rowOf(setName);
    await row.waitFor();
    const vars = row.getByRole('list', { name: `Variables of ${setName}` });
    await vars.getByText('GREETING=hello').waitFor();
    assert.match(await vars.innerText(), /API_TOKEN=.*\s*secret/);
    assert.ok(!(await page.content()).includes(secret), 'the secret value is not in the page');
    assert.match(await row.innerText(), /8080\/tcp/);
    assert.match(await row.innerText(), /unless-stopped/);
    await h.checkA11y('config sets');
    await h.screenshot('config-sets');

    const list = await h.api('GET', '/api/config-sets');
    const saved = list.body.find((c) => c.name === setName);
    assert.deepEqual(saved.envVars, [
      { key: 'GREETING', value: 'hello', isSecret: false },
      { key: 'API_TOKEN', value: '***', isSecret: true },
    ]);
  });

  it("refuses a second set of the same name with the API's message", async () => {
    await page.getByRole('button', { name: 'New config set' }).click();
    const dialog = page.getByRole('dialog', { name: 'New config set' });
    await dialog.getByLabel('Name', { exact: true }).fill(setName);
    await dialog.getByRole('button', { name: 'Create', exact: true }).click();
    await dialog.getByRole('alert').getByText(`A config set named '${setName}' already exists`).waitFor();
    await h.checkA11y('config set dialog with an error');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });
  });

  it('edits the set, keeping the secret it does not show', async () => {
    await rowOf(setName).getByRole('button', { name: `Edit ${setName}` }).click();
    const dialog = page.getByRole('dialog', { name: `Edit ${setName}` });
    await dialog.waitFor();
    const secretBox = dialog.getByLabel('Variable 2 value');
    assert.equal(await secretBox.inputValue(), '');
    assert.equal(await secretBox.getAttribute('type'), 'password');
    assert.ok(!(await dialog.innerHTML()).includes(secret), 'the secret value is not in the dialog');
    assert.ok(!(await dialog.innerHTML()).includes('***'), 'the mask is not shown either');
    await dialog.getByText('The stored value is kept unless you type a new one.').waitFor();
    await dialog.getByLabel('Variable 1 value').fill('bonjour');

    const put = page.waitForRequest((r) => r.method() === 'PUT' && new URL(r.url()).pathname.startsWith('/api/config-sets/'));
    await dialog.getByRole('button', { name: 'Save', exact: true }).click();
    const sent = JSON.parse((await put).postData());
    assert.deepEqual(sent.envVars, [
      { key: 'GREETING', value: 'bonjour', isSecret: false },
      { key: 'API_TOKEN', value: '***', isSecret: true },
    ]);
    await page.getByText(`Config set ${setName} saved.`).waitFor();
    await rowOf(setName).getByText('GREETING=bonjour').waitFor();
    const one = (await h.api('GET', '/api/config-sets')).body.find((c) => c.name === setName);
    assert.deepEqual(one.envVars.map((v) => [v.key, v.isSecret]), [['GREETING', false], ['API_TOKEN', true]]);
  });

  it('fits a phone screen', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      for (const [p, heading] of [['/config-sets', 'Config sets'], ['/labels', 'Labels']]) {
        await h.open(p, heading);
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        assert.ok(overflow <= 1, `${p} scrolls sideways on a phone by ${overflow}px`);
      }
      await h.open('/config-sets', 'Config sets');
      await rowOf(setName).getByRole('button', { name: `Edit ${setName}` }).click();
      await page.getByRole('dialog', { name: `Edit ${setName}` }).waitFor();
      await h.screenshot('config-set-dialog-phone');
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 1, `the config set dialog scrolls sideways on a phone by ${overflow}px`);
      await page.keyboard.press('Escape');
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });

  it('applies the set in the container form', async () => {
    await h.open('/containers/new', 'New container');
    await page.getByLabel('Apply config set').selectOption({ label: setName });
    await page.getByText(`Applied ${setName}. Enter the secret values of API_TOKEN: they are not copied.`).waitFor();
    assert.equal(await page.getByLabel('Variable 1 name').inputValue(), 'GREETING');
    assert.equal(await page.getByLabel('Variable 1 value').inputValue(), 'bonjour');
    assert.equal(await page.getByLabel('Variable 2 name').inputValue(), 'API_TOKEN');
    assert.equal(await page.getByLabel('Variable 2 value').inputValue(), '');
    assert.equal(await page.getByLabel('Restart policy').inputValue(), 'unless-stopped');
    await page.getByLabel('Variable 2 value').fill('typed-here');
    await page.getByLabel(/^Image/).fill(testImage);
    await page.getByLabel('Name', { exact: true }).fill(containerName);
    await page.getByLabel('Command', { exact: true }).fill('sleep 600');
    await page.getByLabel('Start after create').uncheck();
    await page.getByRole('button', { name: 'Create container' }).click();
    await page.waitForURL((u) => /^\/containers\/[0-9a-f]{64}$/.test(u.pathname));
    const envVars = JSON.parse(docker('inspect', '-f', '{{json .Config.Env}}', containerName));
    assert.ok(envVars.includes('GREETING=bonjour'), envVars.join(' '));
    assert.ok(envVars.includes('API_TOKEN=typed-here'), envVars.join(' '));
    assert.equal(docker('inspect', '-f', '{{index .Config.Labels "berth.test"}}', containerName), h.label);
    assert.equal(docker('inspect', '-f', '{{.HostConfig.RestartPolicy.Name}}', containerName), 'unless-stopped');
  });

  it('deletes the set after confirming', async () => {
    await h.open('/config-sets', 'Config sets');
    await rowOf(setName).getByRole('button', { name: `Delete ${setName}` }).click();
    const confirm = page.getByRole('dialog', { name: `Delete ${setName}?` });
    await confirm.waitFor();
    await h.checkA11y('config set delete dialog');
    await confirm.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByText(`Config set ${setName} deleted.`).waitFor();
    await page.getByText('No config set yet.').waitFor();
    const list = await h.api('GET', '/api/config-sets');
    assert.equal(list.body.filter((c) => c.name === setName).length, 0);
  });

  it('lists the labels environments carry and defines one with a colour', async () => {
    const envs = await h.api('GET', '/api/environments');
    env = envs.body[0]?.id;
    assert.ok(env, 'an environment exists');
    envLabels = envs.body[0].labels ?? [];
    const put = await h.api('PUT', `/api/environments/${env}`, { labels: [...envLabels, envLabel] });
    assert.equal(put.status, 200, JSON.stringify(put.body));

    await nav().getByRole('link', { name: 'Labels' }).click();
    await page.getByRole('heading', { level: 1, name: 'Labels' }).waitFor();
    const row = page.getByRole('table', { name: 'Labels' }).getByRole('row').filter({ has: page.getByRole('rowheader', { name: envLabel }) });
    await row.waitFor();
    assert.match(await row.innerText(), /1 environment\b/);
    assert.match(await row.innerText(), /only on environments/);
    await h.checkA11y('labels');

    await row.getByRole('button', { name: `Define ${envLabel}` }).click();
    assert.equal(await page.getByLabel('Label name').inputValue(), envLabel);
    await page.getByLabel('Colour', { exact: true }).fill('#22c55e');
    await page.getByRole('button', { name: 'Define label' }).click();
    await page.getByText(`Label ${envLabel} defined.`).waitFor();
    await row.getByText('#22c55e').waitFor();
    assert.match(await row.innerText(), /1 environment\b/);
    assert.ok(!/only on environments/.test(await row.innerText()));

    // The API's refusal shows next to the form.
    await page.getByLabel('Label name').fill(envLabel);
    await page.getByRole('button', { name: 'Define label' }).click();
    await page.getByRole('alert').getByText(`Label '${envLabel}' already exists`).waitFor();
    await h.checkA11y('labels with an error');
    await h.screenshot('labels');

    const labels = await h.api('GET', '/api/labels');
    const l = labels.body.labels.find((x) => x.label === envLabel);
    assert.equal(l.color, '#22c55e');
    assert.equal(l.count, 1);
    assert.deepEqual(l.environments.map((e) => e.envId), [env]);
    assert.notEqual(l.id, null);
    assert.equal(labels.body.colors[envLabel], '#22c55e');

    // The reference's bulk operations: a rename shows in the screen, a delete
    // takes the label off the environment.
    const renamed = `${envLabel}-renamed`;
    const rename = await h.api('POST', '/api/labels', { action: 'rename', oldLabel: envLabel, newLabel: renamed });
    assert.deepEqual(rename.body, { success: true, affected: 1 });
    await h.open('/labels', 'Labels');
    const renamedRow = page.getByRole('table', { name: 'Labels' }).getByRole('row').filter({ has: page.getByRole('rowheader', { name: renamed }) });
    await renamedRow.getByText('#22c55e').waitFor();
    const del = await h.api('POST', '/api/labels', { action: 'delete', label: renamed });
    assert.deepEqual(del.body, { success: true, affected: 1 });
    const after = await h.api('GET', `/api/environments/${env}`);
    assert.deepEqual(after.body.labels, envLabels);
  });

  it('raised no error in the page', () => {
    assert.deepEqual(h.pageErrors, []);
  });
});
