import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import * as stacks from '../lib/api-stacks';
import { session } from '../lib/session.svelte';
import { expectNoSeriousAxeViolations } from '../test-axe';
import StackCreateScreen from './StackCreateScreen.svelte';

// The location field of a new stack: checked by POST /api/stacks/validate-path
// and completed from GET /api/stacks/path-hints (issue 15).
vi.mock('../lib/api-stacks', async (importOriginal) => {
  const real = await importOriginal<typeof import('../lib/api-stacks')>();
  return { ...real, createStack: vi.fn(), getDefaultPath: vi.fn(), getPathHints: vi.fn(), validatePath: vi.fn() };
});
// CodeMirror needs layout jsdom lacks: a text area stands in (editor-test-double).
vi.mock('../components/stacks/codemirror', () => import('../components/stacks/editor-test-double'));

const compose = 'services:\n  web:\n    image: berth-test/busybox:1\n';

beforeEach(() => {
  session.session = { authenticated: false, authEnabled: false };
  session.environments = [{ id: 1, name: 'local', connectionType: 'socket' }];
  session.envId = 1;
  vi.mocked(stacks.getDefaultPath).mockImplementation(async (_env, name) => ({
    name,
    directory: `/data/stacks/1/${name}`,
    composePath: `/data/stacks/1/${name}/compose.yaml`,
    envPath: `/data/stacks/1/${name}/.env`,
    exists: false,
    taken: false,
  }));
  vi.mocked(stacks.getPathHints).mockResolvedValue({
    basePath: '/data/stacks/1',
    directories: ['/data/stacks/1/shop', '/srv/stacks'],
    composeFiles: ['/srv/stacks/blog/compose.yaml'],
    truncated: false,
  });
  vi.mocked(stacks.validatePath).mockImplementation(async (_env, p) =>
    p.startsWith('/')
      ? { valid: true, directory: p, exists: false, writable: true, hasComposeFile: false }
      : { valid: false, message: `Invalid path "${p}": an absolute path is required`, exists: false, writable: false, hasComposeFile: false },
  );
  vi.mocked(stacks.createStack).mockResolvedValue({ success: true, started: true, output: '' });
});
afterEach(() => {
  cleanup();
  vi.clearAllMocks();
});

describe('StackCreateScreen (location)', () => {
  it('shows the default location for the name and offers the path hints', async () => {
    const { container } = render(StackCreateScreen);
    await fireEvent.input(screen.getByLabelText('Name'), { target: { value: 'demo' } });
    await waitFor(() => expect(screen.getByText('Default: /data/stacks/1/demo')).toBeTruthy());
    expect(stacks.getDefaultPath).toHaveBeenCalledWith(1, 'demo');
    const input = screen.getByLabelText('Location (optional)') as HTMLInputElement;
    expect(input.placeholder).toBe('/data/stacks/1/demo');
    await waitFor(() => expect(container.querySelectorAll('#stack-location-hints option').length).toBe(3));
    const options = Array.from(container.querySelectorAll<HTMLOptionElement>('#stack-location-hints option')).map((o) => o.value);
    expect(options).toEqual(['/data/stacks/1/shop', '/srv/stacks', '/srv/stacks/blog/compose.yaml']);
    expect(input.getAttribute('list')).toBe('stack-location-hints');
    await expectNoSeriousAxeViolations(container);
  }, 20_000);

  it('checks a typed location with the server and refuses to deploy to an invalid one', async () => {
    render(StackCreateScreen);
    await fireEvent.input(screen.getByLabelText('Name'), { target: { value: 'demo' } });
    const input = screen.getByLabelText('Location (optional)') as HTMLInputElement;
    await fireEvent.input(input, { target: { value: 'srv/demo' } });
    await waitFor(() => expect(screen.getByText('Invalid path "srv/demo": an absolute path is required')).toBeTruthy());
    expect(stacks.validatePath).toHaveBeenLastCalledWith(1, 'srv/demo');
    expect(input.getAttribute('aria-invalid')).toBe('true');
    await fireEvent.click(screen.getByRole('button', { name: 'Deploy' }));
    expect((await screen.findByRole('alert')).textContent).toContain('Fix the location');
    expect(stacks.createStack).not.toHaveBeenCalled();
  });

  it('deploys to a valid location as the compose file path', async () => {
    render(StackCreateScreen);
    await fireEvent.input(screen.getByLabelText('Name'), { target: { value: 'demo' } });
    await fireEvent.input(await screen.findByRole('textbox', { name: 'Compose file' }), { target: { value: compose } });
    const input = screen.getByLabelText('Location (optional)') as HTMLInputElement;
    await fireEvent.input(input, { target: { value: '/srv/stacks/demo/' } });
    await waitFor(() => expect(screen.getByText('New directory (created on deploy); writable.')).toBeTruthy());
    expect(stacks.getPathHints).toHaveBeenLastCalledWith(1, '/srv/stacks/demo/');
    await fireEvent.click(screen.getByRole('button', { name: 'Deploy' }));
    await waitFor(() =>
      expect(stacks.createStack).toHaveBeenCalledWith(
        1,
        { name: 'demo', compose, start: true, envVars: [], rawEnvContent: '', composePath: '/srv/stacks/demo/compose.yaml' },
        expect.any(Function),
      ),
    );
  });
});
