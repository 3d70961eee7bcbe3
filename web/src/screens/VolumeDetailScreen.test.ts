import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../lib/api';
import * as infra from '../lib/api-infra';
import { router } from '../lib/router.svelte';
import { session } from '../lib/session.svelte';
import { expectNoSeriousAxeViolations } from '../test-axe';
import VolumeDetailScreen from './VolumeDetailScreen.svelte';

vi.mock('../lib/api-infra', async (importOriginal) => {
  const real = await importOriginal<typeof import('../lib/api-infra')>();
  return { ...real, inspectVolume: vi.fn(), removeVolume: vi.fn() };
});

const route = { name: 'volume' as const, params: { name: 'pgdata' }, path: '/volumes/pgdata' };
const vol: infra.Volume = {
  name: 'pgdata',
  driver: 'local',
  scope: 'local',
  mountpoint: '/var/lib/docker/volumes/pgdata/_data',
  created: '2025-01-02T10:00:00Z',
  labels: { 'berth.test': 'abc' },
  options: {},
  usedBy: [{ containerId: 'c1', containerName: 'db' }],
};

beforeEach(() => {
  session.environments = [{ id: 1, name: 'local', connectionType: 'socket' }];
  session.envId = 1;
  vi.mocked(infra.inspectVolume).mockResolvedValue(structuredClone(vol));
  vi.mocked(infra.removeVolume).mockResolvedValue({ success: true });
  vi.spyOn(router, 'navigate').mockImplementation(() => {});
});
afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
  vi.clearAllMocks();
});

describe('VolumeDetailScreen', () => {
  it('shows the volume, the containers using it and its JSON', async () => {
    const { container } = render(VolumeDetailScreen, { route });
    expect(screen.getByRole('heading', { level: 1, name: 'pgdata' })).toBeTruthy();
    await screen.findByText('/var/lib/docker/volumes/pgdata/_data');
    expect(infra.inspectVolume).toHaveBeenCalledWith(1, 'pgdata');
    const users = screen.getByRole('region', { name: 'Containers using it' });
    expect(within(users).getByRole('link', { name: 'db' }).getAttribute('href')).toBe('/containers/c1');
    expect(screen.getByText('berth.test=abc')).toBeTruthy();
    expect(container.querySelector('pre')?.textContent).toContain('"mountpoint": "/var/lib/docker/volumes/pgdata/_data"');
    await expectNoSeriousAxeViolations(container);
  });

  it('says so when the volume does not exist', async () => {
    vi.mocked(infra.inspectVolume).mockRejectedValue(new ApiError(404, 'Volume not found'));
    render(VolumeDetailScreen, { route });
    expect((await screen.findByRole('alert')).textContent).toContain('No volume called pgdata on local');
  });

  it('removes after confirmation and goes back to the list; a refusal is explained', async () => {
    vi.mocked(infra.removeVolume).mockRejectedValueOnce(new ApiError(409, 'Volume is in use by a container', {}, 'in use by db'));
    render(VolumeDetailScreen, { route });
    await screen.findByText('/var/lib/docker/volumes/pgdata/_data');
    await fireEvent.click(screen.getByRole('button', { name: 'Remove' }));
    let dialog = screen.getByRole('dialog', { name: 'Remove volume pgdata?' });
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Remove' }));
    expect((await screen.findByRole('alert')).textContent).toBe('Remove pgdata: Volume is in use by a container: in use by db');
    expect(router.navigate).not.toHaveBeenCalled();

    await fireEvent.click(screen.getByRole('button', { name: 'Remove' }));
    dialog = screen.getByRole('dialog', { name: 'Remove volume pgdata?' });
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Remove' }));
    await waitFor(() => expect(router.navigate).toHaveBeenCalledWith('/volumes'));
  });
});
