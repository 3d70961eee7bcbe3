import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../lib/api';
import type { Schema } from '../lib/client';
import { queryClient } from '../lib/query';
import { router } from '../lib/router.svelte';
import { matchRoute } from '../lib/routes';
import { session } from '../lib/session.svelte';
import { stubApi, type StubApi, type StubCall } from '../test-api';
import { expectNoSeriousAxeViolations } from '../test-axe';
import GitStackScreen from './GitStackScreen.svelte';

const gs: Schema<'api.gitStackJSON'> = {
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
  createdAt: '2026-01-01T00:00:00Z',
  updatedAt: '2026-01-01T00:00:00Z',
};
const repo = (id: number, name: string, branch: string, credentialId: number | null) => ({
  id,
  name,
  url: `https://git.example.com/${name}.git`,
  branch,
  credentialId,
  webhookEnabled: false,
  hasWebhookSecret: false,
  webhookPath: `/api/git/webhook/${id}`,
  lastSync: null,
  syncStatus: 'never',
  syncedAt: null,
});

/** A server-sent event stream of JSON events. */
function sse(events: unknown[], headers: Record<string, string> = {}): Response {
  const text = events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join('');
  return new Response(text, { status: 200, headers: { 'Content-Type': 'text/event-stream', ...headers } });
}

let api: StubApi;
beforeEach(() => {
  queryClient.clear();
  session.session = { authenticated: false, authEnabled: false };
  session.environments = [{ id: 1, name: 'local', connectionType: 'socket' }];
  session.envId = 1;
  api = stubApi({
    'GET /api/git/stacks/5': gs,
    'GET /api/git/repositories': [repo(3, 'app', 'release', 9), repo(4, 'other', 'main', null)],
    'GET /api/git/credentials': [{ id: 9, name: 'deploy-token', authType: 'password', username: 'bot', hasPassword: true, hasSshKey: false }],
    'GET /api/stacks': [{ name: 'shop', status: 'running', sourceType: 'git', containers: [], containerDetails: [] }],
    'PUT /api/git/stacks/5': (c: StubCall) => ({ ...gs, ...(c.body as object), hasWebhookSecret: true }),
    'DELETE /api/git/stacks/5': { success: true },
    'POST /api/stacks/shop/down': { success: true, output: '' },
  });
});
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

const route = (id: number | string) => matchRoute(`/git/stacks/${id}`);
const dd = (term: string) => screen.getByText(term, { selector: 'dt' }).nextElementSibling?.textContent?.replace(/\s+/g, ' ').trim();

