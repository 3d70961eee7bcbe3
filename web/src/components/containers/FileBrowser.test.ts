import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../../lib/api';
import * as fa from '../../lib/api-files';
import { expectNoSeriousAxeViolations } from '../../test-axe';
import FileBrowser from './FileBrowser.svelte';

vi.mock('../../lib/api-files', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../lib/api-files')>();
  return {
    ...real,
    listFiles: vi.fn(),
    readFile: vi.fn(),
    writeFile: vi.fn(),
    createFile: vi.fn(),
    deleteFile: vi.fn(),
    renameFile: vi.fn(),
    uploadFiles: vi.fn(),
  };
});

const t = '2026-01-02T10:00:00Z';
const entry = (path: string, type: fa.FileType, extra: Partial<fa.FileEntry> = {}): fa.FileEntry => ({
  name: path.split('/').pop()!,
  path,
  type,
  size: 12,
  mode: type === 'directory' ? '0755' : '0644',
  permissions: type === 'directory' ? 'drwxr-xr-x' : '-rw-r--r--',
  modified: t,
  uid: 0,
  gid: 0,
  ...extra,
});

const listings: Record<string, fa.FileListing> = {
  '/': { path: '/', truncated: false, entries: [entry('/etc', 'directory'), entry('/tmp', 'directory'), entry('/link', 'symlink', { linkTarget: 'etc' })] },
  '/etc': { path: '/etc', truncated: false, entries: [entry('/etc/hosts', 'file'), entry('/etc/blob', 'file')] },
  '/tmp': { path: '/tmp', truncated: false, entries: [] },
};

beforeEach(() => {
  vi.mocked(fa.listFiles).mockImplementation(async (_env, _id, path) => {
    const l = listings[path];
    if (!l) throw new ApiError(404, `Path not found: ${path}`);
    return l;
  });
  vi.mocked(fa.readFile).mockImplementation(async (_env, _id, path) => {
    if (path === '/etc/blob') throw new ApiError(400, 'File /etc/blob is binary and cannot be edited as text; download it instead');
    return { path, content: '127.0.0.1 localhost\n', size: 20, mode: '0644', modified: t };
  });
  vi.mocked(fa.writeFile).mockResolvedValue({ success: true });
  vi.mocked(fa.createFile).mockResolvedValue({ success: true });
  vi.mocked(fa.renameFile).mockResolvedValue({ success: true });
  vi.mocked(fa.deleteFile).mockRejectedValue(
    new ApiError(409, 'Deleting a file is not possible while the container is paused: unpause it first'),
  );
  vi.mocked(fa.uploadFiles).mockResolvedValue({ success: true, files: ['a.txt'] });
});
afterEach(() => {
  cleanup();
  vi.clearAllMocks();
});

describe('FileBrowser', () => {
  it('lists the root, navigates with breadcrumbs and follows links', async () => {
    const { container } = render(FileBrowser, { env: 2, id: 'abc' });
    const table = await screen.findByRole('table', { name: 'Files of /' });
    expect(within(table).getByRole('button', { name: 'etc/' })).toBeTruthy();
    expect(within(table).getByRole('link', { name: 'Download etc' }).getAttribute('href')).toBe('/api/containers/abc/files/download?env=2&path=%2Fetc');
    await expectNoSeriousAxeViolations(container);
    await fireEvent.click(within(table).getByRole('button', { name: 'etc/' }));
    expect(await screen.findByRole('table', { name: 'Files of /etc' })).toBeTruthy();
    const nav = screen.getByRole('navigation', { name: 'Path' });
    expect(within(nav).getByRole('button', { name: 'etc' }).getAttribute('aria-current')).toBe('location');
    await fireEvent.click(within(nav).getByRole('button', { name: '/' }));
    await fireEvent.click(await screen.findByRole('button', { name: 'link → etc' }));
    expect(await screen.findByRole('table', { name: 'Files of /etc' })).toBeTruthy();
    expect(fa.listFiles).toHaveBeenLastCalledWith(2, 'abc', '/etc');
  }, 20_000);

  it('edits a text file and saves it, and says why a binary one cannot be edited', async () => {
    render(FileBrowser, { env: 1, id: 'abc' });
    await fireEvent.click(await screen.findByRole('button', { name: 'etc/' }));
    await fireEvent.click(await screen.findByRole('button', { name: 'blob' }));
    expect((await screen.findByRole('alert')).textContent).toContain('binary');
    await fireEvent.click(screen.getByRole('button', { name: 'hosts' }));
    const dialog = await screen.findByRole('dialog', { name: 'Edit /etc/hosts' });
    const area = within(dialog).getByRole('textbox', { name: 'Content' }) as HTMLTextAreaElement;
    expect(area.value).toBe('127.0.0.1 localhost\n');
    await fireEvent.input(area, { target: { value: '10.0.0.1 db\n' } });
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(fa.writeFile).toHaveBeenCalledWith(1, 'abc', '/etc/hosts', '10.0.0.1 db\n'));
    expect((await screen.findByRole('status')).textContent).toContain('Saved /etc/hosts');
  });

  it('creates, renames, uploads, and shows the server\'s refusal of a delete', async () => {
    render(FileBrowser, { env: 1, id: 'abc' });
    await fireEvent.click(await screen.findByRole('button', { name: 'tmp/' }));
    await screen.findByRole('table', { name: 'Files of /tmp' });
    await fireEvent.click(screen.getByRole('button', { name: 'New folder' }));
    let dialog = await screen.findByRole('dialog', { name: 'New folder' });
    await fireEvent.input(within(dialog).getByRole('textbox', { name: 'Name' }), { target: { value: 'data' } });
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Create' }));
    await waitFor(() => expect(fa.createFile).toHaveBeenCalledWith(1, 'abc', '/tmp/data', 'directory'));

    const input = screen.getByLabelText('Upload files') as HTMLInputElement;
    const file = new File(['hi'], 'a.txt', { type: 'text/plain' });
    Object.defineProperty(input, 'files', { value: [file], configurable: true });
    await fireEvent.change(input);
    await waitFor(() => expect(fa.uploadFiles).toHaveBeenCalledWith(1, 'abc', '/tmp', [file]));

    await fireEvent.click(screen.getByRole('button', { name: '/' }));
    await fireEvent.click(await screen.findByRole('button', { name: 'Rename etc' }));
    dialog = await screen.findByRole('dialog', { name: 'Rename etc' });
    await fireEvent.input(within(dialog).getByRole('textbox', { name: 'Name' }), { target: { value: 'etc2' } });
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Rename' }));
    await waitFor(() => expect(fa.renameFile).toHaveBeenCalledWith(1, 'abc', '/etc', '/etc2'));

    await fireEvent.click(await screen.findByRole('button', { name: 'Delete tmp' }));
    dialog = await screen.findByRole('dialog', { name: 'Delete tmp?' });
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Delete' }));
    expect((await within(dialog).findByRole('alert')).textContent).toContain('unpause it first');
    expect(fa.deleteFile).toHaveBeenCalledWith(1, 'abc', '/tmp');
  });
});

describe('linkPath', () => {
  it('resolves link targets inside the container root', () => {
    expect(fa.linkPath('/usr/lib', '../share')).toBe('/usr/share');
    expect(fa.linkPath('/a', '../../../..')).toBe('/');
    expect(fa.linkPath('/a', '/etc/x')).toBe('/etc/x');
  });
});
