import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../lib/api';
import type * as infra from '../lib/api-infra';
import { queryClient } from '../lib/query';
import { router } from '../lib/router.svelte';
import { session } from '../lib/session.svelte';
import { stubApi, type StubApi } from '../test-api';
import { expectNoSeriousAxeViolations } from '../test-axe';
import NetworkDetailScreen from './NetworkDetailScreen.svelte';

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

let api: StubApi;
beforeEach(() => {
  queryClient.clear();
  session.environments = [{ id: 1, name: 'local', connectionType: 'socket' }];
  session.envId = 1;
  session.envHealth = null;
  session.session = { authenticated: false, authEnabled: false };
  api = stubApi({
    'GET /api/networks/n3': inspect(true),
    'GET /api/containers': [
      { id: 'c1', name: 'api', image: 'x', state: 'running', status: 'Up' },
      { id: 'c2', name: 'worker', image: 'x', state: 'exited', status: 'Exited' },
    ],
    'POST /api/networks/n3/connect': { success: true },
    'POST /api/networks/n3/disconnect': { success: true },
    'DELETE /api/networks/n3': { success: true },
  });
  vi.spyOn(router, 'navigate').mockImplementation(() => {});
});
afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
  vi.unstubAllGlobals();
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
    expect(api.called('GET /api/networks/n3')[0].query).toEqual({ env: '1' });
    expect(screen.getByText('172.30.0.0/16 via 172.30.0.1')).toBeTruthy();
    const table = screen.getByRole('table');
    expect(within(table).getByRole('link', { name: 'api' })).toBeTruthy();
    expect(within(table).getByText('172.30.0.2/16')).toBeTruthy();
    const picker = screen.getByRole('combobox', { name: 'Connect a container' });
    await waitFor(() => expect(api.called('GET /api/containers')).toHaveLength(1));
    await fireEvent.focus(picker);
    await waitFor(() => expect(screen.getAllByRole('option').map((o) => o.textContent?.trim())).toEqual(['worker (exited)']));
    await expectNoSeriousAxeViolations(container);
  });

  it('connects a container and disconnects one after confirmation', async () => {
    render(NetworkDetailScreen, { route });
    await screen.findByRole('table');
    await waitFor(() => expect(api.called('GET /api/containers')).toHaveLength(1));
    await pick('work');
    await fireEvent.click(screen.getByRole('button', { name: 'Connect' }));
    await waitFor(() => expect(api.called('POST /api/networks/n3/connect')).toHaveLength(1));
    const [post] = api.called('POST /api/networks/n3/connect');
    expect(post.query).toEqual({ env: '1' });
    expect(post.body).toEqual({ containerId: 'c2' });
    await waitFor(() => expect(screen.getByRole('status').textContent).toBe('worker connected to backend.'));
    // the network is read again after the change
    await waitFor(() => expect(api.called('GET /api/networks/n3').length).toBeGreaterThan(1));

    await fireEvent.click(screen.getByRole('button', { name: 'Disconnect api' }));
    const dialog = screen.getByRole('dialog', { name: 'Disconnect api?' });
    expect(api.called('POST /api/networks/n3/disconnect')).toHaveLength(0);
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Disconnect' }));
    await waitFor(() => expect(api.called('POST /api/networks/n3/disconnect')).toHaveLength(1));
    expect(api.called('POST /api/networks/n3/disconnect')[0].body).toEqual({ containerId: 'c1', force: false });
    await waitFor(() => expect(screen.getByRole('status').textContent).toBe('api disconnected from backend.'));
  });

  it('shows a failed connect with the server message', async () => {
    api.routes['POST /api/networks/n3/connect'] = () => {
      throw new ApiError(409, 'Container is already connected to this network');
    };
    render(NetworkDetailScreen, { route });
    await screen.findByRole('table');
    await waitFor(() => expect(api.called('GET /api/containers')).toHaveLength(1));
    await pick('work');
    await fireEvent.click(screen.getByRole('button', { name: 'Connect' }));
    expect((await screen.findByRole('alert')).textContent).toBe('Connect worker: Container is already connected to this network');
  });

  it('protects a built-in network and removes another after confirmation', async () => {
    api.routes['GET /api/networks/n3'] = { ...inspect(false), Name: 'bridge' };
    render(NetworkDetailScreen, { route });
    expect(await screen.findByText('Built-in, protected')).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Remove' })).toBeNull();
    cleanup();
    queryClient.clear();

    api.routes['GET /api/networks/n3'] = inspect(false);
    render(NetworkDetailScreen, { route });
    await fireEvent.click(await screen.findByRole('button', { name: 'Remove' }));
    await fireEvent.click(within(screen.getByRole('dialog', { name: 'Remove network backend?' })).getByRole('button', { name: 'Remove' }));
    await waitFor(() => expect(api.called('DELETE /api/networks/n3')).toHaveLength(1));
    expect(api.called('DELETE /api/networks/n3')[0].query).toEqual({ env: '1' });
    await waitFor(() => expect(router.navigate).toHaveBeenCalledWith('/networks'));
  });

  it('says so when the network does not exist', async () => {
    api.routes['GET /api/networks/n3'] = () => {
      throw new ApiError(404, 'Network not found');
    };
    render(NetworkDetailScreen, { route });
    expect((await screen.findByRole('alert')).textContent).toContain('No network n3 on local');
  });

  it('offers no Remove, Disconnect or Connect without their permissions, and no Connect while offline', async () => {
    session.session = {
      authenticated: true,
      authEnabled: true,
      user: { id: 2, username: 'viewer', isAdmin: false, environmentPermissions: { '1': { networks: ['view', 'inspect'] } } },
    };
    render(NetworkDetailScreen, { route });
    await screen.findByRole('table');
    expect(screen.queryByRole('button', { name: 'Remove' })).toBeNull();
    expect(screen.queryByRole('button', { name: 'Disconnect api' })).toBeNull();
    expect(screen.queryByRole('combobox', { name: 'Connect a container' })).toBeNull();
    cleanup();

    session.session = { authenticated: false, authEnabled: false };
    session.envHealth = { envId: 1, state: 'offline', reason: 'The engine cannot be reached' };
    render(NetworkDetailScreen, { route });
    await screen.findByRole('table');
    await pick('work');
    expect((screen.getByRole('button', { name: 'Connect' }) as HTMLButtonElement).disabled).toBe(true);
  });
});
