import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../lib/api';
import * as stacks from '../lib/api-stacks';
import * as git from '../lib/api-git';
import { session } from '../lib/session.svelte';
import { expectNoSeriousAxeViolations } from '../test-axe';
import StacksScreen from './StacksScreen.svelte';

vi.mock('../lib/api-stacks', async (importOriginal) => {
  const real = await importOriginal<typeof import('../lib/api-stacks')>();
  return {
    ...real,
    listStacks: vi.fn(),
    stackAction: vi.fn(),
    deleteStack: vi.fn(),
    deployStack: vi.fn(),
    scanStacks: vi.fn(),
    adoptStack: vi.fn(),
  };
});
vi.mock('../lib/api-git', async (importOriginal) => {
  const real = await importOriginal<typeof import('../lib/api-git')>();
  return { ...real, listGitStacks: vi.fn() };
});

const c = (id: string, service: string, state: string): stacks.StackContainer => ({
  id,
  name: `${id}-1`,
  service,
  state,
  status: state === 'running' ? 'Up 2 minutes' : 'Exited (0)',
  image: 'busybox',
});

const list: stacks.StackEntry[] = [
  { name: 'web', status: 'running', sourceType: 'internal', containers: ['a', 'b'], containerDetails: [c('a', 'app', 'running'), c('b', 'db', 'running')] },
  { name: 'half', status: 'partial', sourceType: 'git', containers: ['c', 'd'], containerDetails: [c('c', 'app', 'running'), c('d', 'app', 'exited')] },
  { name: 'legacy', status: 'stopped', sourceType: 'external', adopted: false, containers: ['e'], containerDetails: [c('e', 'x', 'exited')] },
  { name: 'fresh', status: 'created', sourceType: 'internal', containers: [], containerDetails: [] },
];

beforeEach(() => {
  session.environments = [{ id: 1, name: 'local', connectionType: 'socket' }];
  session.envId = 1;
  vi.mocked(stacks.listStacks).mockResolvedValue(structuredClone(list));
  vi.mocked(git.listGitStacks).mockResolvedValue([
    { id: 7, stackName: 'half', environmentId: 1 } as git.GitStack,
    { id: 8, stackName: 'web', environmentId: 2 } as git.GitStack,
  ]);
  vi.mocked(stacks.stackAction).mockResolvedValue({ success: true, output: 'Container web-app-1 Stopped' });
  vi.mocked(stacks.deleteStack).mockResolvedValue({ success: true });
  vi.mocked(stacks.adoptStack).mockResolvedValue({ success: true, name: 'legacy', sourceType: 'external', composePath: '/srv/legacy/compose.yaml' });
});
afterEach(() => {
  cleanup();
  vi.clearAllMocks();
});

const row = (name: string) => screen.getAllByRole('row').find((r) => within(r).queryAllByRole('cell')[0]?.textContent?.includes(name)) as HTMLElement;

