import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../../lib/api';
import * as vc from '../../lib/api-volumecontent';
import { expectNoSeriousAxeViolations } from '../../test-axe';
import VolumeBrowser from './VolumeBrowser.svelte';

vi.mock('../../lib/api-volumecontent', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../lib/api-volumecontent')>();
  return { ...real, browseVolume: vi.fn(), readVolumeFile: vi.fn(), releaseVolumeBrowse: vi.fn(), cloneVolume: vi.fn() };
});

const t = '2026-01-02T10:00:00Z';
const entry = (name: string, type: vc.EntryType, extra: Partial<vc.VolumeEntry> = {}): vc.VolumeEntry => ({
  name,
  type,
  size: 12,
  mode: type === 'directory' ? 'drwxr-xr-x' : '-rw-r--r--',
  modified: t,
  linkTarget: '',
  ...extra,
});

const listings: Record<string, vc.VolumeListing> = {
  '/': {
    path: '/',
    entries: [entry('notes.txt', 'file'), entry('sub', 'directory'), entry('link', 'symlink', { linkTarget: 'sub' }), entry('bin.dat', 'file')],
  },
  '/sub': { path: '/sub', entries: [entry('deep.txt', 'file')] },
  '/link': { path: '/link', entries: [entry('deep.txt', 'file')] },
};

beforeEach(() => {
  vi.mocked(vc.browseVolume).mockImplementation(async (_env, _name, path) => {
    const l = listings[path];
    if (!l) throw new ApiError(400, 'Path is not a directory');
    return l;
  });
  vi.mocked(vc.readVolumeFile).mockImplementation(async (_env, _name, path) => {
    if (path === '/bin.dat') throw new ApiError(400, 'File is binary and cannot be shown as text');
    return { path, size: 6, modified: t, content: 'hello\n' };
  });
  vi.mocked(vc.releaseVolumeBrowse).mockResolvedValue({ success: true, released: true });
  vi.mocked(vc.cloneVolume).mockResolvedValue({ success: true, name: 'data-copy' });
});
afterEach(() => {
  cleanup();
  vi.clearAllMocks();
});

describe('VolumeBrowser', () => {
  it('offers downloads of the export and browses only when asked', async () => {
    const { container } = render(VolumeBrowser, { env: 2, name: 'data' });
    expect(screen.getByRole('link', { name: 'Download .tar' }).getAttribute('href')).toBe('/api/volumes/data/export?env=2');
    expect(screen.getByRole('link', { name: 'Download .tar.gz' }).getAttribute('href')).toBe('/api/volumes/data/export?env=2&compress=gzip');
    expect(vc.browseVolume).not.toHaveBeenCalled();
    await fireEvent.click(screen.getByRole('button', { name: 'Browse content' }));
    const table = await screen.findByRole('table', { name: 'Content of /' });
    const names = within(table)
      .getAllByRole('row')
      .slice(1)
      .map((r) => r.querySelector('td')?.textContent?.trim());
    expect(names).toEqual(['sub/', 'bin.dat', 'link → sub', 'notes.txt']);
    await expectNoSeriousAxeViolations(container);
  }, 20_000);

  it('navigates into directories and back, and follows a link to a directory', async () => {
    render(VolumeBrowser, { env: 1, name: 'data' });
    await fireEvent.click(screen.getByRole('button', { name: 'Browse content' }));
    await fireEvent.click(await screen.findByRole('button', { name: 'sub/' }));
    expect(await screen.findByRole('table', { name: 'Content of /sub' })).toBeTruthy();
    const nav = screen.getByRole('navigation', { name: 'Path' });
    expect(within(nav).getByRole('button', { name: 'sub' }).getAttribute('aria-current')).toBe('location');
    await fireEvent.click(screen.getByRole('button', { name: '.. (up)' }));
    await fireEvent.click(await screen.findByRole('button', { name: 'link' }));
    expect(await screen.findByRole('table', { name: 'Content of /link' })).toBeTruthy();
  });

  it('shows a text file and says why a binary one is not shown', async () => {
    render(VolumeBrowser, { env: 1, name: 'data' });
    await fireEvent.click(screen.getByRole('button', { name: 'Browse content' }));
    await fireEvent.click(await screen.findByRole('button', { name: 'notes.txt' }));
    expect((await screen.findByLabelText('Content of /notes.txt')).textContent).toBe('hello\n');
    expect(vc.readVolumeFile).toHaveBeenCalledWith(1, 'data', '/notes.txt');
    await fireEvent.click(screen.getByRole('button', { name: 'bin.dat' }));
    expect((await screen.findByRole('alert')).textContent).toBe('/bin.dat: File is binary and cannot be shown as text');
  });

  it('releases the helper when closed', async () => {
    render(VolumeBrowser, { env: 1, name: 'data' });
    await fireEvent.click(screen.getByRole('button', { name: 'Browse content' }));
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Close browser' }));
    expect(vc.releaseVolumeBrowse).toHaveBeenCalledWith(1, 'data');
    expect(screen.queryByRole('table')).toBeNull();
  });

  it('clones into a named volume and reports refusals', async () => {
    const oncloned = vi.fn();
    render(VolumeBrowser, { env: 1, name: 'data', oncloned });
    await fireEvent.click(screen.getByRole('button', { name: 'Clone' }));
    const input = screen.getByLabelText('Name of the clone') as HTMLInputElement;
    expect(input.value).toBe('data-copy');
    vi.mocked(vc.cloneVolume).mockRejectedValueOnce(new ApiError(409, 'Volume already exists'));
    const dialog = screen.getByRole('dialog');
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Clone' }));
    expect((await within(dialog).findByRole('alert')).textContent).toBe('Volume already exists');
    await fireEvent.input(input, { target: { value: 'data-2' } });
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Clone' }));
    await waitFor(() => expect(oncloned).toHaveBeenCalledWith('data-copy'));
    expect(vc.cloneVolume).toHaveBeenLastCalledWith(1, 'data', 'data-2');
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
