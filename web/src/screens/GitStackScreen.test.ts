import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../lib/api';
import * as stacks from '../lib/api-stacks';
import * as git from '../lib/api-git';
import { router } from '../lib/router.svelte';
import { matchRoute } from '../lib/routes';
import { session } from '../lib/session.svelte';
import { expectNoSeriousAxeViolations } from '../test-axe';
import GitStackScreen from './GitStackScreen.svelte';

vi.mock('../lib/api-stacks', async (importOriginal) => {
  const real = await importOriginal<typeof import('../lib/api-stacks')>();
  return { ...real, getStack: vi.fn(), stackAction: vi.fn() };
});
vi.mock('../lib/api-git', async (importOriginal) => {
  const real = await importOriginal<typeof import('../lib/api-git')>();
  return {
    ...real,
    getGitStack: vi.fn(),
    listRepositories: vi.fn(),
    listCredentials: vi.fn(),
    updateGitStack: vi.fn(),
    deleteGitStack: vi.fn(),
    startGitJob: vi.fn(),
    followGitJob: vi.fn(),
    deployGitStackStream: vi.fn(),
    testGitStack: vi.fn(),
    newSecret: () => 'a1'.repeat(32),
  };
});

const gs: git.GitStack = {
  id: 5,
  stackName: 'shop',
  environmentId: 1,
  repositoryId: 3,
  composePath: 'deploy/compose.yaml',
  envFilePath: '',
  autoUpdate: true,
  autoUpdateCron: '*/10 * * * *',
  webhookEnabled: true,
  hasWebhookSecret: true,
  webhookPath: '/api/git/stacks/5/webhook',
  lastCommit: '0123456789abcdef0123',
  lastSync: '2026-01-02T03:04:05Z',
  lastSyncStatus: 'success',
  lastSyncError: '',
};

beforeEach(() => {
  session.session = { authenticated: false, authEnabled: false };
  session.environments = [{ id: 1, name: 'local', connectionType: 'socket' }];
  session.envId = 1;
  vi.mocked(git.getGitStack).mockResolvedValue(structuredClone(gs));
  vi.mocked(git.listRepositories).mockResolvedValue([
    { id: 3, name: 'app', url: 'https://git.example.com/app.git', branch: 'release', credentialId: 9, webhookEnabled: false, hasWebhookSecret: false, webhookPath: '/api/git/webhook/3', lastSync: null },
    { id: 4, name: 'other', url: 'https://git.example.com/other.git', branch: 'main', credentialId: null, webhookEnabled: false, hasWebhookSecret: false, webhookPath: '/api/git/webhook/4', lastSync: null },
  ]);
  vi.mocked(git.listCredentials).mockResolvedValue([{ id: 9, name: 'deploy-token', authType: 'password', username: 'bot', hasPassword: true, hasSshKey: false }]);
  vi.mocked(stacks.getStack).mockResolvedValue({ name: 'shop', status: 'running', sourceType: 'git', containers: [], containerDetails: [] });
  vi.mocked(git.updateGitStack).mockImplementation(async (_id, b) => ({ ...structuredClone(gs), ...b, hasWebhookSecret: true }));
  vi.mocked(git.deleteGitStack).mockResolvedValue({ success: true });
  vi.mocked(stacks.stackAction).mockResolvedValue({ success: true, output: '' });
});
afterEach(() => {
  cleanup();
  vi.clearAllMocks();
});

const route = (id: number | string) => matchRoute(`/git/stacks/${id}`);
const dd = (term: string) => screen.getByText(term, { selector: 'dt' }).nextElementSibling?.textContent?.replace(/\s+/g, ' ').trim();

