import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../lib/api';
import * as stacks from '../lib/api-stacks';
import * as git from '../lib/api-git';
import { router } from '../lib/router.svelte';
import { matchRoute } from '../lib/routes';
import { session } from '../lib/session.svelte';
import { expectNoSeriousAxeViolations } from '../test-axe';
import StackDetailScreen from './StackDetailScreen.svelte';

vi.mock('../lib/api-stacks', async (importOriginal) => {
  const real = await importOriginal<typeof import('../lib/api-stacks')>();
  return {
    ...real,
    getStack: vi.fn(),
    getCompose: vi.fn(),
    saveCompose: vi.fn(),
    saveComposeAndRedeploy: vi.fn(),
    getEnv: vi.fn(),
    getRawEnv: vi.fn(),
    putEnv: vi.fn(),
    putRawEnv: vi.fn(),
    stackAction: vi.fn(),
    deployStack: vi.fn(),
    deleteStack: vi.fn(),
  };
});
vi.mock('../lib/api-git', async (importOriginal) => {
  const real = await importOriginal<typeof import('../lib/api-git')>();
  return { ...real, listGitStacks: vi.fn() };
});
// CodeMirror needs layout jsdom lacks: a text area stands in (editor-test-double).
vi.mock('../components/stacks/codemirror', () => import('../components/stacks/editor-test-double'));

const compose = 'services:\n  app:\n    image: berth-test/busybox:1\n';
const entry: stacks.StackEntry = {
  name: 'shop',
  status: 'running',
  sourceType: 'internal',
  containers: ['abc123'],
  containerDetails: [
    {
      id: 'abc123',
      name: 'shop-app-1',
      service: 'app',
      state: 'running',
      status: 'Up 5 minutes',
      health: 'none',
      image: 'berth-test/busybox:1',
      ports: [{ publicPort: 8080, privatePort: 80, type: 'tcp', display: '8080:80/tcp' }],
    },
  ],
};

const route = (name: string) => matchRoute(`/stacks/${encodeURIComponent(name)}`);

beforeEach(() => {
  session.environments = [{ id: 1, name: 'local', connectionType: 'socket' }];
  session.envId = 1;
  vi.mocked(stacks.getStack).mockResolvedValue(structuredClone(entry));
  vi.mocked(stacks.getCompose).mockResolvedValue({
    content: compose,
    stackDir: '/data/stacks/1/shop',
    composePath: '/data/stacks/1/shop/compose.yaml',
    envPath: '/data/stacks/1/shop/.env',
    sourceType: 'internal',
  });
  vi.mocked(stacks.getEnv).mockResolvedValue([
    { key: 'MODE', value: 'prod', isSecret: false },
    { key: 'TOKEN', value: '***', isSecret: true },
  ]);
  vi.mocked(stacks.getRawEnv).mockResolvedValue('# the mode\nMODE=prod\n');
  vi.mocked(stacks.putEnv).mockResolvedValue({ success: true, count: 1 });
  vi.mocked(stacks.putRawEnv).mockResolvedValue({ success: true });
  vi.mocked(stacks.saveCompose).mockResolvedValue({ success: true });
  vi.mocked(stacks.stackAction).mockResolvedValue({ success: true, output: 'Container shop-app-1 Restarted' });
  vi.mocked(stacks.deleteStack).mockResolvedValue({ success: true });
  vi.mocked(git.listGitStacks).mockResolvedValue([]);
});
afterEach(() => {
  cleanup();
  vi.clearAllMocks();
});

async function ready() {
  await screen.findByRole('table');
  return (await screen.findByRole('textbox', { name: 'Compose file' })) as HTMLTextAreaElement;
}

