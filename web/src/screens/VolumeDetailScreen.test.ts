import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../lib/api';
import type * as infra from '../lib/api-infra';
import { queryClient } from '../lib/query';
import { router } from '../lib/router.svelte';
import { session } from '../lib/session.svelte';
import { stubApi, type StubApi } from '../test-api';
import { expectNoSeriousAxeViolations } from '../test-axe';
import VolumeDetailScreen from './VolumeDetailScreen.svelte';

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

let api: StubApi;
beforeEach(() => {
  queryClient.clear();
  session.environments = [{ id: 1, name: 'local', connectionType: 'socket' }];
  session.envId = 1;
  session.session = { authenticated: false, authEnabled: false };
  api = stubApi({
    'GET /api/volumes/pgdata': vol,
    'DELETE /api/volumes/pgdata': { success: true },
    // the file browser below the facts
    'GET /api/volumes/pgdata/browse': { path: '/', entries: [] },
  });
  vi.spyOn(router, 'navigate').mockImplementation(() => {});
});
afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
  vi.unstubAllGlobals();
});

describe('VolumeDetailScreen', () => {
  it('shows the volume, the containers using it and its JSON', async () => {
    const { container } = render(VolumeDetailScreen, { route });
    expect(screen.getByRole('heading', { level: 1, name: 'pgdata' })).toBeTruthy();
    await screen.findByText('/var/lib/docker/volumes/pgdata/_data');
    expect(api.called('GET /api/volumes/pgdata')[0].query).toEqual({ env: '1' });
    const users = screen.getByRole('region', { name: 'Containers using it' });
    expect(within(users).getByRole('link', { name: 'db' }).getAttribute('href')).toBe('/containers/c1');
    expect(screen.getByText('berth.test=abc')).toBeTruthy();
    expect(container.querySelector('pre')?.textContent).toContain('"mountpoint": "/var/lib/docker/volumes/pgdata/_data"');
    await expectNoSeriousAxeViolations(container);
  });

  it('says so when the volume does not exist, and why when it could not be read', async () => {
    api.routes['GET /api/volumes/pgdata'] = () => {
      throw new ApiError(404, 'Volume not found');
    };
    render(VolumeDetailScreen, { route });
    expect((await screen.findByRole('alert')).textContent).toContain('No volume called pgdata on local');
    cleanup();
    queryClient.clear();
    api.routes['GET /api/volumes/pgdata'] = () => {
      throw new ApiError(403, 'Permission denied');
    };
    render(VolumeDetailScreen, { route });
    expect((await screen.findByRole('alert')).textContent).toContain('Volume could not be loaded: Permission denied');
    expect(screen.getByRole('link', { name: 'Back to the volumes' })).toBeTruthy();
  });

  it('removes after confirmation and goes back to the list; a refusal is explained', async () => {
    let refuse = true;
    api.routes['DELETE /api/volumes/pgdata'] = () => {
      if (refuse) throw new ApiError(409, 'Volume is in use by a container', {}, 'in use by db');
      return { success: true };
    };
    render(VolumeDetailScreen, { route });
    await screen.findByText('/var/lib/docker/volumes/pgdata/_data');
    await fireEvent.click(screen.getByRole('button', { name: 'Remove' }));
    let dialog = screen.getByRole('dialog', { name: 'Remove volume pgdata?' });
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Remove' }));
    expect((await screen.findByRole('alert')).textContent).toBe('Remove pgdata: Volume is in use by a container: in use by db');
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    expect(router.navigate).not.toHaveBeenCalled();

    refuse = false;
    await fireEvent.click(screen.getByRole('button', { name: 'Remove' }));
    dialog = screen.getByRole('dialog', { name: 'Remove volume pgdata?' });
    await fireEvent.click(within(dialog).getByRole('checkbox'));
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Remove' }));
    await waitFor(() => expect(router.navigate).toHaveBeenCalledWith('/volumes'));
    expect(api.called('DELETE /api/volumes/pgdata').map((c) => c.query)).toEqual([{ env: '1', force: 'false' }, { env: '1', force: 'true' }]);
  });

  it('offers no Remove without the volumes:remove permission', async () => {
    session.session = {
      authenticated: true,
      authEnabled: true,
      user: { id: 2, username: 'viewer', isAdmin: false, environmentPermissions: { '1': { volumes: ['view'] } } },
    };
    render(VolumeDetailScreen, { route });
    await screen.findByText('/var/lib/docker/volumes/pgdata/_data');
    expect(screen.queryByRole('button', { name: 'Remove' })).toBeNull();
  });
});
