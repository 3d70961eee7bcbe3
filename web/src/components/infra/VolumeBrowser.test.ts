import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../../lib/api';
import * as vc from '../../lib/api-volumecontent';
import type { Schema } from '../../lib/client';
import { queryClient } from '../../lib/query';
import { session } from '../../lib/session.svelte';
import { stubApi, type StubApi, type StubCall } from '../../test-api';
import { expectNoSeriousAxeViolations } from '../../test-axe';
import VolumeBrowser from './VolumeBrowser.svelte';

const t = '2026-01-02T10:00:00Z';
const entry = (name: string, type: string, extra: Partial<vc.VolumeEntry> = {}): vc.VolumeEntry => ({
  name,
  type,
  size: 12,
  mode: type === 'directory' ? 'drwxr-xr-x' : '-rw-r--r--',
  modified: t,
  linkTarget: '',
  ...extra,
});

const listings: Record<string, Schema<'volumes.Listing'>> = {
  '/': {
    path: '/',
    entries: [entry('notes.txt', 'file'), entry('sub', 'directory'), entry('link', 'symlink', { linkTarget: 'sub' }), entry('bin.dat', 'file'), entry('flink', 'symlink', { linkTarget: 'notes.txt' })],
  },
  '/sub': { path: '/sub', entries: [entry('deep.txt', 'file')] },
  '/link': { path: '/link', entries: [entry('deep.txt', 'file')] },
};

let server: StubApi;
const browse = 'GET /api/volumes/data/browse';
const content = 'GET /api/volumes/data/browse/content';
const release = 'POST /api/volumes/data/browse/release';
const cloneRoute = 'POST /api/volumes/data/clone';

beforeEach(() => {
  queryClient.clear();
  session.session = { authenticated: false, authEnabled: false };
  session.envHealth = null;
  server = stubApi({
    [browse]: (c: StubCall) => {
      const l = listings[c.query.path];
      if (!l) throw new ApiError(400, 'Path is not a directory');
      return l;
    },
    [content]: (c: StubCall) => {
      if (c.query.path === '/bin.dat') throw new ApiError(400, 'File is binary and cannot be shown as text');
      return { path: c.query.path, size: 6, modified: t, content: 'hello\n' };
    },
    [release]: { success: true, released: true },
    [cloneRoute]: (c: StubCall) => ({ success: true, name: (c.body as { name: string }).name }),
  });
});
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

