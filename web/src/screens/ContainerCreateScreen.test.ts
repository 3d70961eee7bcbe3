import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../lib/api';
import * as containers from '../lib/api-containers';
import { session } from '../lib/session.svelte';
import { expectNoSeriousAxeViolations } from '../test-axe';
import ContainerCreateScreen from './ContainerCreateScreen.svelte';

vi.mock('../lib/api-containers', async (importOriginal) => {
  const real = await importOriginal<typeof import('../lib/api-containers')>();
  return { ...real, createContainer: vi.fn(), networkNames: vi.fn(), volumeNames: vi.fn() };
});

beforeEach(() => {
  session.environments = [{ id: 2, name: 'edge', connectionType: 'socket' }];
  session.envId = 2;
  history.replaceState(null, '', '/containers/new');
  vi.mocked(containers.networkNames).mockResolvedValue([{ name: 'bridge' }, { name: 'host' }, { name: 'backend' }]);
  vi.mocked(containers.volumeNames).mockResolvedValue([{ name: 'data' }]);
  vi.mocked(containers.createContainer).mockResolvedValue({ success: true, id: 'f00d' });
});
afterEach(() => {
  cleanup();
  vi.clearAllMocks();
});

const input = (label: string | RegExp, value: string) => fireEvent.input(screen.getByLabelText(label), { target: { value } });

describe('ContainerCreateScreen', () => {
  it('explains what is missing and focuses the first invalid field', async () => {
    render(ContainerCreateScreen);
    expect(screen.getByRole('heading', { level: 1, name: 'New container' })).toBeTruthy();
    await fireEvent.click(screen.getByRole('button', { name: 'Create container' }));
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain('One field needs attention');
    expect(alert.textContent).toContain('Image is required.');
    const image = screen.getByLabelText(/^Image/);
    expect(image.getAttribute('aria-invalid')).toBe('true');
    await waitFor(() => expect(document.activeElement).toBe(image));
    expect(containers.createContainer).not.toHaveBeenCalled();

    // Messages follow the input once shown.
    await input(/^Image/, 'busybox');
    await input('Name', 'bad name');
    expect(screen.getByText("Use letters, digits, '_', '.' and '-', starting with a letter or digit.", { selector: 'p' })).toBeTruthy();
    expect(screen.queryByText('Image is required.')).toBeNull();
  });

  it('sends the form as the server reads it and opens the new container', async () => {
    render(ContainerCreateScreen);
    await waitFor(() => expect(screen.getByRole('option', { name: 'backend' })).toBeTruthy());
    expect(screen.queryByRole('option', { name: 'bridge' })).toBeNull(); // it is the default entry

    await input(/^Image/, 'berth-test/busybox:1');
    await input('Name', 'e2e-x');
    await input('Command', 'sleep 600');
    await fireEvent.click(screen.getByRole('button', { name: 'Add port' }));
    await input('Port 1 host port', '8080');
    await input('Port 1 container port', '80');
    await fireEvent.click(screen.getByRole('button', { name: 'Add variable' }));
    await input('Variable 1 name', 'MODE=test'); // pasted NAME=VALUE splits
    expect((screen.getByLabelText('Variable 1 value') as HTMLInputElement).value).toBe('test');
    await fireEvent.click(screen.getByRole('button', { name: 'Add mount' }));
    await input('Mount 1 volume or host path', 'data');
    await input('Mount 1 path in the container', '/data');
    await fireEvent.change(screen.getByLabelText('Network'), { target: { value: 'backend' } });
    await fireEvent.change(screen.getByLabelText('Restart policy'), { target: { value: 'unless-stopped' } });
    await input('Memory limit', '128');
    await input('CPU limit (CPUs)', '0.5');
    await fireEvent.click(screen.getByRole('button', { name: 'Add label' }));
    await input('Label 1 name', 'berth.test');
    await input('Label 1 value', 'abc');
    await fireEvent.click(screen.getByLabelText('Start after create'));

    await fireEvent.click(screen.getByRole('button', { name: 'Create container' }));
    await waitFor(() => expect(containers.createContainer).toHaveBeenCalled());
    expect(containers.createContainer).toHaveBeenCalledWith(2, {
      name: 'e2e-x',
      image: 'berth-test/busybox:1',
      command: ['sleep', '600'],
      ports: [{ containerPort: '80', hostPort: '8080', protocol: 'tcp' }],
      env: ['MODE=test'],
      labels: { 'berth.test': 'abc' },
      volumes: ['data:/data'],
      networkMode: 'backend',
      restartPolicy: 'unless-stopped',
      memory: 128 * 1024 * 1024,
      nanoCpus: 500_000_000,
      startAfterCreate: false,
    });
    await waitFor(() => expect(location.pathname).toBe('/containers/f00d'));
  });

  it('removes a row', async () => {
    render(ContainerCreateScreen);
    await fireEvent.click(screen.getByRole('button', { name: 'Add label' }));
    await fireEvent.click(screen.getByRole('button', { name: 'Add label' }));
    await input('Label 2 name', 'second');
    await fireEvent.click(screen.getByRole('button', { name: 'Remove label 1' }));
    expect((screen.getByLabelText('Label 1 name') as HTMLInputElement).value).toBe('second');
    expect(screen.queryByLabelText('Label 2 name')).toBeNull();
  });

  it("shows the server's message and the details", async () => {
    vi.mocked(containers.createContainer).mockRejectedValue(
      new ApiError(500, 'Failed to start container', {}, 'created 0123456789abcdef but could not start it: port is already allocated'),
    );
    render(ContainerCreateScreen);
    await input(/^Image/, 'busybox');
    await fireEvent.click(screen.getByRole('button', { name: 'Create container' }));
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain('The container could not be created: Failed to start container');
    expect(alert.textContent).toContain('port is already allocated');
    expect(within(alert).getByRole('link', { name: 'Open the created container' }).getAttribute('href')).toBe(
      '/containers/0123456789abcdef',
    );
    expect(location.pathname).toBe('/containers/new');
  });

  it('says when the networks cannot be listed', async () => {
    vi.mocked(containers.networkNames).mockRejectedValue(new ApiError(403, 'Permission denied'));
    render(ContainerCreateScreen);
    expect((await screen.findByRole('alert')).textContent).toContain('Networks could not be listed: Permission denied');
  });

  it('has no serious or critical axe violations, also with messages shown', async () => {
    const { container } = render(ContainerCreateScreen);
    await fireEvent.click(screen.getByRole('button', { name: 'Add port' }));
    await fireEvent.click(screen.getByRole('button', { name: 'Add variable' }));
    await fireEvent.click(screen.getByRole('button', { name: 'Add mount' }));
    await input('Port 1 container port', 'x');
    await fireEvent.click(screen.getByRole('button', { name: 'Create container' }));
    await screen.findByRole('alert');
    await expectNoSeriousAxeViolations(container);
  });
});