describe('GitStackScreen', () => {
  it('shows repository, branch, paths, last sync and commit, and the webhook URL', async () => {
    const { container } = render(GitStackScreen, { route: route(5) });
    expect(await screen.findByRole('heading', { level: 1, name: 'shop' })).toBeTruthy();
    expect(git.getGitStack).toHaveBeenCalledWith(5);
    expect(dd('Repository')).toBe('app https://git.example.com/app.git');
    expect(dd('Branch')).toBe('release');
    expect(dd('Credential')).toBe('deploy-token (password)');
    expect(dd('Compose file')).toBe('deploy/compose.yaml');
    expect(dd('Auto-sync')).toBe('on, */10 * * * *');
    expect(dd('Last commit')).toBe('0123456789ab');
    expect(dd('Last sync')).toContain('success');
    expect((screen.getByLabelText('Webhook URL') as HTMLInputElement).value).toBe(`${location.origin}/api/git/stacks/5/webhook`);
    expect(screen.getByText(/A secret is set/)).toBeTruthy();
    expect(await screen.findByText('running')).toBeTruthy();
    expect(screen.getByRole('link', { name: 'Open stack' }).getAttribute('href')).toBe('/stacks/shop');
    await expectNoSeriousAxeViolations(container);
  });

  it('syncs with progress and shows the outcome', async () => {
    vi.mocked(git.startGitJob).mockResolvedValue('job-9');
    vi.mocked(git.followGitJob).mockImplementation(async (_j, onLine) => {
      onLine('Pulling https://git.example.com/app.git (branch release)');
      return { success: true, deployed: false, commit: 'abc', message: "Stack 'shop' is up to date at commit abc" };
    });
    render(GitStackScreen, { route: route(5) });
    await screen.findByRole('heading', { level: 1, name: 'shop' });
    await fireEvent.click(screen.getByRole('button', { name: 'Sync' }));
    await waitFor(() => expect(git.startGitJob).toHaveBeenCalledWith(5, 'sync'));
    expect(git.followGitJob).toHaveBeenCalledWith('job-9', expect.any(Function));
    const out = await screen.findByRole('log', { name: 'Sync shop output' });
    expect(out.textContent).toContain('Pulling');
    expect(await screen.findByText(/is up to date at commit abc/)).toBeTruthy();
  });

  it('shows a failed deploy with its error', async () => {
    vi.mocked(git.deployGitStackStream).mockResolvedValue({ success: false, error: 'authentication required' });
    render(GitStackScreen, { route: route(5) });
    await screen.findByRole('heading', { level: 1, name: 'shop' });
    await fireEvent.click(screen.getByRole('button', { name: 'Deploy' }));
    expect((await screen.findByRole('alert')).textContent).toBe('authentication required');
    expect(git.startGitJob).not.toHaveBeenCalled();
  });

  it('deploys with the progress streamed into the output as it comes', async () => {
    let finish: (r: git.GitDeployResult) => void = () => {};
    vi.mocked(git.deployGitStackStream).mockImplementation(
      (_id, onLine) =>
        new Promise((resolve) => {
          onLine('Pulling https://git.example.com/app.git (branch release)');
          onLine('Container shop-app-1 Started');
          finish = resolve;
        }),
    );
    render(GitStackScreen, { route: route(5) });
    await screen.findByRole('heading', { level: 1, name: 'shop' });
    await fireEvent.click(screen.getByRole('button', { name: 'Deploy' }));
    await waitFor(() => expect(git.deployGitStackStream).toHaveBeenCalledWith(5, expect.any(Function)));
    const out = await screen.findByRole('log', { name: 'Deploy shop output' });
    await waitFor(() => expect(out.textContent).toContain('Container shop-app-1 Started'));
    expect((screen.getByRole('button', { name: 'Deploy' }) as HTMLButtonElement).disabled).toBe(true);
    finish({ success: true, deployed: true, commit: 'abc', message: "Deployed stack 'shop' at commit abc" });
    expect(await screen.findByText(/Deployed stack 'shop' at commit abc/)).toBeTruthy();
  });

  it('tests the files at the branch head and shows what is missing', async () => {
    vi.mocked(git.testGitStack).mockResolvedValueOnce({
      success: false,
      commit: '0123456789abcdef',
      branch: 'release',
      composePath: 'deploy/compose.yaml',
      composeFileExists: true,
      envFilePath: 'deploy/app.env',
      envFileExists: false,
      error: "env file 'deploy/app.env' not found",
    });
    render(GitStackScreen, { route: route(5) });
    await screen.findByRole('heading', { level: 1, name: 'shop' });
    await fireEvent.click(screen.getByRole('button', { name: 'Test' }));
    const result = await screen.findByRole('status', { name: 'Test result' });
    await waitFor(() => expect(result.textContent).toContain('Test failed'));
    expect(result.textContent).toContain("env file 'deploy/app.env' not found");
    expect(result.textContent).toContain('0123456789ab');
    expect(result.textContent).toMatch(/Compose file\s*deploy\/compose.yaml: found/);
    expect(result.textContent).toMatch(/Env file\s*deploy\/app.env: missing/);
    expect(git.testGitStack).toHaveBeenCalledWith(5);

    vi.mocked(git.testGitStack).mockRejectedValueOnce(new ApiError(404, 'Git stack not found'));
    await fireEvent.click(screen.getByRole('button', { name: 'Test' }));
    await waitFor(() => expect(result.textContent).toContain('Test failed: Git stack not found'));
  });

  it('edits the settings', async () => {
    render(GitStackScreen, { route: route(5) });
    await screen.findByRole('heading', { level: 1, name: 'shop' });
    await fireEvent.click(screen.getByRole('button', { name: 'Edit' }));
    const form = screen.getByRole('form', { name: 'Edit settings' });
    await fireEvent.change(within(form).getByLabelText('Repository'), { target: { value: '4' } });
    await fireEvent.input(within(form).getByLabelText('Compose file in the repository'), { target: { value: 'compose.yml' } });
    await fireEvent.click(within(form).getByRole('checkbox', { name: /Auto-sync/ }));
    await fireEvent.click(within(form).getByRole('button', { name: 'Save' }));
    await waitFor(() =>
      expect(git.updateGitStack).toHaveBeenCalledWith(5, {
        repositoryId: 4,
        composePath: 'compose.yml',
        envFilePath: '',
        autoUpdate: false,
        autoUpdateCron: '',
        webhookEnabled: true,
      }),
    );
    await waitFor(() => expect(screen.queryByRole('form', { name: 'Edit settings' })).toBeNull());
    expect(dd('Compose file')).toBe('compose.yml');
  });

  it('shows an edit refusal', async () => {
    vi.mocked(git.updateGitStack).mockRejectedValueOnce(new ApiError(400, 'Invalid cron expression'));
    render(GitStackScreen, { route: route(5) });
    await screen.findByRole('heading', { level: 1, name: 'shop' });
    await fireEvent.click(screen.getByRole('button', { name: 'Edit' }));
    await fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    expect((await screen.findByRole('alert')).textContent).toBe('Invalid cron expression');
  });

  it('generates a new webhook secret after confirmation and shows it once with a copy button', async () => {
    render(GitStackScreen, { route: route(5) });
    await screen.findByRole('heading', { level: 1, name: 'shop' });
    await fireEvent.click(screen.getByRole('button', { name: 'Generate a new secret' }));
    const dialog = screen.getByRole('dialog', { name: 'Replace the webhook secret?' });
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Generate' }));
    await waitFor(() => expect(git.updateGitStack).toHaveBeenCalledWith(5, expect.objectContaining({ webhookSecret: 'a1'.repeat(32), repositoryId: 3 })));
    expect(((await screen.findByLabelText('Webhook secret')) as HTMLInputElement).value).toBe('a1'.repeat(32));
    expect(screen.getByRole('button', { name: 'Copy Webhook secret' })).toBeTruthy();
  });

  it('deletes through the confirmation (force keeps volumes: down first)', async () => {
    const nav = vi.spyOn(router, 'navigate').mockImplementation(() => {});
    render(GitStackScreen, { route: route(5) });
    await screen.findByText('running');
    await fireEvent.click(screen.getByRole('button', { name: 'Delete' }));
    const dialog = screen.getByRole('dialog', { name: 'Delete stack shop?' });
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Delete' }));
    await waitFor(() => expect(git.deleteGitStack).toHaveBeenCalledWith(5, false));
    expect(stacks.stackAction).toHaveBeenCalledWith(1, 'shop', 'down');
    await waitFor(() => expect(nav).toHaveBeenCalledWith('/stacks'));
    nav.mockRestore();
  });

  it('shows a missing git stack', async () => {
    vi.mocked(git.getGitStack).mockRejectedValue(new ApiError(404, 'Git stack not found'));
    render(GitStackScreen, { route: route(99) });
    expect((await screen.findByRole('alert')).textContent).toBe('Git stack not found');
    expect(screen.getByRole('heading', { level: 1 })).toBeTruthy();
  });

  it('offers a user who may only view git stacks no Sync, Deploy, Test, Edit, Delete or new secret', async () => {
    session.session = {
      authenticated: true,
      authEnabled: true,
      user: { id: 2, username: 'v', isAdmin: false, permissions: { git: ['view'] }, environmentPermissions: { '1': { stacks: ['view'] } } },
    };
    render(GitStackScreen, { route: route(5) });
    await screen.findByRole('link', { name: 'Open stack' });
    for (const b of ['Sync', 'Deploy', 'Test', 'Edit', 'Delete', 'Generate a new secret']) {
      expect(screen.queryByRole('button', { name: b })).toBeNull();
    }
  });
});
