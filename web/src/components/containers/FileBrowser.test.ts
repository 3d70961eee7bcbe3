import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../../lib/api';
import { linkPath } from '../../lib/api-files';
import type { Schema } from '../../lib/client';
import { queryClient } from '../../lib/query';
import { session } from '../../lib/session.svelte';
import { stubApi, type StubApi, type StubCall } from '../../test-api';
import { expectNoSeriousAxeViolations } from '../../test-axe';
import FileBrowser from './FileBrowser.svelte';

type Entry = Schema<'files.Entry'>;
type Listing = Schema<'files.Listing'>;

const t = '2026-01-02T10:00:00Z';
const entry = (path: string, type: string, extra: Partial<Entry> = {}): Entry => ({
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

const listings: Record<string, Listing> = {
  '/': { path: '/', truncated: false, entries: [entry('/etc', 'directory'), entry('/tmp', 'directory'), entry('/link', 'symlink', { linkTarget: 'etc' })] },
  '/etc': { path: '/etc', truncated: false, entries: [entry('/etc/hosts', 'file'), entry('/etc/blob', 'file')] },
  '/tmp': { path: '/tmp', truncated: false, entries: [] },
};

const ok = { success: true };
let server: StubApi;

beforeEach(() => {
  queryClient.clear();
  session.session = { authenticated: false, authEnabled: false };
  session.envHealth = null;
  server = stubApi({
    'GET /api/containers/abc/files': (c: StubCall) => {
      const l = listings[c.query.path];
      if (!l) throw new ApiError(404, `Path not found: ${c.query.path}`);
      return l;
    },
    'GET /api/containers/abc/files/content': (c: StubCall) => {
      if (c.query.path === '/etc/blob') throw new ApiError(400, 'File /etc/blob is binary and cannot be edited as text; download it instead');
      return { path: c.query.path, content: '127.0.0.1 localhost\n', size: 20, mode: '0644', modified: t };
    },
    'PUT /api/containers/abc/files/content': ok,
    'POST /api/containers/abc/files/create': ok,
    'POST /api/containers/abc/files/rename': ok,
    'DELETE /api/containers/abc/files/delete': () => {
      throw new ApiError(409, 'Deleting a file is not possible while the container is paused: unpause it first');
    },
    'POST /api/containers/abc/files/upload': { success: true, files: ['a.txt'] },
  });
});
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

describe('FileBrowser', () => {
  it('lists the root, navigates with breadcrumbs and follows links', async () => {
    const { container } = render(FileBrowser, { env: 2, id: 'abc' });
    const table = await screen.findByRole('table', { name: 'Files of /' });
    expect(server.called('GET /api/containers/abc/files')[0].query).toEqual({ env: '2', path: '/' });
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
    expect(server.called('GET /api/containers/abc/files').map((c) => c.query.path)).toEqual(['/', '/etc']);
  }, 20_000);

  it('says why a directory could not be listed, and lists it on Retry', async () => {
    const answer = server.routes['GET /api/containers/abc/files'];
    server.routes['GET /api/containers/abc/files'] = () => {
      throw new ApiError(403, 'Permission denied');
    };
    render(FileBrowser, { env: 1, id: 'abc' });
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain('/ could not be listed: Permission denied');
    server.routes['GET /api/containers/abc/files'] = answer;
    await fireEvent.click(within(alert).getByRole('button', { name: 'Retry' }));
    expect(await screen.findByRole('table', { name: 'Files of /' })).toBeTruthy();
    expect(screen.queryByRole('alert')).toBeNull();
  });

  it('edits a text file and saves it, and says why a binary one cannot be edited', async () => {
    render(FileBrowser, { env: 1, id: 'abc' });
    await fireEvent.click(await screen.findByRole('button', { name: 'etc/' }));
    await fireEvent.click(await screen.findByRole('button', { name: 'blob' }));
    expect((await screen.findByRole('alert')).textContent).toContain('/etc/blob could not be opened: File /etc/blob is binary');
    expect(screen.queryByRole('dialog')).toBeNull();
    await fireEvent.click(screen.getByRole('button', { name: 'hosts' }));
    const dialog = await screen.findByRole('dialog', { name: 'Edit /etc/hosts' });
    expect(server.called('GET /api/containers/abc/files/content').at(-1)?.query).toEqual({ env: '1', path: '/etc/hosts' });
    const area = within(dialog).getByRole('textbox', { name: 'Content' }) as HTMLTextAreaElement;
    expect(area.value).toBe('127.0.0.1 localhost\n');
    await fireEvent.input(area, { target: { value: '10.0.0.1 db\n' } });
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(server.called('PUT /api/containers/abc/files/content')).toHaveLength(1));
    expect(server.called('PUT /api/containers/abc/files/content')[0]).toMatchObject({
      query: { env: '1' },
      body: { path: '/etc/hosts', content: '10.0.0.1 db\n' },
    });
    expect((await screen.findByRole('status')).textContent).toContain('Saved /etc/hosts');
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    // The listing is read again after the change.
    await waitFor(() => expect(server.called('GET /api/containers/abc/files').filter((c) => c.query.path === '/etc').length).toBeGreaterThan(1));
  });

  it('keeps the editor open with the server\'s refusal of a save', async () => {
    server.routes['PUT /api/containers/abc/files/content'] = () => {
      throw new ApiError(413, 'File is larger than 1 MiB');
    };
    render(FileBrowser, { env: 1, id: 'abc' });
    await fireEvent.click(await screen.findByRole('button', { name: 'etc/' }));
    await fireEvent.click(await screen.findByRole('button', { name: 'hosts' }));
    const dialog = await screen.findByRole('dialog', { name: 'Edit /etc/hosts' });
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Save' }));
    expect((await within(dialog).findByRole('alert')).textContent).toBe('Save /etc/hosts: File is larger than 1 MiB');
    expect(server.called('PUT /api/containers/abc/files/content')[0].body).toEqual({ path: '/etc/hosts', content: '127.0.0.1 localhost\n' });
  });

  it('creates, renames, uploads, and shows the server\'s refusal of a delete', async () => {
    render(FileBrowser, { env: 1, id: 'abc' });
    await fireEvent.click(await screen.findByRole('button', { name: 'tmp/' }));
    await screen.findByRole('table', { name: 'Files of /tmp' });
    await fireEvent.click(screen.getByRole('button', { name: 'New folder' }));
    let dialog = await screen.findByRole('dialog', { name: 'New folder' });
    await fireEvent.input(within(dialog).getByRole('textbox', { name: 'Name' }), { target: { value: 'data' } });
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Create' }));
    await waitFor(() => expect(server.called('POST /api/containers/abc/files/create')).toHaveLength(1));
    expect(server.called('POST /api/containers/abc/files/create')[0]).toMatchObject({ query: { env: '1' }, body: { path: '/tmp/data', type: 'directory' } });
    expect((await screen.findByRole('status')).textContent).toBe('Created /tmp/data');

    const input = screen.getByLabelText('Upload files') as HTMLInputElement;
    // The fetch of the tests (Node's) reads no jsdom File or FormData: Node's own, from a parsed form.
    const parsed = await new Response('--b\r\nContent-Disposition: form-data; name="f"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nhello upload\r\n--b--\r\n', {
      headers: { 'Content-Type': 'multipart/form-data; boundary=b' },
    }).formData();
    vi.stubGlobal('FormData', parsed.constructor);
    const file = parsed.get('f') as File;
    Object.defineProperty(input, 'files', { value: [file], configurable: true });
    await fireEvent.change(input);
    await waitFor(() => expect(server.called('POST /api/containers/abc/files/upload')).toHaveLength(1));
    const up = server.called('POST /api/containers/abc/files/upload')[0];
    expect(up.query).toEqual({ env: '1', path: '/tmp' });
    expect(String(up.body)).toContain('filename="a.txt"');
    expect(String(up.body)).toContain('hello upload');
    expect((await screen.findByRole('status')).textContent).toBe('Uploaded a.txt');

    await fireEvent.click(screen.getByRole('button', { name: '/' }));
    await fireEvent.click(await screen.findByRole('button', { name: 'Rename etc' }));
    dialog = await screen.findByRole('dialog', { name: 'Rename etc' });
    await fireEvent.input(within(dialog).getByRole('textbox', { name: 'Name' }), { target: { value: 'etc2' } });
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Rename' }));
    await waitFor(() => expect(server.called('POST /api/containers/abc/files/rename')).toHaveLength(1));
    expect(server.called('POST /api/containers/abc/files/rename')[0]).toMatchObject({ query: { env: '1' }, body: { path: '/etc', newPath: '/etc2' } });

    await fireEvent.click(await screen.findByRole('button', { name: 'Delete tmp' }));
    dialog = await screen.findByRole('dialog', { name: 'Delete tmp?' });
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Delete' }));
    expect((await within(dialog).findByRole('alert')).textContent).toBe(
      'Delete tmp: Deleting a file is not possible while the container is paused: unpause it first',
    );
    expect(server.called('DELETE /api/containers/abc/files/delete')[0].query).toEqual({ env: '1', path: '/tmp' });
  }, 20_000);

  it('shows a Viewer the files and their content but no control that changes them', async () => {
    session.session = {
      authenticated: true,
      authEnabled: true,
      user: { id: 2, username: 'val', isAdmin: false, environmentPermissions: { '1': { containers: ['view', 'inspect'] } } },
    };
    render(FileBrowser, { env: 1, id: 'abc' });
    const table = await screen.findByRole('table', { name: 'Files of /' });
    for (const n of ['New file', 'New folder', 'Rename etc', 'Delete etc']) expect(screen.queryByRole('button', { name: n })).toBeNull();
    expect(screen.queryByLabelText('Upload files')).toBeNull();
    expect(within(table).getByRole('link', { name: 'Download etc' })).toBeTruthy();
    await fireEvent.click(within(table).getByRole('button', { name: 'etc/' }));
    await fireEvent.click(await screen.findByRole('button', { name: 'hosts' }));
    const dialog = await screen.findByRole('dialog', { name: 'View /etc/hosts' });
    expect((within(dialog).getByRole('textbox', { name: 'Content' }) as HTMLTextAreaElement).readOnly).toBe(true);
    expect(within(dialog).queryByRole('button', { name: 'Save' })).toBeNull();
  });

  it('offers no change while the environment is offline', async () => {
    session.envHealth = { envId: 1, state: 'offline', reason: 'The engine cannot be reached' };
    render(FileBrowser, { env: 1, id: 'abc' });
    await screen.findByRole('table', { name: 'Files of /' });
    for (const n of ['New file', 'New folder', 'Rename etc', 'Delete etc']) {
      const b = screen.getByRole('button', { name: n }) as HTMLButtonElement;
      expect(b.disabled).toBe(true);
      expect(b.title).toBe('The environment is offline');
    }
    expect((screen.getByLabelText('Upload files') as HTMLInputElement).disabled).toBe(true);
  });

  it('says what works on a stopped or paused container', async () => {
    const { rerender } = render(FileBrowser, { env: 1, id: 'abc', status: 'exited' });
    expect(screen.getByText('Container is not running: these are the files of its stopped filesystem, and changes go there.')).toBeTruthy();
    expect(await screen.findByRole('table', { name: 'Files of /' })).toBeTruthy();
    await rerender({ env: 1, id: 'abc', status: 'paused' });
    expect(screen.getByText(/Container is paused: files can be read and written, but not deleted or renamed/)).toBeTruthy();
  });
});

describe('linkPath', () => {
  it('resolves link targets inside the container root', () => {
    expect(linkPath('/usr/lib', '../share')).toBe('/usr/share');
    expect(linkPath('/a', '../../../..')).toBe('/');
    expect(linkPath('/a', '/etc/x')).toBe('/etc/x');
  });
});
