import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import CommandPalette, { fuzzyScore } from './CommandPalette.svelte';
import { router } from '../lib/router.svelte';
import { session } from '../lib/session.svelte';
import { queryClient } from '../lib/query';
import { stubApi } from '../test-api';
import { expectNoSeriousAxeViolations } from '../test-axe';

describe('fuzzyScore', () => {
  it('prefers prefixes, then substrings, then scattered letters; rejects the rest', () => {
    expect(fuzzyScore('cont', 'Containers')).toBe(0);
    expect(fuzzyScore('tain', 'Containers')!).toBeGreaterThan(0);
    expect(fuzzyScore('cnt', 'Containers')!).toBeGreaterThan(fuzzyScore('tain', 'Containers')!);
    expect(fuzzyScore('xyz', 'Containers')).toBeNull();
  });
});

describe('CommandPalette', () => {
  beforeEach(() => {
    queryClient.clear();
    session.session = { authenticated: false, authEnabled: false } as typeof session.session;
    session.environments = [{ id: 1, name: 'local', connectionType: 'socket' }] as typeof session.environments;
    session.envId = 1;
    router.navigate('/');
    stubApi({
      'GET /api/containers': () => [
        { id: 'abc123', name: 'web-frontend', image: 'nginx:1', state: 'running', status: 'Up' },
        { id: 'def456', name: 'db', image: 'postgres:16', state: 'exited', status: 'Exited' },
      ],
      'GET /api/stacks': () => [{ name: 'shop', containers: [], containerDetails: [], status: 'running', sourceType: 'internal' }],
      'GET /api/images': () => [{ Id: 'sha256:0123456789abcdef', RepoTags: ['busybox:latest'] }],
    });
  });
  afterEach(() => cleanup());

  it('opens with Ctrl+K, finds a container, Enter navigates, and passes axe', async () => {
    render(CommandPalette);
    expect(screen.queryByRole('dialog')).toBeNull();
    await fireEvent.keyDown(window, { key: 'k', ctrlKey: true });
    const dialog = await screen.findByRole('dialog', { name: 'Go to' });
    const input = within(dialog).getByRole('combobox');
    expect(document.activeElement).toBe(input);
    await within(dialog).findByText('web-frontend');
    await expectNoSeriousAxeViolations(dialog);
    await fireEvent.input(input, { target: { value: 'wbfront' } });
    const options = within(dialog).getAllByRole('option');
    expect(options).toHaveLength(1);
    expect(options[0].getAttribute('aria-selected')).toBe('true');
    expect(input.getAttribute('aria-activedescendant')).toBe(options[0].id);
    await fireEvent.keyDown(input, { key: 'Enter' });
    expect(router.path).toBe('/containers/abc123');
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
  });

  it('moves through results with the arrow keys and jumps to a screen, stack or image', async () => {
    render(CommandPalette, { open: true });
    const dialog = await screen.findByRole('dialog');
    const input = within(dialog).getByRole('combobox');
    await within(dialog).findByText('shop');
    await fireEvent.input(input, { target: { value: 'stacks' } });
    let options = within(dialog).getAllByRole('option');
    expect(options[0].textContent).toContain('Stacks');
    await fireEvent.keyDown(input, { key: 'ArrowDown' });
    options = within(dialog).getAllByRole('option');
    if (options.length > 1) expect(options[1].getAttribute('aria-selected')).toBe('true');
    await fireEvent.keyDown(input, { key: 'ArrowUp' });
    await fireEvent.keyDown(input, { key: 'Enter' });
    expect(router.path).toBe('/stacks');
  });

  it('leaves Ctrl+K to a terminal or the code editor', async () => {
    render(CommandPalette);
    const term = document.createElement('div');
    term.className = 'xterm';
    const inner = document.createElement('textarea');
    term.append(inner);
    document.body.append(term);
    await fireEvent.keyDown(inner, { key: 'k', ctrlKey: true });
    expect(screen.queryByRole('dialog')).toBeNull();
    term.remove();
  });

  it('Escape closes', async () => {
    render(CommandPalette, { open: true });
    const dialog = await screen.findByRole('dialog');
    await fireEvent.keyDown(within(dialog).getByRole('combobox'), { key: 'Escape' });
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
  });

  it('hides admin-only screens from a non-admin', async () => {
    session.session = {
      authenticated: true,
      authEnabled: true,
      user: { id: 2, username: 'v', isAdmin: false, permissions: { containers: ['view'] } },
    } as unknown as typeof session.session;
    render(CommandPalette, { open: true });
    const dialog = await screen.findByRole('dialog');
    const input = within(dialog).getByRole('combobox');
    await fireEvent.input(input, { target: { value: 'users' } });
    expect(within(dialog).queryByText('Users')).toBeNull();
    await fireEvent.input(input, { target: { value: 'containers' } });
    expect(within(dialog).getByText('Containers')).toBeTruthy();
    // Only what the user may view is read: containers, not stacks or images.
    await fireEvent.input(input, { target: { value: '' } });
    await within(dialog).findByText('web-frontend');
    expect(within(dialog).queryByText('busybox:latest')).toBeNull();
  });
});
