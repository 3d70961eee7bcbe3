import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../lib/api';
import type * as stacks from '../lib/api-stacks';
import type { Schema } from '../lib/client';
import { queryClient } from '../lib/query';
import { stubApi, type StubApi, type StubCall } from '../test-api';
import { matchRoute } from '../lib/routes';
import { session } from '../lib/session.svelte';
import { expectNoSeriousAxeViolations } from '../test-axe';
import StackDetailScreen from './StackDetailScreen.svelte';

// The stack page's helpers (issue 15): the delete preview in the delete
// dialog and the Relocate action.
// CodeMirror needs layout jsdom lacks: a text area stands in (editor-test-double).
vi.mock('../components/stacks/codemirror', () => import('../components/stacks/editor-test-double'));

const entry: stacks.StackEntry = {
  name: 'shop',
  status: 'running',
  sourceType: 'internal',
  containers: ['abc123'],
  containerDetails: [{ id: 'abc123', name: 'shop-app-1', service: 'app', state: 'running', status: 'Up', image: 'busybox' }],
};

function preview(removeVolumes: boolean): Schema<'stacks.DeletePreview'> {
  return {
    name: 'shop',
    sourceType: 'internal',
    running: true,
    requiresForce: true,
    removeVolumes,
    containers: [{ id: 'abc123', name: 'shop-app-1', service: 'app', state: 'running' }],
    networks: ['shop_default'],
    volumes: removeVolumes ? ['shop_data'] : [],
    keptVolumes: removeVolumes ? [] : ['shop_data'],
    files: ['/data/stacks/1/shop/.env', '/data/stacks/1/shop/compose.yaml'],
    directories: ['/data/stacks/1/shop'],
    records: true,
    message: removeVolumes ? "Stack 'shop' is running." : 'The stack\'s 1 volume(s) are kept',
  };
}

beforeEach(() => {
  session.environments = [{ id: 1, name: 'local', connectionType: 'socket' }];
  session.envId = 1;
  session.session = { authenticated: false, authEnabled: false };
  api = stubApi({
    'GET /api/stacks': [entry],
    'GET /api/git/stacks': [],
    'GET /api/stacks/shop/compose': {
      content: 'services: {}\n',
      stackDir: '/data/stacks/1/shop',
      composePath: '/data/stacks/1/shop/compose.yaml',
      envPath: '/data/stacks/1/shop/.env',
      sourceType: 'internal',
    },
    'GET /api/stacks/shop/env': { variables: [] },
    'GET /api/stacks/shop/env/raw': { content: '' },
    'GET /api/stacks/shop/delete-preview': (c: StubCall) => preview(c.query.force === 'true'),
    'GET /api/stacks/path-hints': (c: StubCall) => ({ basePath: '/data/stacks/1', directories: c.query.prefix === '/srv/shop' ? ['/srv/shop-old'] : [], composeFiles: [], truncated: false }),
  });
});
afterEach(async () => {
  cleanup();
  await queryClient.cancelQueries(); // no retry outlives the test
  queryClient.clear();
  vi.clearAllMocks();
  vi.unstubAllGlobals();
});
let api: StubApi;

const route = () => matchRoute('/stacks/shop');

