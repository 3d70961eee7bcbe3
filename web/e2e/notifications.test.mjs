// Browser test of the Notifications screen (harness: lib/harness.mjs): a
// webhook channel pointing at a real HTTP receiver started by this test is
// created through the console, tested from its form and from its row (the
// receiver gets each message), its URL shown nowhere, subscribed to by the
// local environment, which then routes a test event to it; the channel is
// deleted. axe-core checks the screen and the form.
//
// Needs: the berth binary (BERTH_BIN), a Docker engine and Chromium
// (scripts/test-env.sh).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { startConsole } from './lib/harness.mjs';

let h;
let page;
let receiver;
const received = [];

describe('notifications', { timeout: 300_000 }, () => {
  before(async () => {
    receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        try {
          received.push({ path: req.url, body: JSON.parse(body) });
        } catch {
          received.push({ path: req.url, body });
        }
        res.writeHead(204).end();
      });
    });
    await new Promise((r) => receiver.listen(0, '127.0.0.1', r));
    h = await startConsole();
    page = h.page;
    await h.signIn();
  });

  after(async () => {
    await h?.stop();
    receiver?.close();
  });

  it('creates a webhook channel, tests it, subscribes an environment and deletes it', async () => {
    const url = `http://127.0.0.1:${receiver.address().port}/hook?token=e2e-${h.label}`;
    const name = `e2e-${h.label}`;
    await h.open('/notifications', 'Notifications');
    await page.getByText('No notification channel yet.').waitFor();
    await h.checkA11y('notifications (empty)');

    await page.getByRole('button', { name: 'Add channel' }).click();
    const dialog = page.getByRole('dialog', { name: 'Add a notification channel' });
    await dialog.getByLabel('Name').fill(name);
    await dialog.getByLabel('Webhook URL').fill(url);
    await dialog.getByLabel('Container exited').check();
    await h.checkA11y('notification form');
    await dialog.getByRole('button', { name: 'Send a test' }).click();
    await dialog.getByText('Test message sent.').waitFor();
    assert.equal(received.length, 1);
    assert.equal(received[0].path, `/hook?token=e2e-${h.label}`);
    assert.equal(received[0].body.title, 'Berth test notification');
    await dialog.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').getByText(`Channel ${name} added.`).waitFor();

    const row = page.getByRole('row').filter({ hasText: name });
    await row.getByRole('button', { name: `Test ${name}` }).click();
    await row.getByText('sent', { exact: true }).waitFor();
    assert.equal(received.length, 2);
    assert.ok(!(await page.content()).includes(`e2e-${h.label}/hook`), 'the URL is not shown');
    const listed = await h.api('GET', '/api/notifications');
    assert.equal(listed.body[0].config.url, '********');
    assert.deepEqual(listed.body[0].eventTypes, ['container_exited']);

    const subs = page.getByRole('region', { name: 'Environment subscriptions' });
    await subs.getByLabel(`Notify ${name} (Webhook)`).check();
    await h.waitFor('the subscription', 10_000, async () => (await h.api('GET', '/api/environments/1/notifications')).body.length === 1);
    const trig = await h.api('POST', '/api/notifications/trigger-test', { environmentId: 1, eventType: 'container_exited' });
    assert.equal(trig.status, 200);
    await h.waitFor('the routed test event', 30_000, async () => received.some((m) => m.body.event === 'container_exited'));
    await h.checkA11y('notifications (one channel)');
    await h.screenshot('notifications');

    await row.getByRole('button', { name: `Delete ${name}` }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('status').getByText(`Channel ${name} deleted.`).waitFor();
    assert.deepEqual((await h.api('GET', '/api/notifications')).body, []);
    assert.deepEqual(h.pageErrors, []);
  });
});
