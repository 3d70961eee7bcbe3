// The restore dialog's choices: which of the snapshot's volumes (all by
// default, none refused), each volume's new name and where the host paths
// go for a restore to a new name, and only what was chosen is sent.
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { session } from '../../lib/session.svelte';
import { stubApi, type StubApi } from '../../test-api';
import { expectNoSeriousAxeViolations } from '../../test-axe';
import RestoreDialog from './RestoreDialog.svelte';

const snapshot = { id: 'aaaaaaaa11', shortId: 'aaaaaaaa', time: '2026-11-28T03:00:00Z', hostname: 'inst-1', paths: [], tags: [] };
const preview = {
  targetType: 'stack',
  targetName: 'shop',
  items: [
    { kind: 'volume', source: 'shop_db', target: 'shop_db', exists: true, entries: ['pg'], files: 3 },
    { kind: 'volume', source: 'shop_media', target: 'shop_media', exists: true, entries: ['a.jpg'], files: 1 },
    { kind: 'path', source: '/srv/stacks/shop', target: '/srv/stacks/shop', exists: true, entries: ['compose.yaml'], files: 1 },
  ],
};
const done = () => new Response('event: result\ndata: {"status":"success","message":"Restored"}\n\n', { headers: { 'Content-Type': 'text/event-stream' } });

let api: StubApi;
beforeEach(() => {
  session.session = { authenticated: true, authEnabled: true, user: { id: 1, username: 'admin', isAdmin: true } } as never;
  session.environments = [{ id: 1, name: 'local', connectionType: 'socket' }];
  session.envId = 1;
  api = stubApi({ 'POST /api/backup/restore/preview': preview, 'POST /api/backup/restore': done });
});
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

async function open(): Promise<HTMLElement> {
  render(RestoreDialog, { props: { snapshot, destinationId: 1, onclose: () => {} } });
  const d = screen.getByRole('dialog');
  await within(d).findByLabelText('Restore volume shop_db');
  return d;
}
const restoreBody = () => api.called('POST /api/backup/restore')[0].body as Record<string, unknown>;

describe('RestoreDialog', () => {
  it('restores every volume by default, sending no volume list', async () => {
    const d = await open();
    expect((within(d).getByLabelText('New name') as HTMLInputElement).value).toBe('shop-restored');
    await fireEvent.click(within(d).getByRole('button', { name: 'Restore' }));
    await waitFor(() => expect(api.called('POST /api/backup/restore')).toHaveLength(1));
    expect(restoreBody()).toEqual({ destinationId: 1, snapshotId: 'aaaaaaaa11', mode: 'new-location', targetType: 'stack', environmentId: 1, confirmOverwrite: false, targetName: 'shop-restored' });
  });

  it('restores in place only the volumes left ticked', async () => {
    const d = await open();
    await fireEvent.click(within(d).getByLabelText(/In place/));
    await fireEvent.click(within(d).getByLabelText('Restore volume shop_media'));
    expect(within(d).getByText('not restored')).toBeTruthy();
    await fireEvent.click(within(d).getByLabelText(/Replace the current data/));
    await fireEvent.click(within(d).getByRole('button', { name: 'Restore' }));
    await waitFor(() => expect(api.called('POST /api/backup/restore')).toHaveLength(1));
    expect(restoreBody()).toMatchObject({ mode: 'in-place', confirmOverwrite: true, volumes: ['shop_db'] });
    expect(restoreBody()).not.toHaveProperty('targetName');
    expect(restoreBody()).not.toHaveProperty('volumeDestinations');
  });

  it('names a volume and where the files go for a new location; the default name is shown', async () => {
    const d = await open();
    const media = within(d).getByLabelText('New name of volume shop_media') as HTMLInputElement;
    expect(media.placeholder).toBe('shop-restored_media');
    expect((within(d).getByLabelText('New name of volume shop_db') as HTMLInputElement).placeholder).toBe('shop-restored_db');
    await expectNoSeriousAxeViolations(document.body);
    await fireEvent.input(media, { target: { value: 'media-copy' } });
    await fireEvent.input(within(d).getByLabelText(/Where the files go/), { target: { value: '/srv/stacks/shop-copy' } });
    await fireEvent.click(within(d).getByRole('button', { name: 'Restore' }));
    await waitFor(() => expect(api.called('POST /api/backup/restore')).toHaveLength(1));
    expect(restoreBody()).toMatchObject({
      mode: 'new-location',
      targetName: 'shop-restored',
      volumeDestinations: [{ source: 'shop_media', target: 'media-copy' }],
      targetPath: '/srv/stacks/shop-copy',
    });
    expect(restoreBody()).not.toHaveProperty('volumes');
  });

  it('refuses bad names and paths before sending anything', async () => {
    const d = await open();
    await fireEvent.input(within(d).getByLabelText('New name of volume shop_db'), { target: { value: '-bad' } });
    await fireEvent.click(within(d).getByRole('button', { name: 'Restore' }));
    expect(within(d).getByRole('alert').textContent).toMatch(/new name of volume shop_db/);
    await fireEvent.input(within(d).getByLabelText('New name of volume shop_db'), { target: { value: '' } });
    await fireEvent.input(within(d).getByLabelText(/Where the files go/), { target: { value: 'relative/dir' } });
    await fireEvent.click(within(d).getByRole('button', { name: 'Restore' }));
    expect(within(d).getByRole('alert').textContent).toMatch(/absolute path/);
    expect(api.called('POST /api/backup/restore')).toHaveLength(0);
  });

  it('refuses a restore with no volume chosen and nothing else to write', async () => {
    api.routes['POST /api/backup/restore/preview'] = { ...preview, items: preview.items.filter((i) => i.kind === 'volume') };
    const d = await open();
    await fireEvent.click(within(d).getByLabelText('Restore volume shop_db'));
    await fireEvent.click(within(d).getByLabelText('Restore volume shop_media'));
    expect(within(d).queryByLabelText(/Where the files go/)).toBeNull();
    await fireEvent.click(within(d).getByRole('button', { name: 'Restore' }));
    expect(within(d).getByRole('alert').textContent).toMatch(/at least one volume/);
    expect(api.called('POST /api/backup/restore')).toHaveLength(0);
  });
});
