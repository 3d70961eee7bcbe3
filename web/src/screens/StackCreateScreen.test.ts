import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../lib/api';
import * as stacks from '../lib/api-stacks';
import * as git from '../lib/api-git';
import { session } from '../lib/session.svelte';
import { expectNoSeriousAxeViolations } from '../test-axe';
import StackCreateScreen from './StackCreateScreen.svelte';

vi.mock('../lib/api-stacks', async (importOriginal) => {
  const real = await importOriginal<typeof import('../lib/api-stacks')>();
  return { ...real, createStack: vi.fn() };
});
vi.mock('../lib/api-git', async (importOriginal) => {
  const real = await importOriginal<typeof import('../lib/api-git')>();
  return {
    ...real,
    listRepositories: vi.fn(),
    listCredentials: vi.fn(),
    createRepository: vi.fn(),
    createCredential: vi.fn(),
    createGitStack: vi.fn(),
    followGitJob: vi.fn(),
    newSecret: () => 'f'.repeat(64),
  };
});
// CodeMirror needs layout jsdom lacks: a text area stands in (editor-test-double).
vi.mock('../components/stacks/codemirror', () => import('../components/stacks/editor-test-double'));

const compose = 'services:\n  web:\n    image: berth-test/busybox:1\n    command: sleep 600\n';

beforeEach(() => {
  session.session = { authenticated: false, authEnabled: false };
  session.environments = [{ id: 1, name: 'local', connectionType: 'socket' }];
  session.envId = 1;
  vi.mocked(git.listRepositories).mockResolvedValue([
    { id: 3, name: 'app', url: 'https://git.example.com/app.git', branch: 'main', credentialId: 9, webhookEnabled: false, hasWebhookSecret: false, webhookPath: '/api/git/webhook/3', lastSync: null },
  ]);
  vi.mocked(git.listCredentials).mockResolvedValue([{ id: 9, name: 'deploy-token', authType: 'password', username: 'bot', hasPassword: true, hasSshKey: false }]);
});
afterEach(() => {
  cleanup();
  vi.clearAllMocks();
});

async function editor() {
  return (await screen.findByRole('textbox', { name: 'Compose file' })) as HTMLTextAreaElement;
}

