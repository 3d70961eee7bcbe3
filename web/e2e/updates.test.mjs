// Browser test of the updates workflow's environment settings and of the kept
// registry test (harness: lib/harness.mjs), against a real berth: the
// environment page's update check and time zone sections save and survive a
// reload (Admin), an Operator sees them read-only, a registry's connection
// test is still shown after a reload, the page is axe clean and fits a
// phone.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startConsole } from './lib/harness.mjs';

const env = process.env;
const registry = env.BERTH_TEST_REGISTRY || '';

let h;
let page;

describe('updates: environment settings', { timeout: 300_000 }, () => {
  before(async () => {
    h = await startConsole();
    page = h.page;
    await h.signIn();
  });
  after(async () => {
    await h?.stop();
  });

  it('saves the update check and the time zone, each on its own, and keeps them after a reload', async () => {
    await h.open('/environments/1');
    const uc = page.getByRole('region', { name: 'Update check' });
    const cron = uc.getByLabel('Schedule (cron)');
    await cron.waitFor({ timeout: 30_000 });
    await cron.fill('0 5 * * *');
    await uc.getByRole('button', { name: 'Save update check' }).click();
    await uc.getByText('Update check saved.').waitFor();

    const tz = page.getByRole('region', { name: 'Time zone' });
    await tz.getByLabel('Time zone (IANA name)').fill('Mars/Olympus');
    await tz.getByRole('button', { name: 'Save time zone' }).click();
    await tz.getByRole('alert').getByText('Invalid timezone').waitFor();
    await tz.getByLabel('Time zone (IANA name)').fill('Europe/Berlin');
    await tz.getByRole('button', { name: 'Save time zone' }).click();
    await tz.getByText('Time zone saved.').waitFor();

    await page.reload();
    await page.getByRole('region', { name: 'Update check' }).getByLabel('Schedule (cron)').waitFor({ timeout: 30_000 });
    assert.equal(await page.getByRole('region', { name: 'Update check' }).getByLabel('Schedule (cron)').inputValue(), '0 5 * * *');
    assert.equal(await page.getByRole('region', { name: 'Time zone' }).getByLabel('Time zone (IANA name)').inputValue(), 'Europe/Berlin');
    await h.checkA11y('environment settings');

    await page.setViewportSize({ width: 375, height: 800 });
    try {
      await page.getByRole('region', { name: 'Disk space warning' }).scrollIntoViewIfNeeded();
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 1, `the environment page scrolls sideways on a phone by ${overflow}px`);
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });

  it('shows a registry test result after a reload', { skip: registry ? false : 'needs BERTH_TEST_REGISTRY' }, async () => {
    const name = `kept-${h.label}`;
    const created = await h.api('POST', '/api/registries', {
      name,
      url: registry,
      username: env.BERTH_TEST_REGISTRY_USER || '',
      password: env.BERTH_TEST_REGISTRY_PASSWORD || '',
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    await h.open('/registries', 'Registries');
    await page.getByRole('button', { name: `Test ${name}` }).click();
    const row = page.getByRole('row').filter({ hasText: name });
    await row.getByText('connected', { exact: true }).waitFor({ timeout: 30_000 });
    await page.reload();
    await page.getByRole('row').filter({ hasText: name }).getByText('connected', { exact: true }).waitFor({ timeout: 30_000 });
    await h.api('DELETE', `/api/registries/${created.body.id}`);
  });

  it('shows the settings read-only to an Operator', async () => {
    await h.signInAsNewUser('Operator');
    await h.open('/environments/1');
    await page.getByText('You may view these settings, not change them.').waitFor({ timeout: 30_000 });
    assert.equal(await page.getByRole('button', { name: /^Save (update check|image prune|time zone|disk warning)$/ }).count(), 0);
    assert.ok(await page.getByRole('region', { name: 'Update check' }).getByLabel('Schedule (cron)').isDisabled());
  });
});
