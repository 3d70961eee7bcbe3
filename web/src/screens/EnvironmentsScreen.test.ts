import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import * as api from '../lib/api';
import * as infra from '../lib/api-infra';
import { session } from '../lib/session.svelte';
import { expectNoSeriousAxeViolations } from '../test-axe';
import EnvironmentsScreen from './EnvironmentsScreen.svelte';

vi.mock('../lib/api', async (importOriginal) => {
  const real = await importOriginal<typeof import('../lib/api')>();
  return { ...real, dashboardStats: vi.fn(), listEnvironments: vi.fn() };
});
vi.mock('../lib/api-infra', async (importOriginal) => {
  const real = await importOriginal<typeof import('../lib/api-infra')>();
  return { ...real, listEnvironmentDetails: vi.fn(), testEnvironment: vi.fn(), deleteEnvironment: vi.fn() };
});

const envs: infra.EnvironmentDetail[] = [
  { id: 1, name: 'local', connectionType: 'socket', socketPath: '/var/run/docker.sock', labels: [] },
  { id: 2, name: 'edge', connectionType: 'direct', host: '10.0.0.5', port: 2376, protocol: 'https', labels: ['prod'] },
  { id: 3, name: 'remote-agent', connectionType: 'agent-standard', host: 'agent.lan', port: 7070, protocol: 'http', agentConnected: false, agentStatus: { connected: false } },
];

const recently = (s: number) => new Date(Date.now() - s * 1000).toISOString();
const edgeEnvs = (): infra.EnvironmentDetail[] => [
  {
    id: 4,
    name: 'far',
    connectionType: 'agent-edge',
    hasAgentToken: true,
    agentConnected: true,
    agentStatus: {
      connected: true,
      lastSeen: recently(1),
      remoteAddress: '203.0.113.7:40000',
      agentId: 'a1',
      agentName: 'pi',
      agentVersion: '1.4.0',
      agentCapabilities: ['engine', 'exec', 'compose'],
    },
  },
  {
    id: 5,
    name: 'gone',
    connectionType: 'agent-edge',
    hasAgentToken: true,
    agentLastSeen: recently(300),
    agentName: 'nuc',
    agentVersion: '1.3.0',
    agentConnected: false,
    agentStatus: { connected: false, lastError: 'Disconnected: no heartbeat within the heartbeat window', lastErrorAt: recently(290) },
  },
  { id: 6, name: 'fresh', connectionType: 'agent-edge', hasAgentToken: false, agentConnected: false, agentStatus: { connected: false } },
  { id: 7, name: 'issued', connectionType: 'agent-edge', hasAgentToken: true, agentConnected: false, agentStatus: { connected: false } },
];

beforeEach(() => {
  session.session = { authenticated: true, authEnabled: false };
  session.envId = 1;
  vi.mocked(infra.listEnvironmentDetails).mockResolvedValue(structuredClone(envs));
  vi.mocked(api.listEnvironments).mockResolvedValue(envs.map(({ id, name, connectionType }) => ({ id, name, connectionType })));
  vi.mocked(api.dashboardStats).mockResolvedValue([
    { id: 1, name: 'local', online: true },
    { id: 2, name: 'edge', online: false, error: 'connection refused' },
  ]);
  vi.mocked(infra.testEnvironment).mockResolvedValue({ success: true, info: { serverVersion: '27.3.1' } });
  vi.mocked(infra.deleteEnvironment).mockResolvedValue({ success: true });
});
afterEach(() => {
  cleanup();
  vi.clearAllMocks();
  vi.useRealTimers();
});

const rowOf = (name: string) => screen.getByRole('link', { name }).closest('tr') as HTMLElement;

