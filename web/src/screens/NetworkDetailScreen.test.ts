import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import * as api from '../lib/api';
import * as infra from '../lib/api-infra';
import { router } from '../lib/router.svelte';
import { session } from '../lib/session.svelte';
import { expectNoSeriousAxeViolations } from '../test-axe';
import NetworkDetailScreen from './NetworkDetailScreen.svelte';

vi.mock('../lib/api', async (importOriginal) => {
  const real = await importOriginal<typeof import('../lib/api')>();
  return { ...real, listContainers: vi.fn() };
});
vi.mock('../lib/api-infra', async (importOriginal) => {
  const real = await importOriginal<typeof import('../lib/api-infra')>();
  return { ...real, inspectNetwork: vi.fn(), connectNetwork: vi.fn(), disconnectNetwork: vi.fn(), removeNetwork: vi.fn() };
});

const route = { name: 'network' as const, params: { id: 'n3' }, path: '/networks/n3' };
const inspect = (attached: boolean): infra.NetworkInspect => ({
  Id: 'n3full',
  Name: 'backend',
  Driver: 'bridge',
  Scope: 'local',
  Created: '2025-01-02T10:00:00Z',
  IPAM: { Config: [{ Subnet: '172.30.0.0/16', Gateway: '172.30.0.1' }] },
  Containers: attached ? { c1: { Name: 'api', IPv4Address: '172.30.0.2/16' } } : {},
  Labels: {},
});

beforeEach(() => {
  session.environments = [{ id: 1, name: 'local', connectionType: 'socket' }];
  session.envId = 1;
  vi.mocked(infra.inspectNetwork).mockResolvedValue(inspect(true));
  vi.mocked(api.listContainers).mockResolvedValue([
    { id: 'c1', name: 'api', image: 'x', state: 'running', status: 'Up' },
    { id: 'c2', name: 'worker', image: 'x', state: 'exited', status: 'Exited' },
  ]);
  vi.mocked(infra.connectNetwork).mockResolvedValue({ success: true });
  vi.mocked(infra.disconnectNetwork).mockResolvedValue({ success: true });
  vi.mocked(infra.removeNetwork).mockResolvedValue({ success: true });
  vi.spyOn(router, 'navigate').mockImplementation(() => {});
});
afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
  vi.clearAllMocks();
});

/** Types into the searchable picker and chooses the first match with Enter. */
async function pick(text: string) {
  const box = screen.getByRole('combobox', { name: 'Connect a container' });
  await fireEvent.input(box, { target: { value: text } });
  await fireEvent.keyDown(box, { key: 'Enter' });
}

// A shared machine renders slowly: room beyond the default 5 s (no timing is asserted).
describe('NetworkDetailScreen', { timeout: 20_000 }, () => {
  it('shows the network and its containers', async () => {
    const { container } = render(NetworkDetailScreen, { route });
    expect(await screen.findByRole('heading', { level: 1, name: 'backend' })).toBeTruthy();
    expect(infra.inspectNetwork).toHaveBeenCalledWith(1, 'n3');
    expect(screen.getByText('172.30.0.0/16 via 172.30.0.1')).toBeTruthy();
    const table = screen.getByRole('table');
    expect(within(table).getByRole('link', { name: 'api' })).toBeTruthy();
    expect(within(table).getByText('172.30.0.2/16')).toBeTruthy();
    const picker = screen.getByRole('combobox', { name: 'Connect a container' });
    await fireEvent.focus(picker);
    expect(screen.getAllByRole('option').map((o) => o.textContent?.trim())).toEqual(['worker (exited)']);
    await expectNoSeriousAxeViolations(container);
  });

  it('connects a container and disconnects one after confirmation', async () => {
    render(NetworkDetailScreen, { route });
    await screen.findByRole('table');
    await pick('work');
    await fireEvent.click(screen.getByRole('button', { name: 'Connect' }));
    await waitFor(() => expect(infra.connectNetwork).toHaveBeenCalledWith(1, 'n3', 'c2'));
    await waitFor(() => expect(screen.getByRole('status').textContent).toBe('worker connected to backend.'));

    await fireEvent.click(screen.getByRole('button', { name: 'Disconnect api' }));
    const dialog = screen.getByRole('dialog', { name: 'Disconnect api?' });
    expect(infra.disconnectNetwork).not.toHaveBeenCalled();
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Disconnect' }));
    await waitFor(() => expect(infra.disconnectNetwork).toHaveBeenCalledWith(1, 'n3', 'c1', false));
  });

  it('shows a failed connect with the server message', async () => {
    vi.mocked(infra.connectNetwork).mockRejectedValueOnce(new api.ApiError(409, 'Container is already connected to this network'));
    render(NetworkDetailScreen, { route });
    await screen.findByRole('table');
    await pick('work');
    await fireEvent.click(screen.getByRole('button', { name: 'Connect' }));
    expect((await screen.findByRole('alert')).textContent).toBe('Connect worker: Container is already connected to this network');
  });

  it('protects a built-in network and removes another after confirmation', async () => {
    vi.mocked(infra.inspectNetwork).mockResolvedValueOnce({ ...inspect(false), Name: 'bridge' });
    render(NetworkDetailScreen, { route });
    expect(await screen.findByText('Built-in, protected')).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Remove' })).toBeNull();
    cleanup();

    vi.mocked(infra.inspectNetwork).mockResolvedValue(inspect(false));
    render(NetworkDetailScreen, { route });
    await fireEvent.click(await screen.findByRole('button', { name: 'Remove' }));
    await fireEvent.click(within(screen.getByRole('dialog', { name: 'Remove network backend?' })).getByRole('button', { name: 'Remove' }));
    await waitFor(() => expect(infra.removeNetwork).toHaveBeenCalledWith(1, 'n3'));
    expect(router.navigate).toHaveBeenCalledWith('/networks');
  });
});
