import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../lib/api';
import { queryClient } from '../lib/query';
import { session } from '../lib/session.svelte';
import { stubApi, type StubApi, type StubCall } from '../test-api';
import { expectNoSeriousAxeViolations } from '../test-axe';
import StackCreateScreen from './StackCreateScreen.svelte';
import { gitCredential, gitRepository } from '../test-git';

// CodeMirror needs layout jsdom lacks: a text area stands in (editor-test-double).
vi.mock('../components/stacks/codemirror', () => import('../components/stacks/editor-test-double'));

const compose = 'services:\n  web:\n    image: berth-test/busybox:1\n    command: sleep 600\n';

/** A server-sent event stream of JSON events. */
const sse = (events: unknown[]) =>
  new Response(events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join(''), { status: 200, headers: { 'Content-Type': 'text/event-stream' } });

/** An event stream the test writes to as it goes. */
function liveSse() {
  const enc = new TextEncoder();
  let ctl!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({ start: (c) => void (ctl = c) });
  return {
    response: () => new Response(body, { status: 200, headers: { 'Content-Type': 'text/event-stream' } }),
    send: (e: unknown) => ctl.enqueue(enc.encode(`data: ${JSON.stringify(e)}\n\n`)),
    end: () => ctl.close(),
  };
}

const repo3 = gitRepository;
const cred9 = gitCredential;

let api: StubApi;
const sent = (route: string, i = 0) => api.called(route)[i]?.body as Record<string, unknown> | undefined;
beforeEach(() => {
  queryClient.clear();
  session.session = { authenticated: false, authEnabled: false };
  session.environments = [{ id: 1, name: 'local', connectionType: 'socket' }];
  session.envId = 1;
  api = stubApi({
    'GET /api/git/repositories': [repo3],
    'GET /api/git/credentials': [cred9],
    'GET /api/stacks/default-path': (c: StubCall) => ({ name: c.query.name, directory: `/data/stacks/1/${c.query.name}`, exists: false, taken: false }),
    'GET /api/stacks/path-hints': { basePath: '/data/stacks/1', directories: [], composeFiles: [], truncated: false },
    'POST /api/stacks': () => sse([{ success: true, started: true, output: '' }]),
  });
});
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

async function editor() {
  return (await screen.findByRole('textbox', { name: 'Compose file' })) as HTMLTextAreaElement;
}

