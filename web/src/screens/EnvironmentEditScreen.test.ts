import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import * as api from '../lib/api';
import * as infra from '../lib/api-infra';
import { router } from '../lib/router.svelte';
import { expectNoSeriousAxeViolations } from '../test-axe';
import EnvironmentEditScreen from './EnvironmentEditScreen.svelte';

vi.mock('../lib/api', async (importOriginal) => {
  const real = await importOriginal<typeof import('../lib/api')>();
  return { ...real, listEnvironments: vi.fn() };
});
vi.mock('../lib/api-infra', async (importOriginal) => {
  const real = await importOriginal<typeof import('../lib/api-infra')>();
  return {
    ...real,
    getEnvironment: vi.fn(),
    createEnvironment: vi.fn(),
    updateEnvironment: vi.fn(),
    deleteEnvironment: vi.fn(),
    testEnvironment: vi.fn(),
    testEnvironmentSettings: vi.fn(),
  };
});

const newRoute = { name: 'environmentNew' as const, params: {}, path: '/environments/new' };
const editRoute = { name: 'environment' as const, params: { id: '2' }, path: '/environments/2' };
const CERT = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
const KEY = '-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n';
const edge: infra.EnvironmentDetail = {
  id: 2,
  name: 'edge',
  connectionType: 'direct',
  host: '10.0.0.5',
  port: 2376,
  protocol: 'https',
  tlsCa: CERT,
  tlsCert: CERT,
  hasTlsKey: true,
  labels: ['prod'],
};

beforeEach(() => {
  vi.mocked(api.listEnvironments).mockResolvedValue([]);
  vi.mocked(infra.getEnvironment).mockResolvedValue(structuredClone(edge));
  vi.mocked(infra.createEnvironment).mockResolvedValue({ id: 7, name: 'second', connectionType: 'socket' });
  vi.mocked(infra.updateEnvironment).mockImplementation(async (id, req) => ({ ...edge, ...req, id }) as infra.EnvironmentDetail);
  vi.mocked(infra.deleteEnvironment).mockResolvedValue({ success: true });
  vi.mocked(infra.testEnvironment).mockResolvedValue({ success: true, info: { serverVersion: '27.3.1', containers: 4, images: 9, name: 'host1' } });
  vi.mocked(infra.testEnvironmentSettings).mockResolvedValue({ success: true, info: { serverVersion: '27.3.1', containers: 1, images: 2 } });
  vi.spyOn(router, 'navigate').mockImplementation(() => {});
});
afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
  vi.clearAllMocks();
});

