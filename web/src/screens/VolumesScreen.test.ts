import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../lib/api';
import type * as infra from '../lib/api-infra';
import { queryClient } from '../lib/query';
import { session } from '../lib/session.svelte';
import { stubApi, type StubApi } from '../test-api';
import { expectNoSeriousAxeViolations } from '../test-axe';
import VolumesScreen from './VolumesScreen.svelte';


const list: infra.Volume[] = [
  { name: 'pgdata', driver: 'local', created: '2025-01-02T10:00:00Z', usedBy: [{ containerId: 'c1', containerName: 'db' }] },
  { name: 'cache', driver: 'local', created: '2025-01-03T10:00:00Z', usedBy: [], labels: { team: 'web' } },
];

beforeEach(() => {
  session.environments = [{ id: 1, name: 'local', connectionType: 'socket' }];
  session.envId = 1;
  session.session = { authenticated: false, authEnabled: false };
  api = stubApi({
    'GET /api/volumes': list,
    'POST /api/volumes': { success: true, name: 'new-vol' },
    'DELETE /api/volumes/pgdata': { success: true },
    'DELETE /api/volumes/cache': { success: true },
  });
});
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});
let api: StubApi;

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
    expect(api.called('GET /api/volumes')[0].query).toEqual({ env: '1' });
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
    api.routes['GET /api/volumes'] = [];
    render(VolumesScreen);
    expect(await screen.findByText('No volumes on this environment.')).toBeTruthy();
    cleanup();
    queryClient.clear();
    api.routes['GET /api/volumes'] = () => {
      throw new ApiError(403, 'Permission denied');
    };
    render(VolumesScreen);
    expect((await screen.findByRole('alert')).textContent).toContain('Permission denied');
    expect(api.called('GET /api/volumes')).toHaveLength(2); // a 403 is not asked again
  });

  it('creates a volume from the form, checking it first', async () => {
    const { container } = render(VolumesScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'New volume' }));
    const form = screen.getByRole('region', { name: 'New volume' });
    await fireEvent.click(within(form).getByRole('button', { name: 'Create volume' }));
    expect(within(form).getByText('Volume name is required')).toBeTruthy();
    expect(within(form).getByLabelText('Name').getAttribute('aria-invalid')).toBe('true');
    expect(api.called('POST /api/volumes')).toHaveLength(0);
    await expectNoSeriousAxeViolations(container);

    await fireEvent.input(within(form).getByLabelText('Name'), { target: { value: 'new-vol' } });
    await fireEvent.input(within(form).getByLabelText('Labels'), { target: { value: 'berth.test=abc' } });
    await fireEvent.click(within(form).getByRole('button', { name: 'Create volume' }));
    await waitFor(() => expect(api.called('POST /api/volumes')).toHaveLength(1));
    const [post] = api.called('POST /api/volumes');
    expect(post.query).toEqual({ env: '1' });
    expect(post.body).toEqual({ name: 'new-vol', driver: 'local', driverOpts: {}, labels: { 'berth.test': 'abc' } });
    await waitFor(() => expect(screen.queryByRole('region', { name: 'New volume' })).toBeNull());
    expect(screen.getByRole('status').textContent).toBe('Volume new-vol created.');
  });

  it('shows the server message with its details when creation fails', async () => {
    api.routes['POST /api/volumes'] = () => {
      throw new ApiError(500, 'Failed to create volume', {}, 'volume "x" already exists');
    };
    render(VolumesScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'New volume' }));
    await fireEvent.input(screen.getByLabelText('Name'), { target: { value: 'xx' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Create volume' }));
    expect((await screen.findByRole('alert')).textContent).toBe('Create volume: Failed to create volume: volume "x" already exists');
  });

  it('asks before removing, warns about a volume in use and explains a refusal', async () => {
    api.routes['DELETE /api/volumes/pgdata'] = () => {
      throw new ApiError(409, 'Volume is in use by a container', {}, 'remove pgdata: volume is in use - [c1]');
    };
    render(VolumesScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Remove pgdata' }));
    const dialog = screen.getByRole('dialog', { name: 'Remove volume pgdata?' });
    expect(within(dialog).getByText(/in use by db/)).toBeTruthy();
    await fireEvent.click(within(dialog).getByRole('checkbox'));
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Remove' }));
    await waitFor(() => expect(api.called('DELETE /api/volumes/pgdata')[0]?.query).toEqual({ env: '1', force: 'true' }));
    expect((await screen.findByRole('alert')).textContent).toBe(
      'Remove pgdata: Volume is in use by a container: remove pgdata: volume is in use - [c1]',
    );

    await fireEvent.click(screen.getByRole('button', { name: 'Remove cache' }));
    await fireEvent.keyDown(screen.getByRole('dialog'), { key: 'Escape' });
    expect(screen.queryByRole('dialog')).toBeNull();
    await fireEvent.click(screen.getByRole('button', { name: 'Remove cache' }));
    await fireEvent.click(within(screen.getByRole('dialog')).getByRole('button', { name: 'Remove' }));
    await waitFor(() => expect(api.called('DELETE /api/volumes/cache')[0]?.query).toEqual({ env: '1', force: 'false' }));
    await waitFor(() => expect(screen.getByRole('status').textContent).toBe('Volume cache removed.'));
  });

  it('offers no New or Remove to a user who may only view volumes there', async () => {
    session.session = {
      authenticated: true,
      authEnabled: true,
      user: { id: 2, username: 'v', isAdmin: false, environmentPermissions: { '1': { volumes: ['view', 'inspect'] } } },
    };
    render(VolumesScreen);
    await screen.findByRole('table');
    expect(screen.queryByRole('button', { name: 'New volume' })).toBeNull();
    expect(screen.queryByRole('button', { name: /^Remove/ })).toBeNull();
    expect(screen.getByRole('button', { name: 'Refresh' })).toBeTruthy();
  });
});