describe('EnvironmentsScreen', () => {
  it('lists the environments with type, address and status', async () => {
    const { container } = render(EnvironmentsScreen);
    await screen.findByRole('table');
    expect(within(rowOf('local')).getByText('Local socket')).toBeTruthy();
    expect(within(rowOf('local')).getByText('unix:///var/run/docker.sock')).toBeTruthy();
    await waitFor(() => expect(within(rowOf('local')).getByText('Online')).toBeTruthy());
    expect(within(rowOf('edge')).getByText('Offline')).toBeTruthy();
    expect(within(rowOf('edge')).getByText('connection refused')).toBeTruthy();
    expect(within(rowOf('edge')).getByText('https://10.0.0.5:2376 (TLS)')).toBeTruthy();
    expect(within(rowOf('edge')).getByText('prod')).toBeTruthy();
    expect(within(rowOf('remote-agent')).getByText('Agent (standard)')).toBeTruthy();
    expect(within(rowOf('remote-agent')).getByText('agent.lan:7070 (TLS)')).toBeTruthy();
    expect(within(rowOf('remote-agent')).getByText('Not contacted yet')).toBeTruthy();
    expect(within(rowOf('remote-agent')).queryByText('(read-only)')).toBeNull();
    expect(rowOf('edge').querySelector('a')?.getAttribute('href')).toBe('/environments/2');
    await expectNoSeriousAxeViolations(container);
  });

  it("shows each edge agent's state, last seen, version, capabilities and last error", async () => {
    vi.mocked(infra.listEnvironmentDetails).mockResolvedValue(edgeEnvs());
    const { container } = render(EnvironmentsScreen);
    await screen.findByRole('table');
    const far = within(rowOf('far'));
    expect(far.getByText('Connected')).toBeTruthy();
    expect(far.getByText('Agent (edge)')).toBeTruthy();
    expect(far.getByText('from 203.0.113.7:40000')).toBeTruthy();
    expect(far.getByText('just now')).toBeTruthy();
    expect(far.getByText('pi 1.4.0')).toBeTruthy();
    expect(far.getByText('engine, exec, compose')).toBeTruthy();
    const gone = within(rowOf('gone'));
    expect(gone.getByText('Disconnected')).toBeTruthy();
    expect(gone.getByText('5 min ago')).toBeTruthy();
    expect(gone.getByText('No heartbeat: Disconnected: no heartbeat within the heartbeat window')).toBeTruthy();
    expect(within(rowOf('fresh')).getByText('No token yet')).toBeTruthy();
    expect(within(rowOf('issued')).getByText('Waiting for the agent')).toBeTruthy();
    await expectNoSeriousAxeViolations(container);
  });

  it("refreshes the agents' status while the page is visible", async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    const list = edgeEnvs();
    vi.mocked(infra.listEnvironmentDetails).mockResolvedValue(structuredClone(list));
    render(EnvironmentsScreen);
    await screen.findByRole('table');
    expect(within(rowOf('issued')).getByText('Waiting for the agent')).toBeTruthy();
    const calls = vi.mocked(infra.listEnvironmentDetails).mock.calls.length;
    list[3] = { ...list[3], agentConnected: true, agentStatus: { connected: true, lastSeen: recently(0), agentName: 'box', agentVersion: '2.0.0' } };
    vi.mocked(infra.listEnvironmentDetails).mockResolvedValue(structuredClone(list));
    await vi.advanceTimersByTimeAsync(5000);
    await waitFor(() => expect(within(rowOf('issued')).getByText('Connected')).toBeTruthy());
    expect(within(rowOf('issued')).getByText('box 2.0.0')).toBeTruthy();
    expect(vi.mocked(infra.listEnvironmentDetails).mock.calls.length).toBe(calls + 1);
    expect(api.dashboardStats).toHaveBeenCalledTimes(1); // the engines are not asked again
  });

  it('tests a connection from the list', async () => {
    vi.mocked(infra.testEnvironment).mockResolvedValueOnce({ success: false, error: 'Cannot connect to the engine: refused' });
    render(EnvironmentsScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Test connection of edge' }));
    expect(await within(rowOf('edge')).findByText('Cannot connect to the engine: refused')).toBeTruthy();
    expect(infra.testEnvironment).toHaveBeenCalledWith(2);
  });

  it('deletes after confirmation and refreshes the switcher', async () => {
    render(EnvironmentsScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Delete edge' }));
    const dialog = screen.getByRole('dialog', { name: 'Delete environment edge?' });
    expect(infra.deleteEnvironment).not.toHaveBeenCalled();
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Delete' }));
    await waitFor(() => expect(infra.deleteEnvironment).toHaveBeenCalledWith(2));
    await waitFor(() => expect(api.listEnvironments).toHaveBeenCalled());
    await waitFor(() => expect(screen.getByRole('status').textContent).toBe('Environment edge deleted.'));
  });

  it('shows the list error', async () => {
    vi.mocked(infra.listEnvironmentDetails).mockRejectedValue(new api.ApiError(403, 'Permission denied'));
    render(EnvironmentsScreen);
    expect((await screen.findByRole('alert')).textContent).toContain('Permission denied');
  });
});