describe('StackCreateScreen (compose file)', () => {
  it('creates and deploys with streamed output, then links to the stack', async () => {
    let finish: (r: stacks.DeployResult) => void = () => {};
    vi.mocked(stacks.createStack).mockImplementation(
      (_env, _body, onLine) =>
        new Promise((resolve) => {
          onLine('Network demo_default Creating');
          onLine('Container demo-web-1 Started');
          finish = resolve;
        }),
    );
    render(StackCreateScreen);
    expect(screen.getByRole('heading', { level: 1, name: 'New stack' })).toBeTruthy();
    await fireEvent.input(screen.getByLabelText('Name'), { target: { value: 'demo' } });
    await fireEvent.input(await editor(), { target: { value: compose } });
    await fireEvent.click(screen.getByRole('button', { name: 'Deploy' }));
    await waitFor(() =>
      expect(stacks.createStack).toHaveBeenCalledWith(1, { name: 'demo', compose, start: true, envVars: [], rawEnvContent: '' }, expect.any(Function)),
    );
    const out = await screen.findByRole('log', { name: 'Deploy demo output' });
    expect(out.textContent).toBe('Network demo_default Creating\nContainer demo-web-1 Started');
    expect(screen.getByText('Deploy demo: in progress…')).toBeTruthy();
    expect((screen.getByRole('button', { name: 'Deploying…' }) as HTMLButtonElement).disabled).toBe(true);
    finish({ success: true, started: true, output: '' });
    await screen.findByText(/Deploy demo: done\./);
    expect(screen.getByRole('link', { name: 'Open demo' }).getAttribute('href')).toBe('/stacks/demo');
  });

  it('shows compose problems as they are found and refuses to deploy with errors', async () => {
    render(StackCreateScreen);
    await fireEvent.input(screen.getByLabelText('Name'), { target: { value: 'demo' } });
    await fireEvent.input(await editor(), { target: { value: 'services:\n  web:\n    image: "busybox\n' } });
    expect(await screen.findByText(/1 error in the compose file/)).toBeTruthy();
    expect(screen.getByText((_, el) => el?.tagName === 'LI' && !!el.textContent?.startsWith('Line 3:'))).toBeTruthy();
    await fireEvent.click(screen.getByRole('button', { name: 'Deploy' }));
    expect((await screen.findByRole('alert')).textContent).toMatch(/Fix the compose file first: line 3/);
    expect(stacks.createStack).not.toHaveBeenCalled();

    await fireEvent.input(await editor(), { target: { value: 'volumes:\n  data: {}\n' } });
    expect(await screen.findByText(/Missing services/)).toBeTruthy();
    await fireEvent.input(await editor(), { target: { value: compose } });
    expect(await screen.findByText('No problems found.')).toBeTruthy();
  });

  it('checks the name and shows the server refusal', async () => {
    render(StackCreateScreen);
    await editor();
    await fireEvent.click(screen.getByRole('button', { name: 'Deploy' }));
    expect((await screen.findByRole('alert')).textContent).toBe('Give the stack a name.');
    await fireEvent.input(screen.getByLabelText('Name'), { target: { value: 'Bad Name' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Deploy' }));
    expect((await screen.findByRole('alert')).textContent).toMatch(/lowercase letters/);
    expect(stacks.createStack).not.toHaveBeenCalled();

    vi.mocked(stacks.createStack).mockRejectedValueOnce(new ApiError(409, "Stack 'demo' already exists"));
    await fireEvent.input(screen.getByLabelText('Name'), { target: { value: 'demo' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Deploy' }));
    expect((await screen.findByRole('alert')).textContent).toBe("Stack 'demo' already exists");
    expect((screen.getByLabelText('Name') as HTMLInputElement).disabled).toBe(false);
  });

  it('sends plain variables as the .env text and secrets as variables; creates without starting', async () => {
    vi.mocked(stacks.createStack).mockResolvedValue({ success: true, started: false });
    render(StackCreateScreen);
    await fireEvent.input(screen.getByLabelText('Name'), { target: { value: 'demo' } });
    await editor();
    await fireEvent.click(screen.getByRole('button', { name: 'Add variable' }));
    await fireEvent.input(screen.getByLabelText('Name of variable 1'), { target: { value: 'MODE' } });
    await fireEvent.input(screen.getByLabelText('Value of MODE'), { target: { value: 'prod' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Add variable' }));
    await fireEvent.input(screen.getByLabelText('Name of variable 2'), { target: { value: 'TOKEN' } });
    await fireEvent.input(screen.getByLabelText('Value of TOKEN'), { target: { value: 's3cret' } });
    await fireEvent.click(screen.getByRole('checkbox', { name: 'Secret (TOKEN)' }));
    expect((screen.getByLabelText('Value of TOKEN') as HTMLInputElement).type).toBe('password');

    // The raw tab shows the plain variables; a comment typed there survives.
    await fireEvent.click(screen.getByRole('tab', { name: 'Raw .env' }));
    const rawBox = screen.getByLabelText('.env file') as HTMLTextAreaElement;
    expect(rawBox.value).toBe('MODE=prod\n');
    await fireEvent.input(rawBox, { target: { value: '# mode of the app\nMODE=prod\nEXTRA=1\n' } });
    await fireEvent.click(screen.getByRole('tab', { name: 'Variables' }));
    expect((screen.getByLabelText('Value of EXTRA') as HTMLInputElement).value).toBe('1');

    await fireEvent.click(screen.getByRole('button', { name: 'Create without starting' }));
    await waitFor(() =>
      expect(stacks.createStack).toHaveBeenCalledWith(
        1,
        {
          name: 'demo',
          compose: expect.any(String),
          start: false,
          envVars: [{ key: 'TOKEN', value: 's3cret', isSecret: true }],
          rawEnvContent: '# mode of the app\nMODE=prod\nEXTRA=1\n',
        },
        expect.any(Function),
      ),
    );
    expect(await screen.findByText(/nothing was started/)).toBeTruthy();
  });

  it('refuses invalid variable names before sending', async () => {
    render(StackCreateScreen);
    await fireEvent.input(screen.getByLabelText('Name'), { target: { value: 'demo' } });
    await editor();
    await fireEvent.click(screen.getByRole('button', { name: 'Add variable' }));
    await fireEvent.input(screen.getByLabelText('Name of variable 1'), { target: { value: '9LIVES' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Deploy' }));
    expect((await screen.findByRole('alert')).textContent).toMatch(/Invalid variable name "9LIVES"/);
    expect(stacks.createStack).not.toHaveBeenCalled();
  });

  it('has no serious or critical axe violations', async () => {
    const { container } = render(StackCreateScreen);
    await editor();
    await expectNoSeriousAxeViolations(container);
  });
});

describe('StackCreateScreen (git)', () => {
  it('creates a git stack from an existing repository, follows its first deploy, shows the webhook URL and secret', async () => {
    vi.mocked(git.createGitStack).mockResolvedValue({
      id: 12,
      stackName: 'shop',
      environmentId: 1,
      repositoryId: 3,
      webhookEnabled: true,
      webhookPath: '/api/git/stacks/12/webhook',
      jobId: 'job-1',
    } as git.GitStack);
    vi.mocked(git.followGitJob).mockImplementation(async (_id, onLine) => {
      onLine('Pulling https://git.example.com/app.git (branch main)');
      return { success: true, deployed: true, commit: 'abc1234', message: "Deployed stack 'shop' at commit abc1234" };
    });
    render(StackCreateScreen);
    await fireEvent.input(screen.getByLabelText('Name'), { target: { value: 'shop' } });
    await fireEvent.click(screen.getByRole('radio', { name: /Git repository/ }));
    const select = (await screen.findByLabelText('Repository')) as HTMLSelectElement;
    expect(select.value).toBe('3');
    expect(screen.getByText(/credential deploy-token/)).toBeTruthy();
    await fireEvent.input(screen.getByLabelText('Compose file in the repository'), { target: { value: 'deploy/compose.yaml' } });
    await fireEvent.click(screen.getByRole('checkbox', { name: /Auto-sync/ }));
    await fireEvent.click(screen.getByRole('button', { name: 'Create and deploy' }));
    await waitFor(() =>
      expect(git.createGitStack).toHaveBeenCalledWith({
        stackName: 'shop',
        environmentId: 1,
        repositoryId: 3,
        composePath: 'deploy/compose.yaml',
        envFilePath: '',
        autoUpdate: true,
        autoUpdateCron: '*/5 * * * *',
        webhookEnabled: true,
        webhookSecret: 'f'.repeat(64),
        deployNow: true,
        envVars: [],
      }),
    );
    expect(await screen.findByRole('heading', { name: 'Git stack shop created' })).toBeTruthy();
    expect(git.followGitJob).toHaveBeenCalledWith('job-1', expect.any(Function));
    await waitFor(() => expect(screen.getByRole('log', { name: 'Deploy shop output' }).textContent).toContain('Pulling'));
    expect((screen.getByLabelText('Webhook URL') as HTMLInputElement).value).toBe(`${location.origin}/api/git/stacks/12/webhook`);
    expect((screen.getByLabelText('Webhook secret') as HTMLInputElement).value).toBe('f'.repeat(64));
    expect(screen.getByRole('button', { name: 'Copy Webhook secret' })).toBeTruthy();
    expect(screen.getByRole('link', { name: 'Open the git stack' }).getAttribute('href')).toBe('/git/stacks/12');
  });

  it('creates the repository and its credential inline first', async () => {
    vi.mocked(git.listRepositories).mockResolvedValue([]);
    vi.mocked(git.createCredential).mockResolvedValue({ id: 21, name: 'ci', authType: 'password', username: 'bot', hasPassword: true, hasSshKey: false });
    vi.mocked(git.createRepository).mockResolvedValue({
      id: 22, name: 'shop-repo', url: 'https://git.example.com/shop.git', branch: 'prod', credentialId: 21,
      webhookEnabled: false, hasWebhookSecret: false, webhookPath: '/api/git/webhook/22', lastSync: null,
    });
    vi.mocked(git.createGitStack).mockRejectedValueOnce(new ApiError(400, 'Invalid stack name'));
    render(StackCreateScreen);
    await fireEvent.input(screen.getByLabelText('Name'), { target: { value: 'shop' } });
    await fireEvent.click(screen.getByRole('radio', { name: /Git repository/ }));
    expect(((await screen.findByLabelText('Repository')) as HTMLSelectElement).value).toBe('new');
    await fireEvent.input(screen.getByLabelText('Repository name'), { target: { value: 'shop-repo' } });
    await fireEvent.input(screen.getByLabelText('URL'), { target: { value: 'https://git.example.com/shop.git' } });
    await fireEvent.input(screen.getByLabelText('Branch'), { target: { value: 'prod' } });
    await fireEvent.change(screen.getByLabelText('Credential'), { target: { value: 'new' } });
    await fireEvent.input(screen.getByLabelText('Credential name'), { target: { value: 'ci' } });
    await fireEvent.input(screen.getByLabelText('Username'), { target: { value: 'bot' } });
    await fireEvent.input(screen.getByLabelText('Password or token'), { target: { value: 'tok' } });
    await fireEvent.click(screen.getByRole('checkbox', { name: /Deploy now/ }));
    await fireEvent.click(screen.getByRole('button', { name: 'Create' }));
    await waitFor(() => expect(git.createGitStack).toHaveBeenCalled());
    expect(git.createCredential).toHaveBeenCalledWith({ name: 'ci', authType: 'password', username: 'bot', password: 'tok', sshPrivateKey: undefined });
    expect(git.createRepository).toHaveBeenCalledWith({ name: 'shop-repo', url: 'https://git.example.com/shop.git', branch: 'prod', credentialId: 21 });
    expect(vi.mocked(git.createGitStack).mock.calls[0][0]).toMatchObject({ repositoryId: 22, deployNow: false });
    expect((await screen.findByRole('alert')).textContent).toBe('Invalid stack name');
    // The repository now exists: a retry uses it.
    expect((screen.getByLabelText('Repository') as HTMLSelectElement).value).toBe('22');
  });

  it('tells a user who may not create stacks there so, with no form', async () => {
    session.session = {
      authenticated: true,
      authEnabled: true,
      user: { id: 2, username: 'v', isAdmin: false, environmentPermissions: { '1': { stacks: ['view'] } } },
    };
    render(StackCreateScreen);
    expect(screen.getByText('You may not create stacks on local.')).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Deploy' })).toBeNull();
  });
});