describe('StackCreateScreen (compose file)', () => {
  it('creates and deploys with streamed output, then links to the stack', async () => {
    const live = liveSse();
    api.routes['POST /api/stacks'] = () => live.response();
    render(StackCreateScreen);
    expect(screen.getByRole('heading', { level: 1, name: 'New stack' })).toBeTruthy();
    await fireEvent.input(screen.getByLabelText('Name'), { target: { value: 'demo' } });
    await fireEvent.input(await editor(), { target: { value: compose } });
    await fireEvent.click(screen.getByRole('button', { name: 'Deploy' }));
    await waitFor(() => expect(api.called('POST /api/stacks')).toHaveLength(1));
    expect(api.called('POST /api/stacks')[0]).toMatchObject({ query: { env: '1' }, body: { name: 'demo', compose, start: true, envVars: [], rawEnvContent: '' } });
    live.send({ message: 'Network demo_default Creating' });
    live.send({ message: 'Container demo-web-1 Started' });
    const out = await screen.findByRole('log', { name: 'Deploy demo output' });
    await waitFor(() => expect(out.textContent).toBe('Network demo_default Creating\nContainer demo-web-1 Started'));
    expect(screen.getByText('Deploy demo: in progress…')).toBeTruthy();
    expect((screen.getByRole('button', { name: 'Deploying…' }) as HTMLButtonElement).disabled).toBe(true);
    live.send({ success: true, started: true, output: '' });
    live.end();
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
    expect(api.called('POST /api/stacks')).toHaveLength(0);

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
    expect(api.called('POST /api/stacks')).toHaveLength(0);

    api.routes['POST /api/stacks'] = () => {
      throw new ApiError(409, "Stack 'demo' already exists");
    };
    await fireEvent.input(screen.getByLabelText('Name'), { target: { value: 'demo' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Deploy' }));
    expect((await screen.findByRole('alert')).textContent).toBe("Stack 'demo' already exists");
    expect((screen.getByLabelText('Name') as HTMLInputElement).disabled).toBe(false);
  });

  it('sends plain variables as the .env text and secrets as variables; creates without starting', async () => {
    api.routes['POST /api/stacks'] = () => sse([{ success: true, started: false }]);
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
      expect(sent('POST /api/stacks')).toEqual({
        name: 'demo',
        compose: expect.any(String),
        start: false,
        envVars: [{ key: 'TOKEN', value: 's3cret', isSecret: true }],
        rawEnvContent: '# mode of the app\nMODE=prod\nEXTRA=1\n',
      }),
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
    expect(api.called('POST /api/stacks')).toHaveLength(0);
  });

  it('has no serious or critical axe violations', async () => {
    const { container } = render(StackCreateScreen);
    await editor();
    await expectNoSeriousAxeViolations(container);
  });
});

describe('StackCreateScreen (git)', () => {
  it('creates a git stack from an existing repository, follows its first deploy, shows the webhook URL and secret', async () => {
    api.routes['POST /api/git/stacks'] = (c: StubCall) => ({
      ...(c.body as object),
      id: 12,
      hasWebhookSecret: true,
      webhookPath: '/api/git/stacks/12/webhook',
      lastCommit: '',
      lastSync: null,
      lastSyncStatus: '',
      lastSyncError: '',
      jobId: 'job-1',
    });
    api.routes['GET /api/jobs/job-1'] = () =>
      sse([
        { message: 'Pulling https://git.example.com/app.git (branch main)' },
        { success: true, deployed: true, commit: 'abc1234', message: "Deployed stack 'shop' at commit abc1234" },
      ]);
    render(StackCreateScreen);
    await fireEvent.input(screen.getByLabelText('Name'), { target: { value: 'shop' } });
    await fireEvent.click(screen.getByRole('radio', { name: /Git repository/ }));
    const select = (await screen.findByLabelText('Repository')) as HTMLSelectElement;
    await waitFor(() => expect(select.value).toBe('3'));
    await waitFor(() => expect(screen.getByText(/credential deploy-token/)).toBeTruthy());
    await fireEvent.input(screen.getByLabelText('Compose file in the repository'), { target: { value: 'deploy/compose.yaml' } });
    await fireEvent.click(screen.getByRole('checkbox', { name: /Auto-sync/ }));
    await fireEvent.click(screen.getByRole('button', { name: 'Create and deploy' }));
    await waitFor(() => expect(api.called('POST /api/git/stacks')).toHaveLength(1));
    const body = sent('POST /api/git/stacks')!;
    expect(body).toEqual({
      stackName: 'shop',
      environmentId: 1,
      repositoryId: 3,
      composePath: 'deploy/compose.yaml',
      envFilePath: '',
      autoUpdate: true,
      autoUpdateCron: '*/5 * * * *',
      webhookEnabled: true,
      webhookSecret: expect.stringMatching(/^[0-9a-f]{64}$/),
      deployNow: true,
      envVars: [],
    });
    expect(await screen.findByRole('heading', { name: 'Git stack shop created' })).toBeTruthy();
    await waitFor(() => expect(screen.getByRole('log', { name: 'Deploy shop output' }).textContent).toContain('Pulling'));
    expect(await screen.findByText(/Deployed stack 'shop' at commit abc1234/)).toBeTruthy();
    expect(api.called('GET /api/jobs/job-1')).toHaveLength(1);
    expect((screen.getByLabelText('Webhook URL') as HTMLInputElement).value).toBe(`${location.origin}/api/git/stacks/12/webhook`);
    expect((screen.getByLabelText('Webhook secret') as HTMLInputElement).value).toBe(body.webhookSecret);
    expect(screen.getByRole('button', { name: 'Copy Webhook secret' })).toBeTruthy();
    expect(screen.getByRole('link', { name: 'Open the git stack' }).getAttribute('href')).toBe('/git/stacks/12');
  });

  it('creates the repository and its credential inline first', async () => {
    api.routes['GET /api/git/repositories'] = [];
    api.routes['POST /api/git/credentials'] = (c: StubCall) => {
      const made = { ...cred9, id: 21, name: (c.body as { name: string }).name };
      api.routes['GET /api/git/credentials'] = [cred9, made];
      return made;
    };
    api.routes['POST /api/git/repositories'] = (c: StubCall) => {
      const made = { ...repo3, ...(c.body as object), id: 22, webhookPath: '/api/git/webhook/22' };
      api.routes['GET /api/git/repositories'] = [made];
      return made;
    };
    api.routes['POST /api/git/stacks'] = () => {
      throw new ApiError(400, 'Invalid stack name');
    };
    render(StackCreateScreen);
    await fireEvent.input(screen.getByLabelText('Name'), { target: { value: 'shop' } });
    await fireEvent.click(screen.getByRole('radio', { name: /Git repository/ }));
    const select = (await screen.findByLabelText('Repository')) as HTMLSelectElement;
    await waitFor(() => expect(select.value).toBe('new'));
    await fireEvent.input(screen.getByLabelText('Repository name'), { target: { value: 'shop-repo' } });
    await fireEvent.input(screen.getByLabelText('URL'), { target: { value: 'https://git.example.com/shop.git' } });
    await fireEvent.input(screen.getByLabelText('Branch'), { target: { value: 'prod' } });
    await fireEvent.change(screen.getByLabelText('Credential'), { target: { value: 'new' } });
    await fireEvent.input(screen.getByLabelText('Credential name'), { target: { value: 'ci' } });
    await fireEvent.input(screen.getByLabelText('Username'), { target: { value: 'bot' } });
    await fireEvent.input(screen.getByLabelText('Password or token'), { target: { value: 'tok' } });
    await fireEvent.click(screen.getByRole('checkbox', { name: /Deploy now/ }));
    await fireEvent.click(screen.getByRole('button', { name: 'Create' }));
    await waitFor(() => expect(api.called('POST /api/git/stacks')).toHaveLength(1));
    expect(sent('POST /api/git/credentials')).toEqual({ name: 'ci', authType: 'password', username: 'bot', password: 'tok' });
    expect(sent('POST /api/git/repositories')).toEqual({ name: 'shop-repo', url: 'https://git.example.com/shop.git', branch: 'prod', credentialId: 21 });
    expect(sent('POST /api/git/stacks')).toMatchObject({ repositoryId: 22, deployNow: false });
    expect((await screen.findByRole('alert')).textContent).toBe('Invalid stack name');
    // The repository now exists (and the list read again says so): a retry uses it.
    await waitFor(() => expect(api.called('GET /api/git/repositories').length).toBeGreaterThanOrEqual(2));
    expect((screen.getByLabelText('Repository') as HTMLSelectElement).value).toBe('22');
    expect(screen.getByRole('option', { name: 'shop-repo — https://git.example.com/shop.git' })).toBeTruthy();
    await fireEvent.click(screen.getByRole('button', { name: 'Create' }));
    await waitFor(() => expect(api.called('POST /api/git/stacks')).toHaveLength(2));
    expect(api.called('POST /api/git/repositories')).toHaveLength(1);
    expect(sent('POST /api/git/stacks', 1)).toMatchObject({ repositoryId: 22 });
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