describe('EnvironmentEditScreen, new', () => {
  it('tests the settings before saving, then creates a socket environment', async () => {
    const { container } = render(EnvironmentEditScreen, { route: newRoute });
    expect(screen.getByRole('heading', { level: 1, name: 'New environment' })).toBeTruthy();
    await fireEvent.click(screen.getByRole('button', { name: 'Test connection' }));
    expect(screen.getByText('Environment name is required')).toBeTruthy();
    expect(infra.testEnvironmentSettings).not.toHaveBeenCalled();

    await fireEvent.input(screen.getByLabelText('Name'), { target: { value: 'second' } });
    expect((screen.getByLabelText('Socket path') as HTMLInputElement).value).toBe('/var/run/docker.sock');
    await fireEvent.click(screen.getByRole('button', { name: 'Test connection' }));
    await waitFor(() =>
      expect(infra.testEnvironmentSettings).toHaveBeenCalledWith({
        name: 'second',
        connectionType: 'socket',
        socketPath: '/var/run/docker.sock',
        labels: [],
        publicIp: '',
      }),
    );
    expect((await screen.findByText(/^Connected/)).textContent).toMatch(
      /^Connected: engine 27.3.1, 1 containers, 2 images./,
    );
    await expectNoSeriousAxeViolations(container);

    await fireEvent.click(screen.getByRole('button', { name: 'Create environment' }));
    await waitFor(() => expect(infra.createEnvironment).toHaveBeenCalled());
    await waitFor(() => expect(router.navigate).toHaveBeenCalledWith('/environments/7', { replace: true }));
    expect(api.listEnvironments).toHaveBeenCalled(); // the switcher is refreshed
  });

  it('shows a failed test as an alert and the server refusal of a save', async () => {
    vi.mocked(infra.testEnvironmentSettings).mockResolvedValueOnce({ success: false, error: 'Cannot connect to the engine: dial unix: no such file' });
    vi.mocked(infra.createEnvironment).mockRejectedValueOnce(new api.ApiError(409, 'An environment with this name already exists'));
    render(EnvironmentEditScreen, { route: newRoute });
    await fireEvent.input(screen.getByLabelText('Name'), { target: { value: 'local' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Test connection' }));
    expect((await screen.findByRole('alert')).textContent).toBe('Connection failed: Cannot connect to the engine: dial unix: no such file');
    await fireEvent.click(screen.getByRole('button', { name: 'Create environment' }));
    await waitFor(() => expect(screen.getByText('An environment with this name already exists')).toBeTruthy());
    expect(router.navigate).not.toHaveBeenCalled();
  });

  it('asks host and port of a direct environment and reads PEM files', async () => {
    render(EnvironmentEditScreen, { route: newRoute });
    await fireEvent.input(screen.getByLabelText('Name'), { target: { value: 'tcp' } });
    await fireEvent.click(screen.getByLabelText(/Direct/));
    await fireEvent.change(screen.getByLabelText('Protocol'), { target: { value: 'https' } });
    await fireEvent.input(screen.getByLabelText('Port'), { target: { value: '2376' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Create environment' }));
    expect(screen.getByText('Host is required for a direct connection')).toBeTruthy();
    await fireEvent.input(screen.getByLabelText('Host'), { target: { value: 'docker.lan' } });

    const file = new File([CERT], 'ca.pem', { type: 'application/x-pem-file' });
    await fireEvent.change(screen.getByLabelText('Load ca certificate from a file'), { target: { files: [file] } });
    await waitFor(() => expect((screen.getByLabelText('CA certificate') as HTMLTextAreaElement).value).toBe(CERT));
    await fireEvent.input(screen.getByLabelText('Client certificate'), { target: { value: CERT } });
    await fireEvent.click(screen.getByRole('button', { name: 'Create environment' }));
    expect(screen.getByText('A client certificate needs its private key')).toBeTruthy();
    await fireEvent.input(screen.getByLabelText('Client key'), { target: { value: KEY } });
    await fireEvent.click(screen.getByRole('button', { name: 'Create environment' }));
    await waitFor(() =>
      expect(infra.createEnvironment).toHaveBeenCalledWith(
        expect.objectContaining({ connectionType: 'direct', host: 'docker.lan', port: 2376, protocol: 'https', tlsCa: CERT, tlsCert: CERT, tlsKey: KEY }),
      ),
    );
  });
});

describe('EnvironmentEditScreen, edit', () => {
  it('never shows the stored key and keeps it unless replaced', async () => {
    const { container } = render(EnvironmentEditScreen, { route: editRoute });
    expect(await screen.findByRole('heading', { level: 1, name: 'edge' })).toBeTruthy();
    expect(infra.getEnvironment).toHaveBeenCalledWith(2);
    expect((screen.getByLabelText('Host') as HTMLInputElement).value).toBe('10.0.0.5');
    expect((screen.getByLabelText('Client key') as HTMLTextAreaElement).value).toBe('');
    expect(screen.getByText(/A key is stored and never shown/)).toBeTruthy();
    expect((screen.getByRole('button', { name: 'Save' }) as HTMLButtonElement).disabled).toBe(true);
    await expectNoSeriousAxeViolations(container);

    // unchanged: the saved environment is tested
    await fireEvent.click(screen.getByRole('button', { name: 'Test connection' }));
    await waitFor(() => expect(infra.testEnvironment).toHaveBeenCalledWith(2));
    expect(await screen.findByText(/^Connected: host1, engine 27.3.1/)).toBeTruthy();

    await fireEvent.input(screen.getByLabelText('Labels'), { target: { value: 'prod\neu' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(infra.updateEnvironment).toHaveBeenCalled());
    const [id, req] = vi.mocked(infra.updateEnvironment).mock.calls[0];
    expect(id).toBe(2);
    expect(req.labels).toEqual(['prod', 'eu']);
    expect('tlsKey' in req).toBe(false);
    await waitFor(() => expect(api.listEnvironments).toHaveBeenCalled());
  });

  it('removes the stored key on request', async () => {
    render(EnvironmentEditScreen, { route: editRoute });
    await screen.findByRole('heading', { level: 1, name: 'edge' });
    await fireEvent.input(screen.getByLabelText('Client certificate'), { target: { value: '' } });
    await fireEvent.click(screen.getByLabelText('Remove the stored key'));
    await fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(infra.updateEnvironment).toHaveBeenCalled());
    expect(vi.mocked(infra.updateEnvironment).mock.calls[0][1]).toMatchObject({ tlsCert: '', tlsKey: '' });
  });

  it('deletes after confirmation', async () => {
    render(EnvironmentEditScreen, { route: editRoute });
    await screen.findByRole('heading', { level: 1, name: 'edge' });
    await fireEvent.click(screen.getByRole('button', { name: 'Delete' }));
    const dialog = screen.getByRole('dialog', { name: 'Delete environment edge?' });
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Delete' }));
    await waitFor(() => expect(infra.deleteEnvironment).toHaveBeenCalledWith(2));
    await waitFor(() => expect(router.navigate).toHaveBeenCalledWith('/environments'));
  });

  it('shows an agent environment read-only', async () => {
    vi.mocked(infra.getEnvironment).mockResolvedValueOnce({ id: 2, name: 'far', connectionType: 'agent-edge', agentName: 'pi', hasAgentToken: true });
    render(EnvironmentEditScreen, { route: editRoute });
    expect(await screen.findByText(/Edge agent/)).toBeTruthy();
    expect(screen.queryByRole('textbox')).toBeNull();
    expect(screen.queryByRole('button', { name: 'Save' })).toBeNull();
  });

  it('says so when the environment does not exist', async () => {
    vi.mocked(infra.getEnvironment).mockRejectedValueOnce(new api.ApiError(404, 'Environment not found'));
    render(EnvironmentEditScreen, { route: editRoute });
    expect((await screen.findByRole('alert')).textContent).toBe('No environment 2.');
  });
});
