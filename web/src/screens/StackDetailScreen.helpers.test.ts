import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../lib/api';
import * as stacks from '../lib/api-stacks';
import { stubApi, type StubApi } from '../test-api';
import { matchRoute } from '../lib/routes';
import { session } from '../lib/session.svelte';
import { expectNoSeriousAxeViolations } from '../test-axe';
import StackDetailScreen from './StackDetailScreen.svelte';

// The stack page's helpers (issue 15): the delete preview in the delete
// dialog and the Relocate action.
vi.mock('../lib/api-stacks', async (importOriginal) => {
  const real = await importOriginal<typeof import('../lib/api-stacks')>();
  return {
    ...real,
    deletePreview: vi.fn(),
    checkPathChange: vi.fn(),
    relocateStack: vi.fn(),
    getPathHints: vi.fn(),
  };
});
// CodeMirror needs layout jsdom lacks: a text area stands in (editor-test-double).
vi.mock('../components/stacks/codemirror', () => import('../components/stacks/editor-test-double'));

const entry: stacks.StackEntry = {
  name: 'shop',
  status: 'running',
  sourceType: 'internal',
  containers: ['abc123'],
  containerDetails: [{ id: 'abc123', name: 'shop-app-1', service: 'app', state: 'running', status: 'Up', image: 'busybox' }],
};

function preview(removeVolumes: boolean): stacks.DeletePreview {
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
  });
  vi.mocked(stacks.deletePreview).mockImplementation(async (_env, _name, removeVolumes) => preview(removeVolumes));
  vi.mocked(stacks.getPathHints).mockResolvedValue({ basePath: '/data/stacks/1', directories: [], composeFiles: [], truncated: false });
});
afterEach(() => {
  cleanup();
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
    expect(stacks.deletePreview).toHaveBeenCalledWith(1, 'shop', false);
    expect(region.textContent).toContain('shop_default');
    expect(region.textContent).toContain('/data/stacks/1/shop/compose.yaml');
    expect(within(region).getByRole('heading', { name: /Volumes kept/ })).toBeTruthy();
    expect(within(region).queryByRole('heading', { name: /^Volumes \(/ })).toBeNull();
    await fireEvent.click(within(dialog).getByRole('checkbox', { name: /Remove volumes/ }));
    await waitFor(() => expect(stacks.deletePreview).toHaveBeenLastCalledWith(1, 'shop', true));
    await waitFor(() => expect(within(region).getByRole('heading', { name: /^Volumes \(1\)/ })).toBeTruthy());
    expect(within(region).queryByRole('heading', { name: /Volumes kept/ })).toBeNull();
    await expectNoSeriousAxeViolations(dialog);
  });

  it('says so when the preview cannot be read', async () => {
    vi.mocked(stacks.deletePreview).mockRejectedValue(new ApiError(500, 'Failed to preview the delete of stack'));
    render(StackDetailScreen, { route: route() });
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Delete' }));
    const dialog = await screen.findByRole('dialog');
    expect((await within(dialog).findByRole('alert')).textContent).toContain('The preview could not be read: Failed to preview');
  });

  it('relocates the stack after checking the new directory, then shows its new path', async () => {
    vi.mocked(stacks.checkPathChange).mockImplementation(async (_env, _name, p) =>
      p === '/srv/taken'
        ? { name: 'shop', from: '/data/stacks/1/shop', to: p, files: [{ from: '/data/stacks/1/shop/compose.yaml', to: '/srv/taken/compose.yaml', conflict: true }], conflicts: ['/srv/taken/compose.yaml'], left: [], warnings: [], canRelocate: false }
        : { name: 'shop', from: '/data/stacks/1/shop', to: p, files: [{ from: '/data/stacks/1/shop/compose.yaml', to: `${p}/compose.yaml`, conflict: false }], conflicts: [], left: [], warnings: [], canRelocate: true },
    );
    vi.mocked(stacks.relocateStack).mockResolvedValue({ success: true, name: 'shop', from: '/data/stacks/1/shop', to: '/srv/shop', files: [], conflicts: [], left: [], warnings: [] });
    render(StackDetailScreen, { route: route() });
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Relocate' }));
    const dialog = await screen.findByRole('dialog', { name: 'Relocate shop' });
    const input = within(dialog).getByLabelText('New directory');
    const move = within(dialog).getByRole('button', { name: 'Relocate' }) as HTMLButtonElement;
    expect(move.disabled).toBe(true);
    await fireEvent.input(input, { target: { value: '/srv/taken' } });
    await waitFor(() => expect(dialog.textContent).toContain('Files already exist there: /srv/taken/compose.yaml'));
    expect(move.disabled).toBe(true);
    await fireEvent.input(input, { target: { value: '/srv/shop' } });
    await waitFor(() => expect(dialog.textContent).toContain('Ready to move.'));
    expect(dialog.textContent).toContain('/data/stacks/1/shop/compose.yaml → /srv/shop/compose.yaml');
    api.routes['GET /api/stacks/shop/compose'] = {
      content: 'services: {}\n',
      stackDir: '/srv/shop',
      composePath: '/srv/shop/compose.yaml',
      envPath: '/srv/shop/.env',
      sourceType: 'internal',
    };
    await waitFor(() => expect(move.disabled).toBe(false));
    await fireEvent.click(move);
    await waitFor(() => expect(stacks.relocateStack).toHaveBeenCalledWith(1, 'shop', '/srv/shop'));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    expect(await screen.findByText('/srv/shop/compose.yaml')).toBeTruthy();
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
