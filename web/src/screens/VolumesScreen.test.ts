import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../lib/api';
import * as infra from '../lib/api-infra';
import { session } from '../lib/session.svelte';
import { expectNoSeriousAxeViolations } from '../test-axe';
import VolumesScreen from './VolumesScreen.svelte';

vi.mock('../lib/api-infra', async (importOriginal) => {
  const real = await importOriginal<typeof import('../lib/api-infra')>();
  return { ...real, listVolumes: vi.fn(), createVolume: vi.fn(), removeVolume: vi.fn() };
});

const list: infra.Volume[] = [
  { name: 'pgdata', driver: 'local', created: '2025-01-02T10:00:00Z', usedBy: [{ containerId: 'c1', containerName: 'db' }] },
  { name: 'cache', driver: 'local', created: '2025-01-03T10:00:00Z', usedBy: [], labels: { team: 'web' } },
];

beforeEach(() => {
  session.environments = [{ id: 1, name: 'local', connectionType: 'socket' }];
  session.envId = 1;
  vi.mocked(infra.listVolumes).mockResolvedValue(structuredClone(list));
  vi.mocked(infra.createVolume).mockResolvedValue({ success: true, name: 'new-vol' });
  vi.mocked(infra.removeVolume).mockResolvedValue({ success: true });
});
afterEach(() => {
  cleanup();
  vi.clearAllMocks();
});

const names = () =>
  screen
    .getAllByRole('row')
    .slice(1)
    .map((r) => within(r).getAllByRole('cell')[0].textContent?.trim());

describe('VolumesScreen', () => {
  it('lists the volumes by name with their users, and filters them', async () => {
    const { container } = render(VolumesScreen);
    expect(screen.getByRole('heading', { level: 1, name: 'Volumes' })).toBeTruthy();
    await screen.findByRole('table');
    expect(infra.listVolumes).toHaveBeenCalledWith(1);
    expect(names()).toEqual(['cache', 'pgdata']);
    expect(screen.getByRole('link', { name: 'pgdata' }).getAttribute('href')).toBe('/volumes/pgdata');
    const pg = screen.getAllByRole('row')[2];
    expect(within(pg).getByText('In use')).toBeTruthy();
    expect(within(pg).getByRole('link', { name: 'db' }).getAttribute('href')).toBe('/containers/c1');
    expect(within(screen.getAllByRole('row')[1]).getByText('Unused')).toBeTruthy();
    await expectNoSeriousAxeViolations(container);

    await fireEvent.input(screen.getByLabelText('Filter'), { target: { value: 'team=web' } });
    expect(names()).toEqual(['cache']);
    await fireEvent.input(screen.getByLabelText('Filter'), { target: { value: 'zzz' } });
    expect(screen.getByText(/No volume matches/)).toBeTruthy();
  });

  it('shows an explicit empty state and the list error', async () => {
    vi.mocked(infra.listVolumes).mockResolvedValueOnce([]);
    render(VolumesScreen);
    expect(await screen.findByText('No volumes on this environment.')).toBeTruthy();
    cleanup();
    vi.mocked(infra.listVolumes).mockRejectedValueOnce(new ApiError(403, 'Permission denied'));
    render(VolumesScreen);
    expect((await screen.findByRole('alert')).textContent).toContain('Permission denied');
  });

  it('creates a volume from the form, checking it first', async () => {
    const { container } = render(VolumesScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'New volume' }));
    const form = screen.getByRole('region', { name: 'New volume' });
    await fireEvent.click(within(form).getByRole('button', { name: 'Create volume' }));
    expect(within(form).getByText('Volume name is required')).toBeTruthy();
    expect(within(form).getByLabelText('Name').getAttribute('aria-invalid')).toBe('true');
    expect(infra.createVolume).not.toHaveBeenCalled();
    await expectNoSeriousAxeViolations(container);

    await fireEvent.input(within(form).getByLabelText('Name'), { target: { value: 'new-vol' } });
    await fireEvent.input(within(form).getByLabelText('Labels'), { target: { value: 'berth.test=abc' } });
    await fireEvent.click(within(form).getByRole('button', { name: 'Create volume' }));
    await waitFor(() =>
      expect(infra.createVolume).toHaveBeenCalledWith(1, { name: 'new-vol', driver: 'local', driverOpts: {}, labels: { 'berth.test': 'abc' } }),
    );
    await waitFor(() => expect(screen.queryByRole('region', { name: 'New volume' })).toBeNull());
    expect(screen.getByRole('status').textContent).toBe('Volume new-vol created.');
  });

  it('shows the server message with its details when creation fails', async () => {
    vi.mocked(infra.createVolume).mockRejectedValueOnce(new ApiError(500, 'Failed to create volume', {}, 'volume "x" already exists'));
    render(VolumesScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'New volume' }));
    await fireEvent.input(screen.getByLabelText('Name'), { target: { value: 'xx' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Create volume' }));
    expect((await screen.findByRole('alert')).textContent).toBe('Create volume: Failed to create volume: volume "x" already exists');
  });

  it('asks before removing, warns about a volume in use and explains a refusal', async () => {
    vi.mocked(infra.removeVolume).mockRejectedValueOnce(
      new ApiError(409, 'Volume is in use by a container', {}, 'remove pgdata: volume is in use - [c1]'),
    );
    render(VolumesScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Remove pgdata' }));
    const dialog = screen.getByRole('dialog', { name: 'Remove volume pgdata?' });
    expect(within(dialog).getByText(/in use by db/)).toBeTruthy();
    await fireEvent.click(within(dialog).getByRole('checkbox'));
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Remove' }));
    await waitFor(() => expect(infra.removeVolume).toHaveBeenCalledWith(1, 'pgdata', true));
    expect((await screen.findByRole('alert')).textContent).toBe(
      'Remove pgdata: Volume is in use by a container: remove pgdata: volume is in use - [c1]',
    );

    await fireEvent.click(screen.getByRole('button', { name: 'Remove cache' }));
    await fireEvent.keyDown(screen.getByRole('dialog'), { key: 'Escape' });
    expect(screen.queryByRole('dialog')).toBeNull();
    await fireEvent.click(screen.getByRole('button', { name: 'Remove cache' }));
    await fireEvent.click(within(screen.getByRole('dialog')).getByRole('button', { name: 'Remove' }));
    await waitFor(() => expect(infra.removeVolume).toHaveBeenLastCalledWith(1, 'cache', false));
    await waitFor(() => expect(screen.getByRole('status').textContent).toBe('Volume cache removed.'));
  });
});
