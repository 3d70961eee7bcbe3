import { cleanup, fireEvent, render, screen, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../lib/api';
import * as sys from '../lib/api-system';
import * as inv from '../lib/api-inventory';
import { session } from '../lib/session.svelte';
import { expectNoSeriousAxeViolations } from '../test-axe';
import SystemScreen from './SystemScreen.svelte';

vi.mock('../lib/api-system', async (importOriginal) => {
  const real = await importOriginal<typeof import('../lib/api-system')>();
  return { ...real, getSystem: vi.fn(), getDatabaseHealth: vi.fn(), getHost: vi.fn(), getDisk: vi.fn(), prune: vi.fn() };
});

vi.mock('../lib/api-inventory', async (importOriginal) => {
  const real = await importOriginal<typeof import('../lib/api-inventory')>();
  return { ...real, getChangelog: vi.fn(), getDependencies: vi.fn() };
});

const use = (total: number, size: number): sys.DiskUse => ({ total, active: 1, size, reclaimable: size / 2 });

beforeEach(() => {
  session.session = { authenticated: true, authEnabled: true, user: { id: 1, username: 'admin', isAdmin: true } };
  session.environments = [{ id: 1, name: 'local' } as (typeof session.environments)[number]];
  session.envId = 1;
  vi.mocked(sys.getSystem).mockResolvedValue({
    version: '1.2.3', goVersion: 'go1.26', database: 'sqlite', startedAt: '2026-11-23T10:00:00Z', uptimeSeconds: 3 * 3600 + 120,
    enterprise: false, agentsConnected: 2, counts: { environments: 1, users: 4 }, jobs: { running: 0 },
  });
  vi.mocked(inv.getChangelog).mockResolvedValue([{ version: 'Unreleased', date: '', changes: ['Container file browser'] }]);
  vi.mocked(inv.getDependencies).mockResolvedValue({
    goVersion: 'go1.26.8', main: 'github.com/berth-dev/berth/server', dependencies: [{ name: 'github.com/gin-gonic/gin', version: 'v1.11.0' }],
  });
  vi.mocked(sys.getDatabaseHealth).mockResolvedValue({ status: 'ok', healthy: true, dialect: 'sqlite', latencyMs: 0.42 });
  vi.mocked(sys.getHost).mockResolvedValue({
    name: 'dock1', os: 'Debian GNU/Linux 12', kernelVersion: '6.1.0-18-amd64', architecture: 'x86_64', cpus: 8,
    memTotal: 16 * 1024 ** 3, dockerVersion: '20.10.24', apiVersion: '1.41',
  });
  vi.mocked(sys.getDisk).mockResolvedValue({
    images: use(12, 2 * 1024 ** 3), containers: use(5, 1024 ** 2), volumes: use(3, 0), buildCache: use(0, 0), totalSize: 2 * 1024 ** 3 + 1024 ** 2,
  });
});
afterEach(() => {
  cleanup();
  vi.clearAllMocks();
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
    expect(sys.getHost).toHaveBeenCalledWith(1);
    await expectNoSeriousAxeViolations(container);
  });

  it('prunes only after confirmation and reports what was freed', async () => {
    vi.mocked(sys.prune).mockResolvedValue({ success: true, deleted: ['a', 'b'], spaceReclaimed: 2048 });
    render(SystemScreen);
    await fireEvent.click(await screen.findByRole('button', { name: 'Prune stopped containers' }));
    const dialog = screen.getByRole('dialog', { name: 'Remove stopped containers?' });
    expect(sys.prune).not.toHaveBeenCalled();
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Cancel' }));
    expect(screen.queryByRole('dialog')).toBeNull();
    expect(sys.prune).not.toHaveBeenCalled();

    await fireEvent.click(screen.getByRole('button', { name: 'Prune stopped containers' }));
    await fireEvent.click(within(screen.getByRole('dialog')).getByRole('button', { name: 'Prune stopped containers' }));
    expect(sys.prune).toHaveBeenCalledWith(1, 'containers');
    expect((await screen.findByRole('status')).textContent).toBe('Removed 2 objects, freed 2.00 KiB.');
    expect(sys.getDisk).toHaveBeenCalledTimes(2); // reloaded after the prune
  });

  it('shows why an environment cannot be read, and the rest still', async () => {
    vi.mocked(sys.getHost).mockRejectedValue(new ApiError(500, 'Failed to get host information', undefined, 'connection refused'));
    vi.mocked(sys.getDatabaseHealth).mockResolvedValue({ status: 'error', healthy: false, dialect: 'sqlite', latencyMs: 5000, error: 'Database unreachable' });
    render(SystemScreen);
    expect((await screen.findByRole('alert')).textContent).toContain('Failed to get host information');
    expect(await screen.findByText('Unreachable')).toBeTruthy();
    expect(await screen.findByText('1.2.3')).toBeTruthy();
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
    await within(about).findByText('Release notes');
    expect(within(about).getByText('Container file browser')).toBeTruthy();
    expect(within(about).getByText('Linked modules (1, go1.26.8)')).toBeTruthy();
    expect(within(about).getByRole('cell', { name: 'github.com/gin-gonic/gin' })).toBeTruthy();
    cleanup();
    vi.mocked(inv.getChangelog).mockRejectedValue(new ApiError(500, 'Internal server error'));
    render(SystemScreen);
    const again = (await screen.findByRole('heading', { name: 'About Berth' })).closest('section') as HTMLElement;
    await within(again).findByRole('alert');
    expect(within(again).queryByText('Release notes')).toBeNull();
  });
});
