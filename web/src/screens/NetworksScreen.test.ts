import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../lib/api';
import * as infra from '../lib/api-infra';
import { session } from '../lib/session.svelte';
import { expectNoSeriousAxeViolations } from '../test-axe';
import NetworksScreen from './NetworksScreen.svelte';

vi.mock('../lib/api-infra', async (importOriginal) => {
  const real = await importOriginal<typeof import('../lib/api-infra')>();
  return { ...real, listNetworks: vi.fn(), createNetwork: vi.fn(), removeNetwork: vi.fn() };
});

const list: infra.Network[] = [
  { id: 'n3', name: 'backend', driver: 'bridge', scope: 'local', internal: true, ipam: { config: [{ subnet: '172.30.0.0/16' }] }, containers: { c1: { name: 'api' } } },
  { id: 'n1', name: 'bridge', driver: 'bridge', scope: 'local', ipam: { config: [{ subnet: '172.17.0.0/16' }] }, containers: {} },
  { id: 'n2', name: 'host', driver: 'host', scope: 'local', ipam: { config: [] }, containers: {} },
  { id: 'n4', name: 'empty', driver: 'bridge', scope: 'local', containers: null },
];

beforeEach(() => {
  session.environments = [{ id: 1, name: 'local', connectionType: 'socket' }];
  session.envId = 1;
  vi.mocked(infra.listNetworks).mockResolvedValue(structuredClone(list));
  vi.mocked(infra.createNetwork).mockResolvedValue({ success: true, id: 'n9' });
  vi.mocked(infra.removeNetwork).mockResolvedValue({ success: true });
});
afterEach(() => {
  cleanup();
  vi.clearAllMocks();
});

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
    expect(infra.createNetwork).not.toHaveBeenCalled();
    await fireEvent.input(within(form).getByLabelText('Subnet'), { target: { value: '10.5.0.0/24' } });
    await fireEvent.click(within(form).getByLabelText(/Attachable/));
    await fireEvent.click(within(form).getByRole('button', { name: 'Create network' }));
    await waitFor(() =>
      expect(infra.createNetwork).toHaveBeenCalledWith(1, {
        name: 'front',
        driver: 'bridge',
        internal: false,
        attachable: true,
        labels: {},
        ipam: { config: [{ subnet: '10.5.0.0/24', gateway: '10.5.0.1' }] },
      }),
    );
    await waitFor(() => expect(screen.getByRole('status').textContent).toBe('Network front created.'));
  });

  it('asks before removing and shows why the server refused', async () => {
    vi.mocked(infra.removeNetwork).mockRejectedValueOnce(
      new ApiError(409, 'Network is in use', {}, 'containers attached: api; disconnect them first'),
    );
    render(NetworksScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Remove backend' }));
    const dialog = screen.getByRole('dialog', { name: 'Remove network backend?' });
    expect(within(dialog).getByText(/api is attached/)).toBeTruthy();
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Remove' }));
    await waitFor(() => expect(infra.removeNetwork).toHaveBeenCalledWith(1, 'n3'));
    expect((await screen.findByRole('alert')).textContent).toBe(
      'Remove backend: Network is in use: containers attached: api; disconnect them first',
    );
  });
});
