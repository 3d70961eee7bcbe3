import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../lib/api';
import { queryClient } from '../lib/query';
import { stubApi, type StubApi, type StubCall } from '../test-api';
import { expectNoSeriousAxeViolations } from '../test-axe';
import { gitCredential, gitRepository } from '../test-git';
import GitScreen from './GitScreen.svelte';

const cred = gitCredential;
const repo = gitRepository;

let api: StubApi;
const body = (c: StubCall) => c.body as Record<string, unknown>;
beforeEach(() => {
  history.replaceState(null, '', '/git');
  queryClient.clear();
  api = stubApi({
    'GET /api/git/credentials': [cred],
    'GET /api/git/repositories': [repo],
    'POST /api/git/credentials': (c: StubCall) => ({ ...cred, id: 10, name: body(c).name, authType: body(c).authType }),
    'PUT /api/git/credentials/9': (c: StubCall) => ({ ...cred, name: body(c).name }),
    'DELETE /api/git/credentials/9': { success: true },
    'POST /api/git/repositories': (c: StubCall) => ({ ...repo, id: 4, name: body(c).name, url: body(c).url, webhookPath: '/api/git/webhook/4' }),
    'PUT /api/git/repositories/3': (c: StubCall) => ({ ...repo, name: body(c).name }),
    'DELETE /api/git/repositories/3': { success: true },
  });
});
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