describe('StackDetailScreen', () => {
  it('shows status, containers linking to their page, the compose file and the variables with secrets masked', async () => {
    const { container } = render(StackDetailScreen, { route: route('shop') });
    expect(screen.getByRole('heading', { level: 1, name: 'shop' })).toBeTruthy();
    const editor = await ready();
    expect(stacks.getStack).toHaveBeenCalledWith(1, 'shop');
    expect(stacks.getCompose).toHaveBeenCalledWith(1, 'shop');
    expect(screen.getByRole('link', { name: 'shop-app-1' }).getAttribute('href')).toBe('/containers/abc123');
    expect(screen.getByText('8080:80/tcp')).toBeTruthy();
    expect(screen.getByText('1 of 1 running')).toBeTruthy();
    expect(editor.value).toBe(compose);
    expect(screen.getByText('/data/stacks/1/shop/compose.yaml')).toBeTruthy();
    const token = (await screen.findByLabelText('Value of TOKEN')) as HTMLInputElement;
    expect(token.type).toBe('password');
    expect(token.value).toBe('***');
    expect((screen.getByLabelText('Value of MODE') as HTMLInputElement).value).toBe('prod');
    await expectNoSeriousAxeViolations(container);
  });

  it('saves the compose file, and saves and redeploys with streamed output', async () => {
    vi.mocked(stacks.saveComposeAndRedeploy).mockImplementation(async (_e, _n, _c, onLine) => {
      onLine('Container shop-app-1 Recreate');
      onLine('Container shop-app-1 Started');
      return { success: true, output: '' };
    });
    render(StackDetailScreen, { route: route('shop') });
    const editor = await ready();
    const save = screen.getByRole('button', { name: 'Save' }) as HTMLButtonElement;
    expect(save.disabled).toBe(true); // nothing changed yet
    const next = compose + '    command: sleep 600\n';
    await fireEvent.input(editor, { target: { value: next } });
    expect(screen.getByText('Unsaved changes')).toBeTruthy();
    await fireEvent.click(save);
    await waitFor(() => expect(stacks.saveCompose).toHaveBeenCalledWith(1, 'shop', next));
    expect(await screen.findByText(/Saved\. Deploy or restart/)).toBeTruthy();
    expect(screen.queryByText('Unsaved changes')).toBeNull();

    const sections = screen.getAllByRole('button', { name: 'Save and redeploy' });
    await fireEvent.click(sections[0]);
    await waitFor(() => expect(stacks.saveComposeAndRedeploy).toHaveBeenCalledWith(1, 'shop', next, expect.any(Function)));
    const out = await screen.findByRole('log', { name: 'Redeploy shop output' });
    expect(out.textContent).toBe('Container shop-app-1 Recreate\nContainer shop-app-1 Started');
  });

  it('refuses to save a compose file with errors, and shows the server refusal', async () => {
    render(StackDetailScreen, { route: route('shop') });
    const editor = await ready();
    await fireEvent.input(editor, { target: { value: 'volumes: {}\n' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    expect((await screen.findByRole('alert')).textContent).toMatch(/Fix the compose file first/);
    expect(stacks.saveCompose).not.toHaveBeenCalled();

    vi.mocked(stacks.saveCompose).mockRejectedValueOnce(new ApiError(400, 'service "app" has neither an image nor a build context'));
    await fireEvent.input(editor, { target: { value: 'services:\n  app: {}\n' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    expect((await screen.findByRole('alert')).textContent).toContain('neither an image nor a build context');
  });

  it('saves variables: secrets (a kept one as ***) with PUT /env, the rest as the .env text with its comments', async () => {
    render(StackDetailScreen, { route: route('shop') });
    await ready();
    await fireEvent.input(await screen.findByLabelText('Value of MODE'), { target: { value: 'staging' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Add variable' }));
    await fireEvent.input(screen.getByLabelText('Name of variable 3'), { target: { value: 'DB_PASSWORD' } });
    await fireEvent.input(screen.getByLabelText('Value of DB_PASSWORD'), { target: { value: 'pw' } });
    await fireEvent.click(screen.getByRole('checkbox', { name: 'Secret (DB_PASSWORD)' }));
    await fireEvent.click(screen.getByRole('button', { name: 'Save variables' }));
    await waitFor(() => expect(stacks.putRawEnv).toHaveBeenCalledWith(1, 'shop', '# the mode\nMODE=staging\n'));
    expect(stacks.putEnv).toHaveBeenCalledWith(1, 'shop', [
      { key: 'TOKEN', value: '***', isSecret: true },
      { key: 'DB_PASSWORD', value: 'pw', isSecret: true },
    ]);
    expect(vi.mocked(stacks.putEnv).mock.invocationCallOrder[0]).toBeLessThan(vi.mocked(stacks.putRawEnv).mock.invocationCallOrder[0]);
    expect(await screen.findByText(/Saved\. The stack uses them/)).toBeTruthy();
  });

  it('keeps the secret rule: a stored secret cannot become plain without its value', async () => {
    render(StackDetailScreen, { route: route('shop') });
    await ready();
    await fireEvent.click(await screen.findByRole('checkbox', { name: 'Secret (TOKEN)' }));
    await fireEvent.click(screen.getByRole('button', { name: 'Save variables' }));
    expect((await screen.findByRole('alert')).textContent).toMatch(/Enter the value of TOKEN/);
    expect(stacks.putEnv).not.toHaveBeenCalled();
  });

  it('edits the raw .env text', async () => {
    render(StackDetailScreen, { route: route('shop') });
    await ready();
    await fireEvent.click(await screen.findByRole('tab', { name: 'Raw .env' }));
    const box = screen.getByLabelText('.env file') as HTMLTextAreaElement;
    expect(box.value).toBe('# the mode\nMODE=prod\n');
    await fireEvent.input(box, { target: { value: '# the mode\nMODE=prod\nNEW=1\n' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Save variables' }));
    await waitFor(() => expect(stacks.putRawEnv).toHaveBeenCalledWith(1, 'shop', '# the mode\nMODE=prod\nNEW=1\n'));
    expect(stacks.putEnv).toHaveBeenCalledWith(1, 'shop', [{ key: 'TOKEN', value: '***', isSecret: true }]);
  });

  it('runs lifecycle actions with output and deletes through the confirmation', async () => {
    const nav = vi.spyOn(router, 'navigate').mockImplementation(() => {});
    render(StackDetailScreen, { route: route('shop') });
    await ready();
    await fireEvent.click(screen.getByRole('button', { name: 'Restart' }));
    await waitFor(() => expect(stacks.stackAction).toHaveBeenCalledWith(1, 'shop', 'restart'));
    await waitFor(() => expect(screen.getByRole('log', { name: 'Restart shop output' }).textContent).toContain('Restarted'));

    await fireEvent.click(screen.getByRole('button', { name: 'Delete' }));
    const dialog = screen.getByRole('dialog', { name: 'Delete stack shop?' });
    await fireEvent.click(within(dialog).getByRole('checkbox', { name: /Remove volumes/ }));
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Delete' }));
    await waitFor(() => expect(stacks.deleteStack).toHaveBeenCalledWith(1, 'shop', true));
    await waitFor(() => expect(nav).toHaveBeenCalledWith('/stacks'));
    nav.mockRestore();
  });

  it('shows a failed deploy with the server message', async () => {
    vi.mocked(stacks.deployStack).mockImplementation(async (_e, _n, onLine) => {
      onLine('Container shop-app-1 Creating');
      return { success: false, error: 'pull access denied for nope', output: '' };
    });
    render(StackDetailScreen, { route: route('shop') });
    await ready();
    await fireEvent.click(screen.getByRole('button', { name: 'Deploy' }));
    expect((await screen.findByRole('alert')).textContent).toBe('pull access denied for nope');
    expect(screen.getByText('Deploy shop: failed.')).toBeTruthy();
  });

  it('shows a git stack read-only with a link to its settings', async () => {
    vi.mocked(stacks.getStack).mockResolvedValue({ ...structuredClone(entry), sourceType: 'git' });
    vi.mocked(stacks.getCompose).mockResolvedValue({ content: compose, stackDir: '/c', composePath: '/c/compose.yaml', envPath: '/c/.env', sourceType: 'git' });
    vi.mocked(git.listGitStacks).mockResolvedValue([{ id: 4, stackName: 'shop', environmentId: 1 } as git.GitStack]);
    render(StackDetailScreen, { route: route('shop') });
    const editor = await ready();
    expect(editor.readOnly).toBe(true);
    expect(screen.getByText(/change its compose file in the repository/)).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Save' })).toBeNull();
    expect((await screen.findByRole('link', { name: 'Git settings' })).getAttribute('href')).toBe('/git/stacks/4');
  });

  it('says when the stack does not exist', async () => {
    vi.mocked(stacks.getStack).mockResolvedValue(null);
    vi.mocked(stacks.getCompose).mockRejectedValue(new ApiError(404, "Stack 'nope' not found"));
    vi.mocked(stacks.getEnv).mockRejectedValue(new ApiError(404, "Stack 'nope' not found"));
    render(StackDetailScreen, { route: route('nope') });
    expect(await screen.findByText(/There is no stack nope/)).toBeTruthy();
  });
});