describe('StackDetailScreen (helpers)', () => {
  it('shows what the delete removes in its dialog, following the remove-volumes option', async () => {
    render(StackDetailScreen, { route: route() });
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Delete' }));
    const dialog = await screen.findByRole('dialog');
    const region = within(dialog).getByRole('region', { name: 'What the delete removes' });
    await waitFor(() => expect(region.textContent).toContain('shop-app-1 (running)'));
    expect(api.called('GET /api/stacks/shop/delete-preview')[0].query).toEqual({ env: '1', force: 'false' });
    expect(region.textContent).toContain('shop_default');
    expect(region.textContent).toContain('/data/stacks/1/shop/compose.yaml');
    expect(within(region).getByRole('heading', { name: /Volumes kept/ })).toBeTruthy();
    expect(within(region).queryByRole('heading', { name: /^Volumes \(/ })).toBeNull();
    await fireEvent.click(within(dialog).getByRole('checkbox', { name: /Remove volumes/ }));
    await waitFor(() => expect(api.called('GET /api/stacks/shop/delete-preview').at(-1)?.query).toEqual({ env: '1', force: 'true' }));
    await waitFor(() => expect(within(region).getByRole('heading', { name: /^Volumes \(1\)/ })).toBeTruthy());
    expect(within(region).queryByRole('heading', { name: /Volumes kept/ })).toBeNull();
    await expectNoSeriousAxeViolations(dialog);
  });

  it('says so when the preview cannot be read, retrying when the server failed', async () => {
    api.routes['GET /api/stacks/shop/delete-preview'] = () => {
      throw new ApiError(500, 'Failed to preview the delete of stack');
    };
    render(StackDetailScreen, { route: route() });
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Delete' }));
    const dialog = await screen.findByRole('dialog');
    const region = within(dialog).getByRole('region', { name: 'What the delete removes' });
    await waitFor(() => expect(region.textContent).toContain('The preview could not be read: Failed to preview the delete of stack. Retrying…'));
    // The server answers again: the preview comes by itself.
    api.routes['GET /api/stacks/shop/delete-preview'] = preview(false);
    await waitFor(() => expect(region.textContent).toContain('shop-app-1 (running)'), { timeout: 4000 });
    expect(region.textContent).not.toContain('could not be read');
  });

  it('says why when the preview is refused', async () => {
    api.routes['GET /api/stacks/shop/delete-preview'] = () => {
      throw new ApiError(404, "Stack 'shop' not found");
    };
    render(StackDetailScreen, { route: route() });
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Delete' }));
    const dialog = await screen.findByRole('dialog');
    expect((await within(dialog).findByRole('alert')).textContent).toContain("The preview could not be read: Stack 'shop' not found");
  });

  it('relocates the stack after checking the new directory, then shows its new path', async () => {
    api.routes['POST /api/stacks/shop/check-path-change'] = (c: StubCall) => {
      const p = (c.body as { path: string }).path;
      return p === '/srv/taken'
        ? { name: 'shop', from: '/data/stacks/1/shop', to: p, files: [{ from: '/data/stacks/1/shop/compose.yaml', to: '/srv/taken/compose.yaml', conflict: true }], conflicts: ['/srv/taken/compose.yaml'], left: null, warnings: null, canRelocate: false }
        : { name: 'shop', from: '/data/stacks/1/shop', to: p, files: [{ from: '/data/stacks/1/shop/compose.yaml', to: `${p}/compose.yaml`, conflict: false }], conflicts: [], left: [], warnings: [], canRelocate: true };
    };
    api.routes['POST /api/stacks/shop/relocate'] = { success: true, name: 'shop', from: '/data/stacks/1/shop', to: '/srv/shop', files: [], left: [], warnings: [], movedFiles: [] };
    render(StackDetailScreen, { route: route() });
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Relocate' }));
    const dialog = await screen.findByRole('dialog', { name: 'Relocate shop' });
    const input = within(dialog).getByLabelText('New directory');
    const move = within(dialog).getByRole('button', { name: 'Relocate' }) as HTMLButtonElement;
    expect(move.disabled).toBe(true);
    const composeReads = api.called('GET /api/stacks/shop/compose').length;
    await fireEvent.input(input, { target: { value: '/srv/taken' } });
    await waitFor(() => expect(dialog.textContent).toContain('Files already exist there: /srv/taken/compose.yaml'));
    expect(move.disabled).toBe(true);
    await fireEvent.input(input, { target: { value: '/srv/shop' } });
    await waitFor(() => expect(dialog.textContent).toContain('Ready to move.'));
    expect(dialog.textContent).toContain('/data/stacks/1/shop/compose.yaml → /srv/shop/compose.yaml');
    expect(api.called('POST /api/stacks/shop/check-path-change').map((c) => c.body)).toEqual([{ path: '/srv/taken' }, { path: '/srv/shop' }]);
    // A check changes nothing: the page's reads are not asked again for it.
    expect(api.called('GET /api/stacks/shop/compose')).toHaveLength(composeReads);
    // Directories under what was typed are suggested.
    await waitFor(() => expect(dialog.querySelector('datalist option')?.getAttribute('value')).toBe('/srv/shop-old'));
    api.routes['GET /api/stacks/shop/compose'] = {
      content: 'services: {}\n',
      stackDir: '/srv/shop',
      composePath: '/srv/shop/compose.yaml',
      envPath: '/srv/shop/.env',
      sourceType: 'internal',
    };
    await waitFor(() => expect(move.disabled).toBe(false));
    await fireEvent.click(move);
    await waitFor(() => expect(api.called('POST /api/stacks/shop/relocate')[0]?.body).toEqual({ path: '/srv/shop' }));
    expect(api.called('POST /api/stacks/shop/relocate')[0].query).toEqual({ env: '1' });
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    expect(await screen.findByText('/srv/shop/compose.yaml')).toBeTruthy();
  });

  it("keeps the dialog open with the server's message when the move is refused", async () => {
    api.routes['POST /api/stacks/shop/check-path-change'] = (c: StubCall) => ({ name: 'shop', to: (c.body as { path: string }).path, files: [], conflicts: null, left: null, warnings: null, canRelocate: true });
    api.routes['POST /api/stacks/shop/relocate'] = () => {
      throw new ApiError(409, 'The target directory is not writable');
    };
    render(StackDetailScreen, { route: route() });
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Relocate' }));
    const dialog = await screen.findByRole('dialog', { name: 'Relocate shop' });
    await fireEvent.input(within(dialog).getByLabelText('New directory'), { target: { value: '/ro' } });
    await waitFor(() => expect(dialog.textContent).toContain('Ready to move.'), { timeout: 3000 });
    const move = within(dialog).getByRole('button', { name: 'Relocate' }) as HTMLButtonElement;
    await waitFor(() => expect(move.disabled).toBe(false));
    await fireEvent.click(move);
    expect((await within(dialog).findByRole('alert')).textContent).toBe('The target directory is not writable');
    expect(screen.getByRole('dialog', { name: 'Relocate shop' })).toBeTruthy();
  });

  it('offers no Relocate for a git stack', async () => {
    api.routes['GET /api/stacks/shop/compose'] = {
      content: 'services: {}\n',
      stackDir: '/data/git/stack-1',
      composePath: '/data/git/stack-1/compose.yaml',
      envPath: '/data/stacks/1/shop/.env',
      sourceType: 'git',
    };
    render(StackDetailScreen, { route: route() });
    await screen.findByRole('textbox', { name: 'Compose file' });
    expect(screen.queryByRole('button', { name: 'Relocate' })).toBeNull();
  });
});