describe('GitScreen', () => {
  it('lists credentials without their secrets, and repositories in the other tab', async () => {
    const { container } = render(GitScreen);
    expect(screen.getByRole('heading', { level: 1, name: 'Git' })).toBeTruthy();
    const table = await screen.findByRole('table', { name: 'Git credentials' });
    expect(within(table).getByRole('cell', { name: 'deploy-token' })).toBeTruthy();
    expect(within(table).getByText('password stored')).toBeTruthy();
    await expectNoSeriousAxeViolations(container);

    const tab = screen.getByRole('tab', { name: 'Repositories' });
    tab.focus();
    await fireEvent.keyDown(screen.getByRole('tab', { name: 'Credentials' }), { key: 'ArrowRight' });
    expect(tab.getAttribute('aria-selected')).toBe('true');
    const repos = await screen.findByRole('table', { name: 'Git repositories' });
    const cells = within(within(repos).getAllByRole('row')[1]).getAllByRole('cell').map((c) => c.textContent?.trim());
    expect(cells.slice(0, 6)).toEqual(['app', 'https://git.example.com/app.git', 'main', 'deploy-token', 'off', 'never']);
    await expectNoSeriousAxeViolations(container);
  });

  it('creates a credential and keeps a stored password when an edit leaves it empty', async () => {
    render(GitScreen);
    await screen.findByRole('table', { name: 'Git credentials' });
    await fireEvent.click(screen.getByRole('button', { name: 'New credential' }));
    const form = screen.getByRole('form', { name: 'New credential' });
    await fireEvent.input(within(form).getByLabelText('Name'), { target: { value: 'ci' } });
    await fireEvent.input(within(form).getByLabelText('Username'), { target: { value: 'robot' } });
    await fireEvent.input(within(form).getByLabelText('Password or token'), { target: { value: 'tok' } });
    api.routes['GET /api/git/credentials'] = [cred, { ...cred, id: 10, name: 'ci', username: 'robot' }];
    await fireEvent.click(within(form).getByRole('button', { name: 'Create credential' }));
    await waitFor(() => expect(api.called('POST /api/git/credentials')[0]?.body).toEqual({ name: 'ci', authType: 'password', username: 'robot', password: 'tok' }));
    await waitFor(() => expect(screen.queryByRole('form')).toBeNull());
    // The list is read again and shows the new credential.
    expect(await screen.findByRole('cell', { name: 'ci' })).toBeTruthy();
    expect(api.called('GET /api/git/credentials').length).toBeGreaterThanOrEqual(2);
    expect(screen.getByRole('status').textContent).toBe('Credential ci created.');

    await fireEvent.click(screen.getByRole('button', { name: 'Edit deploy-token' }));
    const edit = screen.getByRole('form', { name: 'Edit credential deploy-token' });
    const pass = within(edit).getByLabelText('Password or token') as HTMLInputElement;
    expect(pass.value).toBe('');
    expect(pass.type).toBe('password');
    await fireEvent.input(within(edit).getByLabelText('Name'), { target: { value: 'deploy' } });
    await fireEvent.click(within(edit).getByRole('button', { name: 'Save credential' }));
    await waitFor(() => expect(api.called('PUT /api/git/credentials/9')[0]?.body).toEqual({ name: 'deploy', authType: 'password', username: 'bot' }));
  });

  it('sends an SSH key and shows the server refusal', async () => {
    api.routes['POST /api/git/credentials'] = () => {
      throw new ApiError(400, 'Invalid SSH private key');
    };
    render(GitScreen);
    await screen.findByRole('table', { name: 'Git credentials' });
    await fireEvent.click(screen.getByRole('button', { name: 'New credential' }));
    const form = screen.getByRole('form', { name: 'New credential' });
    await fireEvent.input(within(form).getByLabelText('Name'), { target: { value: 'key' } });
    await fireEvent.change(within(form).getByLabelText('Authentication'), { target: { value: 'ssh' } });
    await fireEvent.input(within(form).getByLabelText('SSH private key'), { target: { value: 'not a key' } });
    await fireEvent.click(within(form).getByRole('button', { name: 'Create credential' }));
    expect((await within(form).findByRole('alert')).textContent).toBe('Invalid SSH private key');
    expect(api.called('POST /api/git/credentials')[0].body).toEqual({ name: 'key', authType: 'ssh', username: '', sshPrivateKey: 'not a key' });
  });

  it('deletes a credential after confirmation and shows why it cannot be', async () => {
    api.routes['DELETE /api/git/credentials/9'] = () => {
      throw new ApiError(409, 'Credential is used by a repository');
    };
    render(GitScreen);
    await screen.findByRole('table', { name: 'Git credentials' });
    await fireEvent.click(screen.getByRole('button', { name: 'Delete deploy-token' }));
    const dialog = screen.getByRole('dialog', { name: 'Delete credential deploy-token?' });
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Delete' }));
    await waitFor(() => expect(api.called('DELETE /api/git/credentials/9')).toHaveLength(1));
    expect((await screen.findByRole('alert')).textContent).toContain('Delete deploy-token: Credential is used by a repository');
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
  });

  it('creates a repository with a webhook and shows its URL and secret once', async () => {
    render(GitScreen);
    await fireEvent.click(screen.getByRole('tab', { name: 'Repositories' }));
    await screen.findByRole('table', { name: 'Git repositories' });
    await fireEvent.click(screen.getByRole('button', { name: 'New repository' }));
    const form = screen.getByRole('form', { name: 'New repository' });
    await fireEvent.input(within(form).getByLabelText('Name'), { target: { value: 'site' } });
    await fireEvent.input(within(form).getByLabelText('URL'), { target: { value: 'https://git.example.com/site.git' } });
    await fireEvent.input(within(form).getByLabelText('Branch'), { target: { value: 'prod' } });
    await fireEvent.change(within(form).getByLabelText('Credential'), { target: { value: '9' } });
    await fireEvent.click(within(form).getByRole('checkbox', { name: /Webhook/ }));
    await fireEvent.click(within(form).getByRole('button', { name: 'Create repository' }));
    await waitFor(() => expect(api.called('POST /api/git/repositories')).toHaveLength(1));
    const sent = body(api.called('POST /api/git/repositories')[0]);
    expect(sent).toEqual({
      name: 'site',
      url: 'https://git.example.com/site.git',
      branch: 'prod',
      credentialId: 9,
      webhookEnabled: true,
      webhookSecret: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    const panel = await screen.findByRole('region', { name: 'Webhook of site' });
    expect((within(panel).getByLabelText('Webhook URL') as HTMLInputElement).value).toBe(`${location.origin}/api/git/webhook/4`);
    expect((within(panel).getByLabelText('Webhook secret') as HTMLInputElement).value).toBe(sent.webhookSecret);
  });

  it('edits and deletes a repository, reading the list again after each', async () => {
    render(GitScreen);
    await fireEvent.click(screen.getByRole('tab', { name: 'Repositories' }));
    await screen.findByRole('table', { name: 'Git repositories' });
    await fireEvent.click(screen.getByRole('button', { name: 'Edit app' }));
    const form = screen.getByRole('form', { name: 'Edit repository app' });
    await fireEvent.change(within(form).getByLabelText('Credential'), { target: { value: '' } });
    api.routes['GET /api/git/repositories'] = [{ ...repo, credentialId: null }];
    await fireEvent.click(within(form).getByRole('button', { name: 'Save repository' }));
    await waitFor(() =>
      expect(api.called('PUT /api/git/repositories/3')[0]?.body).toEqual({
        name: 'app',
        url: 'https://git.example.com/app.git',
        branch: 'main',
        credentialId: null,
        webhookEnabled: false,
      }),
    );
    const row = () => within(screen.getByRole('table', { name: 'Git repositories' })).getAllByRole('row')[1];
    await waitFor(() => expect(within(row()).getAllByRole('cell')[3].textContent).toBe('none'));
    api.routes['GET /api/git/repositories'] = [];
    await fireEvent.click(await screen.findByRole('button', { name: 'Delete app' }));
    await fireEvent.click(within(screen.getByRole('dialog', { name: 'Delete repository app?' })).getByRole('button', { name: 'Delete' }));
    await waitFor(() => expect(api.called('DELETE /api/git/repositories/3')).toHaveLength(1));
    expect(await screen.findByText('No repositories yet.')).toBeTruthy();
    expect(screen.getByRole('status').textContent).toBe('Repository app deleted.');
  });

  it('syncs a repository and shows the commit fetched, or why the fetch failed', async () => {
    const head = '0123456789abcdef0123456789abcdef01234567';
    const ok = { success: true, repositoryId: 3, branch: 'main', status: 'success', commit: head, syncedAt: '2026-11-27T08:00:00Z', lastSync: '2026-11-27T08:00:00Z' };
    api.routes['POST /api/git/repositories/3/sync'] = () => {
      api.routes['GET /api/git/repositories'] = [{ ...repo, syncStatus: 'success', syncCommit: head, syncedAt: ok.syncedAt, lastSync: ok.lastSync }];
      return ok;
    };
    const { container } = render(GitScreen);
    await fireEvent.click(screen.getByRole('tab', { name: 'Repositories' }));
    const table = await screen.findByRole('table', { name: 'Git repositories' });
    await fireEvent.click(within(table).getByRole('button', { name: 'Sync app' }));
    await waitFor(() => expect(api.called('POST /api/git/repositories/3/sync')).toHaveLength(1));
    const lastSync = () => within(within(screen.getByRole('table', { name: 'Git repositories' })).getAllByRole('row')[1]).getAllByRole('cell')[5];
    await waitFor(() => expect(lastSync().textContent).toContain('0123456789ab'));
    expect(lastSync().textContent).toContain(new Date('2026-11-27T08:00:00Z').toLocaleString());
    expect(screen.getByRole('status').textContent).toBe('Repository app synced at commit 0123456789ab.');
    await waitFor(() => expect(api.called('GET /api/git/repositories').length).toBeGreaterThanOrEqual(2));
    await expectNoSeriousAxeViolations(container);

    const failed = {
      success: false,
      repositoryId: 3,
      branch: 'main',
      status: 'failed',
      error: 'Cannot read the repository: authentication required',
      syncedAt: '2026-11-27T08:05:00Z',
      lastSync: '2026-11-27T08:00:00Z',
    };
    api.routes['POST /api/git/repositories/3/sync'] = () => {
      api.routes['GET /api/git/repositories'] = [
        { ...repo, syncStatus: 'failed', syncError: failed.error, syncedAt: failed.syncedAt, lastSync: failed.lastSync },
      ];
      return failed;
    };
    await fireEvent.click(within(lastSync().parentElement as HTMLElement).getByRole('button', { name: 'Sync app' }));
    expect((await screen.findByRole('alert')).textContent).toBe('Sync of app failed: Cannot read the repository: authentication required');
    await waitFor(() => expect(lastSync().textContent).toContain('Last fetch failed'));
    expect(lastSync().textContent).toContain('authentication required');
    expect(lastSync().textContent).toContain(new Date('2026-11-27T08:00:00Z').toLocaleString());
    expect(lastSync().textContent).not.toContain('0123456789ab');
  });

  it('shows empty states and list errors', async () => {
    api.routes['GET /api/git/credentials'] = [];
    api.routes['GET /api/git/repositories'] = () => {
      throw new ApiError(403, 'Permission denied: git:view');
    };
    render(GitScreen);
    expect(await screen.findByText(/No credentials yet/)).toBeTruthy();
    await fireEvent.click(screen.getByRole('tab', { name: 'Repositories' }));
    expect((await screen.findByRole('alert')).textContent).toContain('Repositories could not be listed: Permission denied: git:view');
  });
});