describe('StacksScreen', () => {
  it('lists stacks with status, source, services and containers', async () => {
    render(StacksScreen);
    expect(screen.getByRole('heading', { level: 1, name: 'Stacks' })).toBeTruthy();
    await screen.findByRole('table');
    expect(stacks.listStacks).toHaveBeenCalledWith(1);
    const web = within(row('web')).getAllByRole('cell').map((td) => td.textContent?.trim());
    expect(web.slice(0, 5)).toEqual(['web', 'running', 'internal', '2', '2 / 2 running']);
    const half = within(row('half')).getAllByRole('cell').map((td) => td.textContent?.trim());
    expect(half.slice(1, 5)).toEqual(['partial', 'git', '1', '1 / 2 running']);
    expect(within(row('legacy')).getByText('external (not adopted)')).toBeTruthy();
    expect(within(row('fresh')).getAllByRole('cell')[4].textContent).toBe('—');
    // Links: managed stacks to their page, git stacks of this environment to their settings too.
    expect(screen.getByRole('link', { name: 'web' }).getAttribute('href')).toBe('/stacks/web');
    expect(screen.getByRole('link', { name: 'Git settings of half' }).getAttribute('href')).toBe('/git/stacks/7');
    expect(screen.queryByRole('link', { name: 'Git settings of web' })).toBeNull();
    expect(screen.queryByRole('link', { name: 'legacy' })).toBeNull();
    expect(screen.getByRole('link', { name: 'New stack' }).getAttribute('href')).toBe('/stacks/new');
  });

  it('shows an explicit empty state and the list error', async () => {
    vi.mocked(stacks.listStacks).mockResolvedValueOnce([]);
    render(StacksScreen);
    expect(await screen.findByText('No stacks on this environment.')).toBeTruthy();
    cleanup();
    vi.mocked(stacks.listStacks).mockRejectedValueOnce(new ApiError(404, 'Environment not found'));
    render(StacksScreen);
    expect((await screen.findByRole('alert')).textContent).toContain('Environment not found');
  });

  it('runs a lifecycle action and shows its output; a failure shows the server message', async () => {
    render(StacksScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Stop web' }));
    await waitFor(() => expect(stacks.stackAction).toHaveBeenCalledWith(1, 'web', 'stop'));
    const out = await screen.findByRole('log', { name: 'Stop web output' });
    await waitFor(() => expect(out.textContent).toContain('Container web-app-1 Stopped'));
    await waitFor(() => expect(screen.getAllByRole('status').some((s) => s.textContent === 'web stopped.')).toBe(true));

    vi.mocked(stacks.stackAction).mockRejectedValueOnce(new ApiError(500, "start stack 'legacy': engine said no"));
    await fireEvent.click(screen.getByRole('button', { name: 'Start legacy' }));
    expect((await screen.findByRole('alert')).textContent).toContain('engine said no');
  });

  it('deploys with streamed output', async () => {
    vi.mocked(stacks.deployStack).mockImplementation(async (_env, _name, onLine) => {
      onLine('Network fresh_default Created');
      onLine('Container fresh-app-1 Started');
      return { success: true, started: true, output: '' };
    });
    render(StacksScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Deploy fresh' }));
    const out = await screen.findByRole('log', { name: 'Deploy fresh output' });
    await waitFor(() => expect(out.textContent).toBe('Network fresh_default Created\nContainer fresh-app-1 Started'));
    expect(screen.getByText('Deploy fresh: done.')).toBeTruthy();
  });

  it('asks before taking a stack down', async () => {
    render(StacksScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Down web' }));
    const dialog = screen.getByRole('dialog', { name: 'Take web down?' });
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Down' }));
    await waitFor(() => expect(stacks.stackAction).toHaveBeenCalledWith(1, 'web', 'down'));
  });

  it('deletes through the confirmation: force takes a running stack down first, remove volumes is force', async () => {
    render(StacksScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Delete web' }));
    let dialog = screen.getByRole('dialog', { name: 'Delete stack web?' });
    const force = within(dialog).getByRole('checkbox', { name: /Force/ }) as HTMLInputElement;
    expect(force.checked).toBe(true); // it runs
    await fireEvent.keyDown(dialog, { key: 'Escape' });
    expect(screen.queryByRole('dialog')).toBeNull();
    expect(stacks.deleteStack).not.toHaveBeenCalled();

    await fireEvent.click(screen.getByRole('button', { name: 'Delete web' }));
    dialog = screen.getByRole('dialog', { name: 'Delete stack web?' });
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Delete' }));
    await waitFor(() => expect(stacks.deleteStack).toHaveBeenCalledWith(1, 'web', false));
    expect(stacks.stackAction).toHaveBeenCalledWith(1, 'web', 'down');

    vi.mocked(stacks.stackAction).mockClear();
    await fireEvent.click(screen.getByRole('button', { name: 'Delete web' }));
    dialog = screen.getByRole('dialog', { name: 'Delete stack web?' });
    await fireEvent.click(within(dialog).getByRole('checkbox', { name: /Remove volumes/ }));
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Delete' }));
    await waitFor(() => expect(stacks.deleteStack).toHaveBeenCalledWith(1, 'web', true));
    expect(stacks.stackAction).not.toHaveBeenCalled();
  });

  it('shows the server message when a delete is refused', async () => {
    vi.mocked(stacks.deleteStack).mockRejectedValueOnce(new ApiError(400, "Stack 'half' is running. Stop it first or use force=true to delete it."));
    render(StacksScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Delete half' }));
    const dialog = screen.getByRole('dialog', { name: 'Delete stack half?' });
    await fireEvent.click(within(dialog).getByRole('checkbox', { name: /Force/ })); // off
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Delete' }));
    expect((await screen.findByRole('alert')).textContent).toContain('Stop it first');
  });

  it('finds external stacks and adopts one', async () => {
    vi.mocked(stacks.scanStacks).mockResolvedValue([
      { name: 'legacy', status: 'stopped', containers: 1, workingDir: '/srv/legacy', configFiles: ['/srv/legacy/compose.yaml'], adoptable: true },
      { name: 'ghost', status: 'running', containers: 2, workingDir: '', configFiles: [], adoptable: false },
    ]);
    render(StacksScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Find external stacks' }));
    const panel = await screen.findByRole('region', { name: 'External stacks' });
    expect(within(panel).getByText('/srv/legacy/compose.yaml')).toBeTruthy();
    expect((within(panel).getByRole('button', { name: 'Adopt ghost' }) as HTMLButtonElement).disabled).toBe(true);
    await fireEvent.click(within(panel).getByRole('button', { name: 'Adopt legacy' }));
    await waitFor(() => expect(stacks.adoptStack).toHaveBeenCalledWith(1, 'legacy'));
    await waitFor(() => expect(within(panel).queryByText('/srv/legacy/compose.yaml')).toBeNull());
  });

  it('has no serious or critical axe violations', async () => {
    const { container } = render(StacksScreen);
    await screen.findByRole('table');
    await expectNoSeriousAxeViolations(container);
  });
});
