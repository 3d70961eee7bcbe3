import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import * as api from '../lib/api';
import { session } from '../lib/session.svelte';
import { expectNoSeriousAxeViolations } from '../test-axe';
import ContainersScreen from './ContainersScreen.svelte';

vi.mock('../lib/api', async (importOriginal) => {
  const real = await importOriginal<typeof import('../lib/api')>();
  return {
    ...real,
    listContainers: vi.fn(),
    containerAction: vi.fn(),
    removeContainer: vi.fn(),
  };
});

const list: api.ContainerSummary[] = [
  { id: 'a1', name: 'web', image: 'nginx:1.27', state: 'running', status: 'Up 2 hours', ports: [{ PrivatePort: 80, PublicPort: 8080, Type: 'tcp' }] },
  { id: 'b2', name: 'db', image: 'postgres:16', state: 'exited', status: 'Exited (0) 1 day ago', ports: [] },
  { id: 'c3', name: 'cache', image: 'redis:7', state: 'running', status: 'Up 1 minute', ports: [] },
];


beforeEach(() => {
  session.environments = [{ id: 1, name: 'local', connectionType: 'socket' }];
  session.envId = 1;
  vi.mocked(api.listContainers).mockResolvedValue(structuredClone(list));
  vi.mocked(api.containerAction).mockResolvedValue({ success: true });
  vi.mocked(api.removeContainer).mockResolvedValue({ success: true });
});
afterEach(() => {
  cleanup();
  vi.clearAllMocks();
});

const names = () =>
  screen
    .getAllByRole('row')
    .slice(1)
    .map((r) => within(r).getAllByRole('cell')[0].textContent?.trim());

describe('ContainersScreen', () => {
  it('lists the containers of the selected environment, sorted by name', async () => {
    render(ContainersScreen);
    expect(screen.getByRole('heading', { level: 1, name: 'Containers' })).toBeTruthy();
    await screen.findByRole('table');
    expect(api.listContainers).toHaveBeenCalledWith(1);
    expect(names()).toEqual(['cache', 'db', 'web']);
    expect(screen.getByText('8080→80/tcp')).toBeTruthy();
  });

  it('sorts by clicking the column header buttons', async () => {
    render(ContainersScreen);
    await screen.findByRole('table');
    const nameHeader = screen.getByRole('columnheader', { name: /Name/ });
    expect(nameHeader.getAttribute('aria-sort')).toBe('ascending');
    await fireEvent.click(screen.getByRole('button', { name: /Name/ }));
    expect(names()).toEqual(['web', 'db', 'cache']);
    expect(nameHeader.getAttribute('aria-sort')).toBe('descending');
    await fireEvent.click(screen.getByRole('button', { name: /Image/ }));
    expect(names()).toEqual(['web', 'db', 'cache']); // nginx, postgres, redis
    expect(screen.getByRole('columnheader', { name: /Image/ }).getAttribute('aria-sort')).toBe('ascending');
    expect(nameHeader.getAttribute('aria-sort')).toBe('none');
  });

  it('filters with the Filter box and shows an empty match state', async () => {
    render(ContainersScreen);
    await screen.findByRole('table');
    const filter = screen.getByLabelText('Filter');
    await fireEvent.input(filter, { target: { value: 'running' } });
    expect(names()).toEqual(['cache', 'web']);
    await fireEvent.input(filter, { target: { value: 'zzz' } });
    expect(screen.queryByRole('table')).toBeNull();
    expect(screen.getByText(/No container matches/)).toBeTruthy();
    await fireEvent.click(screen.getByRole('button', { name: 'Clear filter' }));
    expect(names()).toHaveLength(3);
  });

  it('shows an explicit empty state', async () => {
    vi.mocked(api.listContainers).mockResolvedValue([]);
    render(ContainersScreen);
    expect(await screen.findByText('No containers on this environment.')).toBeTruthy();
  });

  it('runs a row action and shows the server message when it fails', async () => {
    vi.mocked(api.containerAction).mockRejectedValueOnce(new api.ApiError(500, 'engine said no'));
    render(ContainersScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Stop web' }));
    expect(api.containerAction).toHaveBeenCalledWith(1, 'a1', 'stop');
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain('engine said no');
    await fireEvent.click(screen.getByRole('button', { name: 'Start db' }));
    await waitFor(() => expect(api.containerAction).toHaveBeenCalledWith(1, 'b2', 'start'));
    await waitFor(() => expect(screen.getByRole('status').textContent).toBe('db started.'));
  });

  it('asks before removing; Escape cancels, confirm removes with force for a running container', async () => {
    render(ContainersScreen);
    await screen.findByRole('table');
    const opener = screen.getByRole('button', { name: 'Remove web' });
    opener.focus(); // as with the keyboard (jsdom does not focus on click)
    await fireEvent.click(opener);
    let dialog = screen.getByRole('dialog', { name: 'Remove web?' });
    expect(document.activeElement?.textContent).toBe('Cancel');
    await fireEvent.keyDown(dialog, { key: 'Escape' });
    expect(screen.queryByRole('dialog')).toBeNull();
    expect(document.activeElement).toBe(opener);
    expect(api.removeContainer).not.toHaveBeenCalled();

    await fireEvent.click(opener);
    dialog = screen.getByRole('dialog', { name: 'Remove web?' });
    expect((within(dialog).getByRole('checkbox') as HTMLInputElement).checked).toBe(true);
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Remove' }));
    await waitFor(() => expect(api.removeContainer).toHaveBeenCalledWith(1, 'a1', true));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
  });

  it('shows the error of the list call', async () => {
    vi.mocked(api.listContainers).mockRejectedValue(new api.ApiError(403, 'Access denied to this environment'));
    render(ContainersScreen);
    expect((await screen.findByRole('alert')).textContent).toContain('Access denied to this environment');
  });

  it('has no serious or critical axe violations', async () => {
    const { container } = render(ContainersScreen);
    await screen.findByRole('table');
    await expectNoSeriousAxeViolations(container);
  });
});
