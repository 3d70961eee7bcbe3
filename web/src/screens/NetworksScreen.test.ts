import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../lib/api';
import type * as infra from '../lib/api-infra';
import { queryClient } from '../lib/query';
import { session } from '../lib/session.svelte';
import { stubApi, type StubApi } from '../test-api';
import { expectNoSeriousAxeViolations } from '../test-axe';
import NetworksScreen from './NetworksScreen.svelte';


const list: infra.Network[] = [
  { id: 'n3', name: 'backend', driver: 'bridge', scope: 'local', internal: true, ipam: { config: [{ subnet: '172.30.0.0/16' }] }, containers: { c1: { name: 'api' } } },
  { id: 'n1', name: 'bridge', driver: 'bridge', scope: 'local', ipam: { config: [{ subnet: '172.17.0.0/16' }] }, containers: {} },
  { id: 'n2', name: 'host', driver: 'host', scope: 'local', ipam: { config: [] }, containers: {} },
  { id: 'n4', name: 'empty', driver: 'bridge', scope: 'local', containers: null },
];

beforeEach(() => {
  session.environments = [{ id: 1, name: 'local', connectionType: 'socket' }];
  session.envId = 1;
  session.session = { authenticated: false, authEnabled: false };
  api = stubApi({
    'GET /api/networks': list,
    'POST /api/networks': { success: true, id: 'n9' },
    'DELETE /api/networks/n3': { success: true },
  });
});
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});
let api: StubApi;

const rowOf = (name: string) => screen.getByRole('link', { name }).closest('tr') as HTMLElement;

describe('NetworksScreen', () => {
  it('lists the networks, built-in first and protected', async () => {
    const { container } = render(NetworksScreen);
    await screen.findByRole('table');
    const names = screen
      .getAllByRole('row')
      .slice(1)
      .map((r) => within(r).getAllByRole('link')[0].textContent);
    expect(names).toEqual(['bridge', 'host', 'backend', 'empty']);
    expect(within(rowOf('bridge')).getByText('Protected')).toBeTruthy();
    expect(within(rowOf('bridge')).queryByRole('button')).toBeNull();
    expect(within(rowOf('backend')).getByText('172.30.0.0/16')).toBeTruthy();
    expect(within(rowOf('backend')).getByText('1: api')).toBeTruthy();
    expect(within(rowOf('backend')).getByText('Internal')).toBeTruthy();
    expect(rowOf('backend').querySelector('a')?.getAttribute('href')).toBe('/networks/n3');
    await expectNoSeriousAxeViolations(container);
    await fireEvent.input(screen.getByLabelText('Filter'), { target: { value: 'api' } });
    expect(screen.getAllByRole('row')).toHaveLength(2);
  });

  it('creates a network with a subnet and gateway', async () => {
    render(NetworksScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'New network' }));
    const form = screen.getByRole('region', { name: 'New network' });
    await fireEvent.input(within(form).getByLabelText('Name'), { target: { value: 'front' } });
    await fireEvent.input(within(form).getByLabelText('Gateway'), { target: { value: '10.5.0.1' } });
    await fireEvent.click(within(form).getByRole('button', { name: 'Create network' }));
    expect(within(form).getByText('A gateway needs a subnet')).toBeTruthy();
    expect(api.called('POST /api/networks')).toHaveLength(0);
    await fireEvent.input(within(form).getByLabelText('Subnet'), { target: { value: '10.5.0.0/24' } });
    await fireEvent.click(within(form).getByLabelText(/Attachable/));
    await fireEvent.click(within(form).getByRole('button', { name: 'Create network' }));
    await waitFor(() => expect(api.called('POST /api/networks')).toHaveLength(1));
    expect(api.called('POST /api/networks')[0].query).toEqual({ env: '1' });
    expect(api.called('POST /api/networks')[0].body).toEqual({
        name: 'front',
        driver: 'bridge',
        internal: false,
        attachable: true,
        labels: {},
        ipam: { config: [{ subnet: '10.5.0.0/24', gateway: '10.5.0.1' }] },
    });
    await waitFor(() => expect(screen.getByRole('status').textContent).toBe('Network front created.'));
  });

  it('asks before removing and shows why the server refused', async () => {
    api.routes['DELETE /api/networks/n3'] = () => {
      throw new ApiError(409, 'Network is in use', {}, 'containers attached: api; disconnect them first');
    };
    render(NetworksScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Remove backend' }));
    const dialog = screen.getByRole('dialog', { name: 'Remove network backend?' });
    expect(within(dialog).getByText(/api is attached/)).toBeTruthy();
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Remove' }));
    await waitFor(() => expect(api.called('DELETE /api/networks/n3')[0]?.query).toEqual({ env: '1' }));
    expect((await screen.findByRole('alert')).textContent).toBe(
      'Remove backend: Network is in use: containers attached: api; disconnect them first',
    );
  });

  it('offers no New or Remove to a Viewer, and says an offline environment is not empty', async () => {
    session.session = {
      authenticated: true,
      authEnabled: true,
      user: { id: 2, username: 'v', isAdmin: false, environmentPermissions: { '1': { networks: ['view', 'inspect'] } } },
    };
    render(NetworksScreen);
    await screen.findByRole('table');
    expect(screen.queryByRole('button', { name: 'New network' })).toBeNull();
    expect(screen.queryByRole('button', { name: /^Remove/ })).toBeNull();
    cleanup();
    api.routes['GET /api/networks'] = [];
    session.envHealth = { envId: 1, state: 'offline', reason: 'The agent is not connected' };
    queryClient.clear();
    render(NetworksScreen);
    expect(await screen.findByText('The networks of this environment cannot be listed while it is offline.')).toBeTruthy();
    expect(screen.queryByText('No networks on this environment.')).toBeNull();
    session.envHealth = null;
  });
});