describe('GitStackScreen', () => {
  it('shows repository, branch, paths, last sync and commit, and the webhook URL', async () => {
    const { container } = render(GitStackScreen, { route: route(5) });
    expect(await screen.findByRole('heading', { level: 1, name: 'shop' })).toBeTruthy();
    await waitFor(() => expect(dd('Credential')).toBe('deploy-token (password)'));
    expect(dd('Repository')).toBe('app https://git.example.com/app.git');
    expect(dd('Branch')).toBe('release');
    expect(dd('Compose file')).toBe('deploy/compose.yaml');
    expect(dd('Auto-sync')).toBe('on, */10 * * * *');
    expect(dd('Last commit')).toBe('0123456789ab');
    expect(dd('Last sync')).toContain('success');
    expect((screen.getByLabelText('Webhook URL') as HTMLInputElement).value).toBe(`${location.origin}/api/git/stacks/5/webhook`);
    expect(screen.getByText(/A secret is set/)).toBeTruthy();
    expect(await screen.findByText('running')).toBeTruthy();
    expect(api.called('GET /api/stacks')[0].query).toEqual({ env: '1' });
    expect(screen.getByRole('link', { name: 'Open stack' }).getAttribute('href')).toBe('/stacks/shop');
    await expectNoSeriousAxeViolations(container);
  });

  it('syncs with progress, shows the outcome and reads the git stack again', async () => {
    api.routes['POST /api/git/stacks/5/sync'] = () => {
      api.routes['GET /api/git/stacks/5'] = { ...gs, lastCommit: 'abcdef0123456789abcd' };
      return { jobId: 'job-9' };
    };
    api.routes['GET /api/jobs/job-9'] = () =>
      sse([
        { message: 'Pulling https://git.example.com/app.git (branch release)' },
        { success: true, deployed: false, commit: 'abc', message: "Stack 'shop' is up to date at commit abc" },
      ]);
    render(GitStackScreen, { route: route(5) });
    await screen.findByRole('heading', { level: 1, name: 'shop' });
    await fireEvent.click(screen.getByRole('button', { name: 'Sync' }));
    await waitFor(() => expect(api.called('POST /api/git/stacks/5/sync')).toHaveLength(1));
    // The job is started asking for its id, not for its result (which an Accept of JSON waits for).
    const start = vi.mocked(fetch).mock.calls.map(([r]) => r as Request).find((r) => r.url.endsWith('/api/git/stacks/5/sync'));
    expect(start?.headers.get('Accept')).not.toContain('application/json');
    const out = await screen.findByRole('log', { name: 'Sync shop output' });
    await waitFor(() => expect(out.textContent).toContain('Pulling'));
    expect(await screen.findByText(/is up to date at commit abc/)).toBeTruthy();
    await waitFor(() => expect(dd('Last commit')).toBe('abcdef012345'));
  });

  it('shows a failed deploy with its error', async () => {
    api.routes['POST /api/git/stacks/5/deploy-stream'] = () => sse([{ success: false, error: 'authentication required' }]);
    render(GitStackScreen, { route: route(5) });
    await screen.findByRole('heading', { level: 1, name: 'shop' });
    await fireEvent.click(screen.getByRole('button', { name: 'Deploy' }));
    expect((await screen.findByRole('alert')).textContent).toBe('authentication required');
    expect(api.called('POST /api/git/stacks/5/sync')).toHaveLength(0);
  });

  it('deploys with the progress streamed into the output as it comes', async () => {
    let push: (s: string) => void = () => {};
    let end: () => void = () => {};
    api.routes['POST /api/git/stacks/5/deploy-stream'] = () => {
      const enc = new TextEncoder();
      const body = new ReadableStream<Uint8Array>({
        start(c) {
          push = (s) => c.enqueue(enc.encode(`data: ${s}\n\n`));
          end = () => c.close();
        },
      });
      return new Response(body, { status: 200, headers: { 'Content-Type': 'text/event-stream' } });
    };
    render(GitStackScreen, { route: route(5) });
    await screen.findByRole('heading', { level: 1, name: 'shop' });
    await fireEvent.click(screen.getByRole('button', { name: 'Deploy' }));
    await waitFor(() => expect(api.called('POST /api/git/stacks/5/deploy-stream')).toHaveLength(1));
    push(JSON.stringify({ message: 'Pulling https://git.example.com/app.git (branch release)' }));
    push(JSON.stringify({ message: 'Container shop-app-1 Started' }));
    const out = await screen.findByRole('log', { name: 'Deploy shop output' });
    await waitFor(() => expect(out.textContent).toContain('Container shop-app-1 Started'));
    expect((screen.getByRole('button', { name: 'Deploy' }) as HTMLButtonElement).disabled).toBe(true);
    push(JSON.stringify({ success: true, deployed: true, commit: 'abc', message: "Deployed stack 'shop' at commit abc" }));
    end();
    expect(await screen.findByText(/Deployed stack 'shop' at commit abc/)).toBeTruthy();
  });

  it('tests the files at the branch head and shows what is missing', async () => {
    api.routes['POST /api/git/stacks/5/test'] = {
      success: false,
      commit: '0123456789abcdef',
      branch: 'release',
      composePath: 'deploy/compose.yaml',
      composeFileExists: true,
      envFilePath: 'deploy/app.env',
      envFileExists: false,
      error: "env file 'deploy/app.env' not found",
    };
    render(GitStackScreen, { route: route(5) });
    await screen.findByRole('heading', { level: 1, name: 'shop' });
    await fireEvent.click(screen.getByRole('button', { name: 'Test' }));
    const result = await screen.findByRole('status', { name: 'Test result' });
    await waitFor(() => expect(result.textContent).toContain('Test failed'));
    expect(result.textContent).toContain("env file 'deploy/app.env' not found");
    expect(result.textContent).toContain('0123456789ab');
    expect(result.textContent).toMatch(/Compose file\s*deploy\/compose.yaml: found/);
    expect(result.textContent).toMatch(/Env file\s*deploy\/app.env: missing/);
    expect(api.called('POST /api/git/stacks/5/test')).toHaveLength(1);

    api.routes['POST /api/git/stacks/5/test'] = () => {
      throw new ApiError(404, 'Git stack not found');
    };
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
    api.routes['GET /api/git/stacks/5'] = { ...gs, repositoryId: 4, composePath: 'compose.yml', autoUpdate: false, autoUpdateCron: '' };
    await fireEvent.click(within(form).getByRole('button', { name: 'Save' }));
    await waitFor(() =>
      expect(api.called('PUT /api/git/stacks/5')[0]?.body).toEqual({
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
    await waitFor(() => expect(dd('Repository')).toBe('other https://git.example.com/other.git'));
    expect(dd('Auto-sync')).toBe('off');
    // The change is read back from the server.
    await waitFor(() => expect(api.called('GET /api/git/stacks/5').length).toBeGreaterThanOrEqual(2));
  });

  it('shows an edit refusal', async () => {
    api.routes['PUT /api/git/stacks/5'] = () => {
      throw new ApiError(400, 'Invalid cron expression');
    };
    render(GitStackScreen, { route: route(5) });
    await screen.findByRole('heading', { level: 1, name: 'shop' });
    await fireEvent.click(screen.getByRole('button', { name: 'Edit' }));
    await fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    expect((await screen.findByRole('alert')).textContent).toBe('Invalid cron expression');
    expect(screen.getByRole('form', { name: 'Edit settings' })).toBeTruthy();
  });

  it('generates a new webhook secret after confirmation and shows it once with a copy button', async () => {
    render(GitStackScreen, { route: route(5) });
    await screen.findByRole('heading', { level: 1, name: 'shop' });
    await fireEvent.click(screen.getByRole('button', { name: 'Generate a new secret' }));
    const dialog = screen.getByRole('dialog', { name: 'Replace the webhook secret?' });
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Generate' }));
    await waitFor(() => expect(api.called('PUT /api/git/stacks/5')).toHaveLength(1));
    const sent = api.called('PUT /api/git/stacks/5')[0].body as Record<string, unknown>;
    expect(sent).toMatchObject({ repositoryId: 3, composePath: 'deploy/compose.yaml', webhookEnabled: true });
    expect(sent.webhookSecret).toMatch(/^[0-9a-f]{64}$/);
    expect(((await screen.findByLabelText('Webhook secret')) as HTMLInputElement).value).toBe(sent.webhookSecret);
    expect(screen.getByRole('button', { name: 'Copy Webhook secret' })).toBeTruthy();
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
  });

  it('deletes through the confirmation (force keeps volumes: down first)', async () => {
    const nav = vi.spyOn(router, 'navigate').mockImplementation(() => {});
    render(GitStackScreen, { route: route(5) });
    await screen.findByText('running');
    await fireEvent.click(screen.getByRole('button', { name: 'Delete' }));
    const dialog = screen.getByRole('dialog', { name: 'Delete stack shop?' });
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Delete' }));
    await waitFor(() => expect(api.called('DELETE /api/git/stacks/5')).toHaveLength(1));
    expect(api.called('DELETE /api/git/stacks/5')[0].query).toEqual({ force: 'false' });
    expect(api.called('POST /api/stacks/shop/down')[0].query).toEqual({ env: '1' });
    await waitFor(() => expect(nav).toHaveBeenCalledWith('/stacks'));
    nav.mockRestore();
  });

  it('shows a missing git stack', async () => {
    api.routes['GET /api/git/stacks/99'] = () => {
      throw new ApiError(404, 'Git stack not found');
    };
    render(GitStackScreen, { route: route(99) });
    expect((await screen.findByRole('alert')).textContent).toContain('Git stack not found');
    expect(screen.getByRole('heading', { level: 1 })).toBeTruthy();
    expect(screen.getByRole('link', { name: 'Back to the stacks' })).toBeTruthy();
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