describe('VolumeBrowser', () => {
  it('offers downloads of the export and browses only when asked', async () => {
    const { container } = render(VolumeBrowser, { env: 2, name: 'data' });
    expect(screen.getByRole('link', { name: 'Download .tar' }).getAttribute('href')).toBe('/api/volumes/data/export?env=2');
    expect(screen.getByRole('link', { name: 'Download .tar.gz' }).getAttribute('href')).toBe('/api/volumes/data/export?env=2&compress=gzip');
    await new Promise((r) => setTimeout(r, 20));
    expect(server.calls).toHaveLength(0);
    await fireEvent.click(screen.getByRole('button', { name: 'Browse content' }));
    const table = await screen.findByRole('table', { name: 'Content of /' });
    expect(server.called(browse)[0].query).toEqual({ env: '2', path: '/' });
    const names = within(table)
      .getAllByRole('row')
      .slice(1)
      .map((r) => r.querySelector('td')?.textContent?.trim());
    expect(names).toEqual(['sub/', 'bin.dat', 'flink → notes.txt', 'link → sub', 'notes.txt']);
    await expectNoSeriousAxeViolations(container);
  }, 20_000);

  it('navigates into directories and back, and follows a link to a directory or a file', async () => {
    render(VolumeBrowser, { env: 1, name: 'data' });
    await fireEvent.click(screen.getByRole('button', { name: 'Browse content' }));
    await fireEvent.click(await screen.findByRole('button', { name: 'sub/' }));
    expect(await screen.findByRole('table', { name: 'Content of /sub' })).toBeTruthy();
    const nav = screen.getByRole('navigation', { name: 'Path' });
    expect(within(nav).getByRole('button', { name: 'sub' }).getAttribute('aria-current')).toBe('location');
    await fireEvent.click(screen.getByRole('button', { name: '.. (up)' }));
    await fireEvent.click(await screen.findByRole('button', { name: 'link' }));
    expect(await screen.findByRole('table', { name: 'Content of /link' })).toBeTruthy();
    await fireEvent.click(within(screen.getByRole('navigation', { name: 'Path' })).getByRole('button', { name: 'data' }));
    await fireEvent.click(await screen.findByRole('button', { name: 'flink' }));
    expect((await screen.findByLabelText('Content of /flink')).textContent).toBe('hello\n');
    expect(server.called(content).at(-1)?.query).toEqual({ env: '1', path: '/flink' });
    expect(screen.getByRole('table', { name: 'Content of /' })).toBeTruthy();
  });

  it('says why a directory could not be listed, and lists it on Retry', async () => {
    server.routes[browse] = () => {
      throw new ApiError(403, 'Permission denied');
    };
    render(VolumeBrowser, { env: 1, name: 'data' });
    await fireEvent.click(screen.getByRole('button', { name: 'Browse content' }));
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain('/ could not be listed: Permission denied');
    server.routes[browse] = listings['/'];
    await fireEvent.click(within(alert).getByRole('button', { name: 'Retry' }));
    expect(await screen.findByRole('table', { name: 'Content of /' })).toBeTruthy();
  });

  it('shows a text file and says why a binary one is not shown', async () => {
    render(VolumeBrowser, { env: 1, name: 'data' });
    await fireEvent.click(screen.getByRole('button', { name: 'Browse content' }));
    await fireEvent.click(await screen.findByRole('button', { name: 'notes.txt' }));
    expect((await screen.findByLabelText('Content of /notes.txt')).textContent).toBe('hello\n');
    expect(server.called(content)[0].query).toEqual({ env: '1', path: '/notes.txt' });
    await fireEvent.click(screen.getByRole('button', { name: 'bin.dat' }));
    expect((await screen.findByRole('alert')).textContent).toContain('/bin.dat could not be shown: File is binary and cannot be shown as text');
    expect(screen.queryByLabelText('Content of /notes.txt')).toBeNull();
  });

  it('releases the helper when closed, and reads nothing more', async () => {
    render(VolumeBrowser, { env: 1, name: 'data' });
    await fireEvent.click(screen.getByRole('button', { name: 'Browse content' }));
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Close browser' }));
    await waitFor(() => expect(server.called(release)).toHaveLength(1));
    expect(server.called(release)[0].query).toEqual({ env: '1' });
    expect(screen.queryByRole('table')).toBeNull();
    // The release refreshes cached reads: no browse starts a helper again.
    await new Promise((r) => setTimeout(r, 50));
    expect(server.called(browse)).toHaveLength(1);
  });

  it('offers a Viewer the browser and the downloads but no clone', async () => {
    session.session = {
      authenticated: true,
      authEnabled: true,
      user: { id: 2, username: 'val', isAdmin: false, environmentPermissions: { '1': { volumes: ['view', 'inspect'] } } },
    };
    render(VolumeBrowser, { env: 1, name: 'data' });
    expect(screen.queryByRole('button', { name: 'Clone' })).toBeNull();
    expect(screen.getByRole('link', { name: 'Download .tar' })).toBeTruthy();
    await fireEvent.click(screen.getByRole('button', { name: 'Browse content' }));
    expect(await screen.findByRole('table', { name: 'Content of /' })).toBeTruthy();
  });

  it('clones into a named volume and reports refusals', async () => {
    const oncloned = vi.fn();
    render(VolumeBrowser, { env: 1, name: 'data', oncloned });
    await fireEvent.click(screen.getByRole('button', { name: 'Clone' }));
    const input = screen.getByLabelText('Name of the clone') as HTMLInputElement;
    expect(input.value).toBe('data-copy');
    const dialog = screen.getByRole('dialog');
    await fireEvent.input(input, { target: { value: ' ' } });
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Clone' }));
    expect(within(dialog).getByRole('alert').textContent).toBe('Volume name is required');
    expect(server.called(cloneRoute)).toHaveLength(0);
    server.routes[cloneRoute] = () => {
      throw new ApiError(409, 'Volume already exists');
    };
    await fireEvent.input(input, { target: { value: 'data-copy' } });
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Clone' }));
    expect((await within(dialog).findByRole('alert')).textContent).toBe('Clone into data-copy: Volume already exists');
    server.routes[cloneRoute] = { success: true, name: 'data-2' };
    await fireEvent.input(input, { target: { value: 'data-2' } });
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Clone' }));
    await waitFor(() => expect(oncloned).toHaveBeenCalledWith('data-2'));
    expect(server.called(cloneRoute).at(-1)).toMatchObject({ query: { env: '1' }, body: { name: 'data-2' } });
    expect(screen.queryByRole('dialog')).toBeNull();
    expect(screen.getByRole('status').textContent).toBe('Cloned into data-2.');
  });
});

describe('volume content paths', () => {
  it('joins, climbs and sorts', () => {
    expect(vc.childPath('/', 'a')).toBe('/a');
    expect(vc.childPath('/a', 'b')).toBe('/a/b');
    expect(vc.parentPath('/a/b')).toBe('/a');
    expect(vc.parentPath('/a')).toBe('/');
    expect(vc.imageExportUrl(3, 'repo/x:1')).toBe('/api/images/repo%2Fx%3A1/export?env=3');
  });
});
