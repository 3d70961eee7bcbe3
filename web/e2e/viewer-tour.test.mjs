// Browser test of the permission-aware console (issue 22, point 4): a Viewer
// and an Operator walk every screen of the navigation; the Viewer sees no
// control that would change anything (New, Stop, Remove, Deploy, terminal,
// environment editing …), the Operator sees the workload controls but none
// of the administration ones. The session's per-environment permissions
// decide (session.can); the server still refuses what a hand-made request
// asks. Needs: bin/berth, Chromium.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { docker, removeLabelled, startConsole, testImage } from './lib/harness.mjs';

// The names of controls that change something: none may be shown to a Viewer.
const mutating =
  /^(New|Create|Add|Remove|Delete|Stop|Start|Restart|Kill|Pause|Unpause|Edit|Deploy|Redeploy|Pull|Push|Prune|Update|Check for updates|Terminal|Open terminal|Save|Import|Upload|Rename|Duplicate|Recreate|Run|Scan|Connect|Disconnect|Sync|Test|Tag|Generate|Rotate|Adopt|Down|Up)\b|^Clear…/i;

// Every screen of the navigation a non-admin reaches.
const screens = [
  ['/', 'Dashboard'],
  ['/containers', 'Containers'],
  ['/images', 'Images'],
  ['/vulnerabilities', 'Vulnerabilities'],
  ['/volumes', 'Volumes'],
  ['/networks', 'Networks'],
  ['/stacks', 'Stacks'],
  ['/templates', 'Templates'],
  ['/config-sets', 'Config sets'],
  ['/schedules', 'Schedules'],
  ['/activity', 'Activity'],
  ['/backups', 'Backups'],
  ['/git', 'Git'],
  ['/registries', 'Registries'],
  ['/notifications', 'Notifications'],
  ['/environments', 'Environments'],
  ['/environments/1', null],
  ['/labels', 'Labels'],
];

let h;
let page;
let container;

/** The visible buttons and button-like links of the page's main region whose names change something. */
async function mutatingControls() {
  const names = await page.locator('main').evaluate((main) => {
    const out = [];
    for (const el of main.querySelectorAll('button, a[role="button"], a.button, input[type="submit"], input[role="switch"]:not([disabled])')) {
      const r = el.getBoundingClientRect();
      const style = getComputedStyle(el);
      if (r.width === 0 || r.height === 0 || style.visibility === 'hidden') continue;
      const name = (el.getAttribute('aria-label') || el.textContent || el.value || '').trim();
      out.push(el.getAttribute('role') === 'switch' ? `Edit ${name}` : name);
    }
    return out;
  });
  return names.filter((n) => mutating.test(n));
}

describe('permission-aware console', { timeout: 300_000 }, () => {
  before(async () => {
    h = await startConsole();
    page = h.page;
    container = `e2e-tour-${h.label}`;
    docker('run', '-d', '--name', container, '--label', `berth.test=${h.label}`, testImage, 'sleep', '600');
    docker('volume', 'create', '--label', `berth.test=${h.label}`, `e2e-tour-${h.label}`);
    await h.signIn();
  });

  after(async () => {
    removeLabelled(h?.label);
    try {
      docker('volume', 'rm', '-f', `e2e-tour-${h.label}`);
    } catch {
      // gone already
    }
    await h?.stop();
  });

  async function tour(role) {
    const found = {};
    for (const [p, heading] of screens) {
      await h.open(p, heading ?? undefined);
      await h.settled();
      const bad = await mutatingControls();
      if (bad.length) found[p] = bad;
    }
    await h.open(`/containers/${container}`);
    await page.getByRole('heading', { level: 1 }).waitFor();
    await h.settled();
    const detail = await mutatingControls();
    if (detail.length) found[`/containers/${container}`] = detail;
    return found;
  }

  it('shows a Viewer no control that changes anything, on any screen', async () => {
    await h.signInAsNewUser('Viewer');
    const found = await tour('Viewer');
    assert.deepEqual(found, {}, `controls a Viewer may not use:\n${JSON.stringify(found, null, 1)}`);
    await h.checkA11y('viewer, containers');
  });

  it('shows an Operator the workload controls but no administration ones', async () => {
    await h.signInAsNewUser('Operator');
    await h.open('/volumes', 'Volumes');
    await page.getByRole('button', { name: 'New volume' }).waitFor();
    await h.open('/networks', 'Networks');
    await page.getByRole('button', { name: 'New network' }).waitFor();
    await h.open('/environments', 'Environments');
    await h.settled();
    const envControls = await mutatingControls();
    assert.deepEqual(envControls, [], 'an Operator does not edit environments');
  });
});
