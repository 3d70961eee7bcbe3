import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../lib/api';
import { queryClient } from '../lib/query';
import type { Route } from '../lib/routes';
import { session } from '../lib/session.svelte';
import { stubApi, type StubApi, type StubCall } from '../test-api';
import { expectNoSeriousAxeViolations } from '../test-axe';
import RegistryBrowserScreen from './RegistryBrowserScreen.svelte';

const route: Route = { name: 'registryBrowse', params: { id: '2' }, path: '/registries/2/browse' };
const registry = { id: 2, name: 'local', url: 'http://127.0.0.1:5000', username: 'berth', hasCredentials: true, isDefault: false };
const d1 = 'sha256:1111111111111111111111111111111111111111111111111111111111111111';
const d2 = 'sha256:2222222222222222222222222222222222222222222222222222222222222222';

/** Every tag in one page, as a registry answers. */
const onePage = (n: number) => ({ total: n, page: 1, pageSize: n, hasNext: false, hasPrev: false });

const tagsOf = {
  repository: 'team/app',
  tags: [
    { name: '1.0', digest: d1, size: 2_500_000, created: '2026-01-02T03:04:05Z', mediaType: 'application/vnd.oci.image.manifest.v1+json' },
    { name: 'latest', digest: d1, size: 2_500_000, created: '2026-01-02T03:04:05Z' },
    { name: '0.9', digest: d2 },
  ],
  ...onePage(3),
};
const hit = { description: '', star_count: 0, is_official: false, is_automated: false };

let api: StubApi;
beforeEach(() => {
  session.environments = [{ id: 1, name: 'local', connectionType: 'socket' }];
  session.envId = 1;
  session.session = { authenticated: false, authEnabled: false };
  api = stubApi({
    'GET /api/registries': [registry], // the pull dialog's reads
    'GET /api/images/scanners': { setting: 'none', usable: true, scanners: [] },
    'GET /api/registries/2': { ...registry },
    'GET /api/registry/catalog': (c: StubCall) =>
      c.query.last
        ? { repositories: [{ name: 'team/worker' }], pagination: { pageSize: 100, hasMore: false, nextLast: null } }
        : { repositories: [{ name: 'team/app' }, { name: 'tools/cli' }], pagination: { pageSize: 100, hasMore: true, nextLast: 'tools/cli' } },
    'GET /api/registry/search': [{ name: 'team/app', ...hit }, { name: 'team/worker', ...hit }],
    'GET /api/registry/tags': tagsOf,
    'DELETE /api/registry/image': { success: true, digest: d1, message: 'Deleted team/app:1.0' },
    'POST /api/registries/2/default': () => {
      api.routes['GET /api/registries/2'] = { ...registry, isDefault: true };
      return { ...registry, isDefault: true };
    },
  });
});
afterEach(() => {
  cleanup();
  queryClient.clear();
  vi.unstubAllGlobals();
  vi.clearAllMocks();
});

const repoNames = () =>
  within(screen.getByRole('list', { name: 'Repositories' }))
    .getAllByRole('button')
    .map((b) => b.textContent?.trim());

