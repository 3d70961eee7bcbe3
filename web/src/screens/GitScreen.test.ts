import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../lib/api';
import * as git from '../lib/api-git';
import { expectNoSeriousAxeViolations } from '../test-axe';
import GitScreen from './GitScreen.svelte';

vi.mock('../lib/api-git', async (importOriginal) => {
  const real = await importOriginal<typeof import('../lib/api-git')>();
  return {
    ...real,
    listCredentials: vi.fn(),
    createCredential: vi.fn(),
    updateCredential: vi.fn(),
    deleteCredential: vi.fn(),
    listRepositories: vi.fn(),
    createRepository: vi.fn(),
    updateRepository: vi.fn(),
    deleteRepository: vi.fn(),
    syncRepository: vi.fn(),
    newSecret: () => 'b2'.repeat(32),
  };
});

const cred: git.GitCredential = { id: 9, name: 'deploy-token', authType: 'password', username: 'bot', hasPassword: true, hasSshKey: false };
const repo: git.GitRepository = {
  id: 3,
  name: 'app',
  url: 'https://git.example.com/app.git',
  branch: 'main',
  credentialId: 9,
  webhookEnabled: false,
  hasWebhookSecret: false,
  webhookPath: '/api/git/webhook/3',
  lastSync: null,
};

