// Browser test of the audit log's Live view (harness: lib/harness.mjs): with
// an enterprise license (the audit log is licensed; the test key is trusted
// by a berth built with -X main.licenseKeysEnv=BERTH_LICENSE_KEYS, as make
// e2e's bin/berth-e2e is), the Audit log screen follows GET
// /api/audit/events, and a volume created and removed through the API by
// another session appears at the top of the table without a reload.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { makeLicense } from './lib/fixtures.mjs';
import { startConsole } from './lib/harness.mjs';

const ci = process.env.CI === 'true';

describe('audit log live view', { timeout: 120_000 }, () => {
  let h;
  let licensed = false;

  before(async () => {
    const lic = makeLicense('e2e-audit');
    h = await startConsole({ env: { BERTH_LICENSE_KEYS: lic.key } });
    const res = await h.api('POST', '/api/license', { license: lic.doc });
    licensed = res.status === 200;
    await h.signIn();
  });

  after(async () => {
    await h?.stop();
    if (h) assert.deepEqual(h.pageErrors, [], 'no uncaught errors in the page');
  });

  it('shows an audited change made elsewhere as it happens', async (t) => {
    if (!licensed) {
      assert.ok(!ci, `the audit log needs an enterprise license, and this berth (${process.env.BERTH_BIN || 'bin/berth'}) does not trust the test key`);
      t.skip('community edition: this berth does not trust the test key (BERTH_LICENSE_KEYS)');
      return;
    }
    const page = h.page;
    await h.open('/audit', 'Audit log');
    const live = page.getByRole('checkbox', { name: 'Live' });
    // The server notes where the log stands before it answers the stream's
    // headers: once the response has arrived, every later entry is followed.
    const opened = page.waitForResponse((r) => r.url().includes('/api/audit/events') && r.status() === 200);
    await live.check();
    await opened;
    assert.equal(await live.isChecked(), true);

    // Another session (the harness's own API sign-in) changes something audited.
    const name = `audit-live-${h.label}`;
    const created = await h.api('POST', '/api/volumes?env=1', { name, labels: { 'berth.test': h.label } });
    assert.equal(created.status, 200, `create the volume: ${created.status} ${JSON.stringify(created.body)}`);
    const table = page.getByRole('table');
    const createdRow = table.getByRole('row').filter({ hasText: 'volume.create' }).filter({ hasText: name });
    await createdRow.first().waitFor();

    const removed = await h.api('DELETE', `/api/volumes/${name}?env=1`);
    assert.equal(removed.status, 200, `remove the volume: ${removed.status} ${JSON.stringify(removed.body)}`);
    const removedRow = table.getByRole('row').filter({ hasText: 'volume.remove' }).filter({ hasText: name });
    await removedRow.first().waitFor();

    // Newest first: the removal is above the creation, both without a reload.
    const texts = await table.getByRole('row').allTextContents();
    const iDelete = texts.findIndex((r) => r.includes('volume.remove') && r.includes(name));
    const iCreate = texts.findIndex((r) => r.includes('volume.create') && r.includes(name));
    assert.ok(iDelete > 0 && iDelete < iCreate, `rows in order: delete at ${iDelete}, create at ${iCreate}`);
    assert.equal(await live.isChecked(), true, 'live stays on');
    await h.checkA11y('audit live');
  });
});