describe('RegistryBrowserScreen', () => {
  it('lists repositories page by page and filters them', async () => {
    render(RegistryBrowserScreen, { route });
    expect(await screen.findByRole('heading', { level: 1, name: 'Browse local' })).toBeTruthy();
    await screen.findByRole('list', { name: 'Repositories' });
    expect(api.called('GET /api/registry/catalog')[0].query).toEqual({ registry: '2', n: '100' });
    expect(repoNames()).toEqual(['team/app', 'tools/cli']);

    await fireEvent.click(screen.getByRole('button', { name: 'Load more repositories' }));
    await waitFor(() => expect(repoNames()).toEqual(['team/app', 'tools/cli', 'team/worker']));
    expect(api.called('GET /api/registry/catalog').at(-1)?.query).toEqual({ registry: '2', n: '100', last: 'tools/cli' });
    expect(screen.queryByRole('button', { name: 'Load more repositories' })).toBeNull();

    await fireEvent.input(screen.getByLabelText('Filter'), { target: { value: 'TEAM' } });
    expect(repoNames()).toEqual(['team/app', 'team/worker']);
    await fireEvent.input(screen.getByLabelText('Filter'), { target: { value: 'nothing' } });
    expect(screen.getByText('No repository matches the filter.')).toBeTruthy();
    expect(document.body.textContent).not.toContain('berth-registry-pw');
  });

  it('searches the whole registry while more pages remain', async () => {
    render(RegistryBrowserScreen, { route });
    await screen.findByRole('list', { name: 'Repositories' });
    await fireEvent.input(screen.getByLabelText('Filter'), { target: { value: 'team' } });
    expect(repoNames()).toEqual(['team/app']);
    await fireEvent.click(screen.getByRole('button', { name: 'Search the whole registry' }));
    await waitFor(() => expect(repoNames()).toEqual(['team/app', 'team/worker']));
    expect(api.called('GET /api/registry/search')[0].query).toEqual({ registry: '2', term: 'team', limit: '500' });
    expect(screen.getByText('2 found')).toBeTruthy();
  });

  it('shows the tags of a repository and deletes one after confirming', async () => {
    render(RegistryBrowserScreen, { route });
    await screen.findByRole('list', { name: 'Repositories' });
    await fireEvent.click(screen.getByRole('button', { name: 'team/app' }));
    const table = await screen.findByRole('table', { name: 'Tags of team/app' });
    expect(api.called('GET /api/registry/tags')[0].query).toEqual({ registry: '2', image: 'team/app' });
    const rows = within(table).getAllByRole('row').slice(1);
    expect(rows.map((r) => within(r).getAllByRole('cell')[0].textContent)).toEqual(['1.0', 'latest', '0.9']);
    expect(within(rows[0]).getByText('111111111111')).toBeTruthy();
    expect(within(rows[2]).getByText('222222222222')).toBeTruthy();
    expect(within(rows[2]).getAllByText('—').length).toBe(2); // no size, no creation time

    // Cancel changes nothing.
    await fireEvent.click(screen.getByRole('button', { name: 'Delete team/app:latest' }));
    let dialog = screen.getByRole('dialog', { name: 'Delete team/app:latest?' });
    expect(dialog.textContent).toContain('deleted too: 1.0');
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Cancel' }));
    expect(api.called('DELETE /api/registry/image')).toHaveLength(0);

    await fireEvent.click(screen.getByRole('button', { name: 'Delete team/app:0.9' }));
    dialog = screen.getByRole('dialog', { name: 'Delete team/app:0.9?' });
    expect(dialog.textContent).not.toContain('deleted too');
    api.routes['GET /api/registry/tags'] = { repository: 'team/app', tags: [{ name: '1.0', digest: d1 }], ...onePage(1) };
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Delete' }));
    await waitFor(() => expect(screen.getByRole('status').textContent).toContain('Deleted team/app:0.9.'));
    expect(api.called('DELETE /api/registry/image')[0].query).toEqual({ registry: '2', image: 'team/app', tag: '0.9' });
    await waitFor(() => expect(screen.queryByRole('button', { name: 'Delete team/app:0.9' })).toBeNull());
  });

  it('pulls, runs or copies the reference of a tag', async () => {
    const writeText = vi.fn(async () => {});
    Object.defineProperty(navigator, 'clipboard', { value: { writeText }, configurable: true });
    render(RegistryBrowserScreen, { route });
    await screen.findByRole('list', { name: 'Repositories' });
    await fireEvent.click(screen.getByRole('button', { name: 'team/app' }));
    await screen.findByRole('table', { name: 'Tags of team/app' });
    expect(screen.getByRole('link', { name: 'Run team/app:1.0' }).getAttribute('href')).toBe(
      `/containers/new?image=${encodeURIComponent('127.0.0.1:5000/team/app:1.0')}`,
    );
    await fireEvent.click(screen.getByRole('button', { name: 'Copy reference team/app:1.0' }));
    await waitFor(() => expect(writeText).toHaveBeenCalledWith('127.0.0.1:5000/team/app:1.0'));
    await fireEvent.click(screen.getByRole('button', { name: 'Pull team/app:latest' }));
    const dialog = await screen.findByRole('dialog');
    expect(within(dialog).getByDisplayValue('127.0.0.1:5000/team/app:latest')).toBeTruthy();
  });

  it('offers no Pull, Run or Delete to a viewer, only Copy reference', async () => {
    session.session = {
      authenticated: true,
      authEnabled: true,
      user: { id: 5, username: 'v', isAdmin: false, permissions: { registries: ['view'] }, environmentPermissions: { '1': { images: ['view'] } } },
    };
    render(RegistryBrowserScreen, { route });
    await screen.findByRole('list', { name: 'Repositories' });
    await fireEvent.click(screen.getByRole('button', { name: 'team/app' }));
    await screen.findByRole('table', { name: 'Tags of team/app' });
    expect(screen.queryByRole('button', { name: /^(Pull|Delete) / })).toBeNull();
    expect(screen.queryByRole('link', { name: /^Run / })).toBeNull();
    expect(screen.getByRole('button', { name: 'Copy reference team/app:1.0' })).toBeTruthy();
  });

  it('reports a refused deletion and a tag list error', async () => {
    render(RegistryBrowserScreen, { route });
    await screen.findByRole('list', { name: 'Repositories' });
    await fireEvent.click(screen.getByRole('button', { name: 'team/app' }));
    await screen.findByRole('table', { name: 'Tags of team/app' });
    api.routes['DELETE /api/registry/image'] = () => {
      throw new ApiError(400, 'This registry does not allow deleting images (deletion is disabled in its configuration)');
    };
    await fireEvent.click(screen.getByRole('button', { name: 'Delete team/app:1.0' }));
    await fireEvent.click(within(screen.getByRole('dialog')).getByRole('button', { name: 'Delete' }));
    expect((await screen.findByRole('alert')).textContent).toContain('does not allow deleting images');

    api.routes['GET /api/registry/tags'] = () => {
      throw new ApiError(400, 'Authentication failed. Check registry credentials.');
    };
    await fireEvent.click(screen.getByRole('button', { name: 'tools/cli' }));
    await waitFor(() => expect(document.body.textContent).toContain('Tags could not be listed: Authentication failed'));
  });

  it('shows the namespace of a registry whose URL has a path next to its host', async () => {
    const intro = async () => (await screen.findByText(/Repositories and tags of/)).textContent?.replace(/\s+/g, ' ');
    const r = render(RegistryBrowserScreen, { route });
    expect(await intro()).toBe("Repositories and tags of 127.0.0.1:5000, read by the server with the registry's stored credentials.");
    r.unmount();
    queryClient.clear();
    api.routes['GET /api/registries/2'] = { ...registry, url: 'http://127.0.0.1:5000/team/apps/' };
    const r2 = render(RegistryBrowserScreen, { route });
    expect(await intro()).toBe(
      "Repositories and tags of 127.0.0.1:5000 in its namespace team/apps, named relative to it, read by the server with the registry's stored credentials.",
    );
    expect(screen.getByText('team/apps').tagName).toBe('CODE');
    r2.unmount();
    queryClient.clear();

    // The registry API's own /v2 is no namespace.
    api.routes['GET /api/registries/2'] = { ...registry, url: 'https://reg.example/v2' };
    render(RegistryBrowserScreen, { route });
    expect(await intro()).not.toContain('namespace');
  });

  it('makes the registry the default', async () => {
    render(RegistryBrowserScreen, { route });
    await fireEvent.click(await screen.findByRole('button', { name: 'Set as default' }));
    await waitFor(() => expect(screen.getByRole('status').textContent).toContain('local is now the default registry.'));
    expect(api.called('POST /api/registries/2/default')).toHaveLength(1);
    await waitFor(() => expect(screen.queryByRole('button', { name: 'Set as default' })).toBeNull());
    expect(screen.getByText('default')).toBeTruthy();
  });

  it('says so when the registry is unknown or the catalog fails', async () => {
    const catalog = api.routes['GET /api/registry/catalog'];
    api.routes['GET /api/registries/2'] = () => {
      throw new ApiError(404, 'Registry not found');
    };
    const r = render(RegistryBrowserScreen, { route });
    expect((await screen.findByRole('alert')).textContent).toContain('Registry not found.');
    expect(api.called('GET /api/registry/catalog')).toHaveLength(0);
    r.unmount();
    queryClient.clear();
    api.routes['GET /api/registries/2'] = { ...registry };
    api.routes['GET /api/registry/catalog'] = () => {
      throw new ApiError(400, 'Could not connect to the registry');
    };
    void catalog;
    render(RegistryBrowserScreen, { route });
    expect((await screen.findByRole('alert')).textContent).toContain('Repositories could not be listed: Could not connect to the registry');
  });

  // axe is slow on a loaded machine: a longer timeout, no timing asserted.
  it('has no serious or critical axe violations, with tags and the delete dialog open', { timeout: 60_000 }, async () => {
    const { container } = render(RegistryBrowserScreen, { route });
    await screen.findByRole('list', { name: 'Repositories' });
    await expectNoSeriousAxeViolations(container);
    await fireEvent.click(screen.getByRole('button', { name: 'team/app' }));
    await screen.findByRole('table', { name: 'Tags of team/app' });
    await expectNoSeriousAxeViolations(container);
    await fireEvent.click(screen.getByRole('button', { name: 'Delete team/app:1.0' }));
    await expectNoSeriousAxeViolations(container);
  });
});