beforeEach(() => {
  history.replaceState(null, '', '/git');
  vi.mocked(git.listCredentials).mockResolvedValue([structuredClone(cred)]);
  vi.mocked(git.listRepositories).mockResolvedValue([structuredClone(repo)]);
  vi.mocked(git.createCredential).mockImplementation(async (b) => ({ ...cred, id: 10, name: b.name, authType: b.authType }));
  vi.mocked(git.updateCredential).mockImplementation(async (id, b) => ({ ...cred, id, name: b.name }));
  vi.mocked(git.deleteCredential).mockResolvedValue({ success: true });
  vi.mocked(git.createRepository).mockImplementation(async (b) => ({ ...repo, id: 4, name: b.name, url: b.url, webhookPath: '/api/git/webhook/4' }));
  vi.mocked(git.updateRepository).mockImplementation(async (id, b) => ({ ...repo, id, name: b.name }));
  vi.mocked(git.deleteRepository).mockResolvedValue({ success: true });
});
afterEach(() => {
  cleanup();
  vi.clearAllMocks();
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
    await fireEvent.click(within(form).getByRole('button', { name: 'Create credential' }));
    await waitFor(() => expect(git.createCredential).toHaveBeenCalledWith({ name: 'ci', authType: 'password', username: 'robot', password: 'tok' }));
    await waitFor(() => expect(screen.queryByRole('form')).toBeNull());
    expect(git.listCredentials).toHaveBeenCalledTimes(2);

    await fireEvent.click(screen.getByRole('button', { name: 'Edit deploy-token' }));
    const edit = screen.getByRole('form', { name: 'Edit credential deploy-token' });
    const pass = within(edit).getByLabelText('Password or token') as HTMLInputElement;
    expect(pass.value).toBe('');
    expect(pass.type).toBe('password');
    await fireEvent.input(within(edit).getByLabelText('Name'), { target: { value: 'deploy' } });
    await fireEvent.click(within(edit).getByRole('button', { name: 'Save credential' }));
    await waitFor(() => expect(git.updateCredential).toHaveBeenCalledWith(9, { name: 'deploy', authType: 'password', username: 'bot' }));
  });

  it('sends an SSH key and shows the server refusal', async () => {
    vi.mocked(git.createCredential).mockRejectedValueOnce(new ApiError(400, 'Invalid SSH private key'));
    render(GitScreen);
    await screen.findByRole('table', { name: 'Git credentials' });
    await fireEvent.click(screen.getByRole('button', { name: 'New credential' }));
    const form = screen.getByRole('form', { name: 'New credential' });
    await fireEvent.input(within(form).getByLabelText('Name'), { target: { value: 'key' } });
    await fireEvent.change(within(form).getByLabelText('Authentication'), { target: { value: 'ssh' } });
    await fireEvent.input(within(form).getByLabelText('SSH private key'), { target: { value: 'not a key' } });
    await fireEvent.click(within(form).getByRole('button', { name: 'Create credential' }));
    expect((await within(form).findByRole('alert')).textContent).toBe('Invalid SSH private key');
    expect(git.createCredential).toHaveBeenCalledWith({ name: 'key', authType: 'ssh', username: '', sshPrivateKey: 'not a key' });
  });

  it('deletes a credential after confirmation and shows why it cannot be', async () => {
    vi.mocked(git.deleteCredential).mockRejectedValueOnce(new ApiError(409, 'Credential is used by a repository'));
    render(GitScreen);
    await screen.findByRole('table', { name: 'Git credentials' });
    await fireEvent.click(screen.getByRole('button', { name: 'Delete deploy-token' }));
    const dialog = screen.getByRole('dialog', { name: 'Delete credential deploy-token?' });
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Delete' }));
    await waitFor(() => expect(git.deleteCredential).toHaveBeenCalledWith(9));
    expect((await screen.findByRole('alert')).textContent).toContain('Credential is used by a repository');
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
    await waitFor(() =>
      expect(git.createRepository).toHaveBeenCalledWith({
        name: 'site',
        url: 'https://git.example.com/site.git',
        branch: 'prod',
        credentialId: 9,
        webhookEnabled: true,
        webhookSecret: 'b2'.repeat(32),
      }),
    );
    const panel = await screen.findByRole('region', { name: 'Webhook of site' });
    expect((within(panel).getByLabelText('Webhook URL') as HTMLInputElement).value).toBe(`${location.origin}/api/git/webhook/4`);
    expect((within(panel).getByLabelText('Webhook secret') as HTMLInputElement).value).toBe('b2'.repeat(32));
  });

  it('edits and deletes a repository', async () => {
    render(GitScreen);
    await fireEvent.click(screen.getByRole('tab', { name: 'Repositories' }));
    await screen.findByRole('table', { name: 'Git repositories' });
    await fireEvent.click(screen.getByRole('button', { name: 'Edit app' }));
    const form = screen.getByRole('form', { name: 'Edit repository app' });
    await fireEvent.change(within(form).getByLabelText('Credential'), { target: { value: '' } });
    await fireEvent.click(within(form).getByRole('button', { name: 'Save repository' }));
    await waitFor(() =>
      expect(git.updateRepository).toHaveBeenCalledWith(3, {
        name: 'app',
        url: 'https://git.example.com/app.git',
        branch: 'main',
        credentialId: null,
        webhookEnabled: false,
        webhookSecret: undefined,
      }),
    );
    await fireEvent.click(await screen.findByRole('button', { name: 'Delete app' }));
    await fireEvent.click(within(screen.getByRole('dialog', { name: 'Delete repository app?' })).getByRole('button', { name: 'Delete' }));
    await waitFor(() => expect(git.deleteRepository).toHaveBeenCalledWith(3));
  });

  it('syncs a repository and shows the commit fetched, or why the fetch failed', async () => {
    const head = '0123456789abcdef0123456789abcdef01234567';
    vi.mocked(git.syncRepository).mockResolvedValueOnce({
      success: true,
      repositoryId: 3,
      branch: 'main',
      status: 'success',
      commit: head,
      syncedAt: '2026-11-27T08:00:00Z',
      lastSync: '2026-11-27T08:00:00Z',
    });
    const { container } = render(GitScreen);
    await fireEvent.click(screen.getByRole('tab', { name: 'Repositories' }));
    const table = await screen.findByRole('table', { name: 'Git repositories' });
    await fireEvent.click(within(table).getByRole('button', { name: 'Sync app' }));
    await waitFor(() => expect(git.syncRepository).toHaveBeenCalledWith(3));
    const lastSync = () => within(within(table).getAllByRole('row')[1]).getAllByRole('cell')[5];
    await waitFor(() => expect(lastSync().textContent).toContain('0123456789ab'));
    expect(lastSync().textContent).toContain(new Date('2026-11-27T08:00:00Z').toLocaleString());
    expect(screen.getByRole('status').textContent).toBe('Repository app synced at commit 0123456789ab.');
    await expectNoSeriousAxeViolations(container);

    vi.mocked(git.syncRepository).mockResolvedValueOnce({
      success: false,
      repositoryId: 3,
      branch: 'main',
      status: 'failed',
      error: 'Cannot read the repository: authentication required',
      syncedAt: '2026-11-27T08:05:00Z',
      lastSync: '2026-11-27T08:00:00Z',
    });
    await fireEvent.click(within(table).getByRole('button', { name: 'Sync app' }));
    expect((await screen.findByRole('alert')).textContent).toBe('Sync of app failed: Cannot read the repository: authentication required');
    await waitFor(() => expect(lastSync().textContent).toContain('Last fetch failed'));
    expect(lastSync().textContent).toContain('authentication required');
    expect(lastSync().textContent).toContain(new Date('2026-11-27T08:00:00Z').toLocaleString());
    expect(lastSync().textContent).not.toContain('0123456789ab');
  });

  it('shows empty states and list errors', async () => {
    vi.mocked(git.listCredentials).mockResolvedValue([]);
    vi.mocked(git.listRepositories).mockRejectedValue(new ApiError(403, 'Permission denied: git:view'));
    render(GitScreen);
    expect(await screen.findByText(/No credentials yet/)).toBeTruthy();
    await fireEvent.click(screen.getByRole('tab', { name: 'Repositories' }));
    expect((await screen.findByRole('alert')).textContent).toContain('Permission denied: git:view');
  });
});
