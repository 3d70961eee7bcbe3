import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../lib/api';
import * as sys from '../lib/api-system';
import { queryClient } from '../lib/query';
import { session } from '../lib/session.svelte';
import { stubApi, type StubApi } from '../test-api';
import { expectNoSeriousAxeViolations } from '../test-axe';
import SystemScreen from './SystemScreen.svelte';

let api: StubApi;

const use = (total: number, size: number): sys.DiskUse => ({ total, active: 1, size, reclaimable: size / 2 });

beforeEach(() => {
  session.session = { authenticated: true, authEnabled: true, user: { id: 1, username: 'admin', isAdmin: true } };
  session.environments = [{ id: 1, name: 'local' } as (typeof session.environments)[number]];
  session.envId = 1;
  api = stubApi({
    'GET /api/system': {
      version: '1.2.3', goVersion: 'go1.26', database: 'sqlite', startedAt: '2026-11-23T10:00:00Z', uptimeSeconds: 3 * 3600 + 120,
      enterprise: false, agentsConnected: 2, counts: { environments: 1, users: 4 }, jobs: { running: 0 },
    },
    'GET /api/changelog': [{ version: 'Unreleased', date: '', changes: ['Container file browser'] }],
    'GET /api/dependencies': {
      goVersion: 'go1.26.8', main: 'github.com/berth-dev/berth/server', dependencies: [{ name: 'github.com/gin-gonic/gin', version: 'v1.11.0' }],
    },
    'GET /api/health/database': { status: 'ok', healthy: true, dialect: 'sqlite', latencyMs: 0.42 },
    'GET /api/host': {
      name: 'dock1', os: 'Debian GNU/Linux 12', kernelVersion: '6.1.0-18-amd64', architecture: 'x86_64', cpus: 8,
      memTotal: 16 * 1024 ** 3, dockerVersion: '20.10.24', apiVersion: '1.41',
    },
    'GET /api/system/disk': {
      images: use(12, 2 * 1024 ** 3), containers: use(5, 1024 ** 2), volumes: use(3, 0), buildCache: use(0, 0), totalSize: 2 * 1024 ** 3 + 1024 ** 2,
    },
  });
});
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  session.session = null;
  session.environments = [];
  session.envId = null;
});

describe('SystemScreen', () => {
  it("shows Berth's facts, the database's health, the host and its disk usage", async () => {
    const { container } = render(SystemScreen);
    expect(screen.getByRole('heading', { level: 1, name: 'System' })).toBeTruthy();
    expect(await screen.findByText('1.2.3')).toBeTruthy();
    expect(screen.getByText('SQLite')).toBeTruthy();
    expect(screen.getByText(/^3 h 2 min/)).toBeTruthy();
    expect(await screen.findByText('Healthy')).toBeTruthy();
    expect(await screen.findByText('6.1.0-18-amd64')).toBeTruthy();
    expect(screen.getByText('16.0 GiB')).toBeTruthy();
    expect(screen.getByRole('heading', { name: 'Host of local' })).toBeTruthy();
    const images = screen.getByRole('row', { name: /^Images/ });
    expect(within(images).getByText('2.00 GiB')).toBeTruthy();
    expect(api.called('GET /api/host').map((c) => c.query)).toEqual([{ env: '1' }]);
    await expectNoSeriousAxeViolations(container);
  });

  it('prunes only after confirmation and reports what was freed', async () => {
    api.routes['POST /api/prune/containers'] = { success: true, deleted: ['a', 'b'], spaceReclaimed: 2048 };
    render(SystemScreen);
    await screen.findByText('Total: 2.00 GiB');
    await fireEvent.click(await screen.findByRole('button', { name: 'Prune stopped containers' }));
    const dialog = screen.getByRole('dialog', { name: 'Remove stopped containers?' });
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Cancel' }));
    expect(screen.queryByRole('dialog')).toBeNull();
    expect(api.called('POST /api/prune/containers')).toHaveLength(0);

    await fireEvent.click(screen.getByRole('button', { name: 'Prune stopped containers' }));
    await fireEvent.click(within(screen.getByRole('dialog')).getByRole('button', { name: 'Prune stopped containers' }));
    expect((await screen.findByRole('status')).textContent).toBe('Removed 2 objects, freed 2.00 KiB.');
    expect(api.called('POST /api/prune/containers').map((c) => c.query)).toEqual([{ env: '1' }]);
    await waitFor(() => expect(api.called('GET /api/system/disk')).toHaveLength(2)); // read again after the prune
  });

  it('shows why an environment cannot be read, and the rest still', async () => {
    api.routes['GET /api/host'] = () => {
      throw new ApiError(500, 'Failed to get host information', undefined, 'connection refused');
    };
    api.routes['GET /api/health/database'] = () =>
      new Response(JSON.stringify({ status: 'error', healthy: false, dialect: 'sqlite', latencyMs: 5000, error: 'Database unreachable' }), {
        status: 503,
        headers: { 'Content-Type': 'application/json' },
      });
    render(SystemScreen);
    // said while the data layer asks again (with back-off)
    expect((await screen.findByText(/^Host: Failed to get host information/)).textContent).toContain('Retrying');
    expect(await screen.findByText('Unreachable')).toBeTruthy();
    expect(await screen.findByText('1.2.3')).toBeTruthy();
    await queryClient.cancelQueries(); // no retry outlives the test
  });
});

describe('api-system helpers', () => {
  it('counts what a prune of everything removed and formats uptimes', () => {
    expect(sys.prunedCount({ success: true, spaceReclaimed: 0, containers: { deleted: ['a'], spaceReclaimed: 0 }, images: { deleted: ['i', 'j'], spaceReclaimed: 0 } })).toBe(3);
    expect(sys.formatUptime(40)).toBe('40 s');
    expect(sys.formatUptime(2 * 86400 + 5 * 3600)).toBe('2 d 5 h');
  });
  it('shows the release notes and the linked modules, and why they cannot be read', async () => {
    render(SystemScreen);
    const about = (await screen.findByRole('heading', { name: 'About Berth' })).closest('section') as HTMLElement;
    await within(about).findByText('Release notes', {}, { timeout: 5000 });
    expect(within(about).getByText('Container file browser')).toBeTruthy();
    expect(within(about).getByText('Linked modules (1, go1.26.8)')).toBeTruthy();
    expect(within(about).getByRole('cell', { name: 'github.com/gin-gonic/gin' })).toBeTruthy();
    cleanup();
    queryClient.clear();
    api.routes['GET /api/changelog'] = () => {
      throw new ApiError(404, 'No release notes in this build');
    };
    render(SystemScreen);
    const again = (await screen.findByRole('heading', { name: 'About Berth' })).closest('section') as HTMLElement;
    await within(again).findByRole('alert');
    expect(within(again).queryByText('Release notes')).toBeNull();
  });
});
