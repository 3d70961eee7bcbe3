import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../lib/api';
import type * as infra from '../lib/api-infra';
import { queryClient } from '../lib/query';
import { session } from '../lib/session.svelte';
import { stubApi, type StubApi } from '../test-api';
import { expectNoSeriousAxeViolations } from '../test-axe';
import EnvironmentsScreen from './EnvironmentsScreen.svelte';

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

let api: StubApi;
const online = { state: 'online', checkedAt: '2025-01-01T00:00:00Z' };
beforeEach(() => {
  queryClient.clear();
  session.session = { authenticated: true, authEnabled: false };
  session.envId = 1;
  api = stubApi({
    'GET /api/environments': envs,
    'GET /api/environments/1/status': online,
    'GET /api/environments/2/status': { state: 'offline', reason: 'The engine cannot be reached: connection refused', lastReachable: recently(120), checkedAt: recently(0) },
    'GET /api/environments/3/status': { state: 'busy', reason: 'The engine did not answer within 4 s: it is busy, not offline', checkedAt: recently(0) },
    'POST /api/environments/2/test': { success: true, info: { serverVersion: '27.3.1' } },
    'DELETE /api/environments/2': { success: true },
  });
  for (const e of edgeEnvs()) api.routes[`GET /api/environments/${e.id}/status`] = e.agentConnected ? online : { state: 'offline', reason: 'The agent is not connected', checkedAt: recently(0) };
});
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  vi.useRealTimers();
});

const rowOf = (name: string) => screen.getByRole('link', { name }).closest('tr') as HTMLElement;

describe('EnvironmentsScreen', { timeout: 20_000 }, () => {
  it('lists the environments with type, address and each engine\'s state: online, offline with why and since when, busy', async () => {
    const { container } = render(EnvironmentsScreen);
    await screen.findByRole('table');
    expect(within(rowOf('local')).getByText('Local socket')).toBeTruthy();
    expect(within(rowOf('local')).getByText('unix:///var/run/docker.sock')).toBeTruthy();
    await waitFor(() => expect(within(rowOf('local')).getByText('Online')).toBeTruthy());
    await waitFor(() => expect(within(rowOf('edge')).getByText('Offline')).toBeTruthy());
    expect(within(rowOf('edge')).getByText('The engine cannot be reached: connection refused')).toBeTruthy();
    expect(within(rowOf('edge')).getByText('2 min ago')).toBeTruthy();
    expect(within(rowOf('edge')).getByText('https://10.0.0.5:2376 (TLS)')).toBeTruthy();
    expect(within(rowOf('edge')).getByText('prod')).toBeTruthy();
    expect(within(rowOf('remote-agent')).getByText('Agent (standard)')).toBeTruthy();
    expect(within(rowOf('remote-agent')).getByText('agent.lan:7070 (TLS)')).toBeTruthy();
    expect(within(rowOf('remote-agent')).getByText('Not contacted yet')).toBeTruthy();
    expect(within(rowOf('remote-agent')).queryByText('(read-only)')).toBeNull();
    expect(rowOf('edge').querySelector('a')?.getAttribute('href')).toBe('/environments/2');
    await expectNoSeriousAxeViolations(container);
  });

  it('says an engine is busy, and that its state is unknown when it could not be asked', async () => {
    api.routes['GET /api/environments'] = envs.slice(0, 2);
    api.routes['GET /api/environments/1/status'] = { state: 'busy', reason: 'The engine did not answer within 4 s: it is busy, not offline', checkedAt: recently(0) };
    api.routes['GET /api/environments/2/status'] = () => {
      throw new ApiError(403, 'Permission denied');
    };
    render(EnvironmentsScreen);
    await screen.findByRole('table');
    await waitFor(() => expect(within(rowOf('local')).getByText('Busy')).toBeTruthy());
    expect(within(rowOf('local')).getByText(/it is busy, not offline/)).toBeTruthy();
    await waitFor(() => expect(within(rowOf('edge')).getByText('Unknown')).toBeTruthy());
    expect(within(rowOf('edge')).getByText('Permission denied')).toBeTruthy();
  });

  it("shows each edge agent's state, last seen, version, capabilities and last error", async () => {
    api.routes['GET /api/environments'] = edgeEnvs();
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

  it('says when a connected agent\'s engine does not answer', async () => {
    api.routes['GET /api/environments'] = edgeEnvs().slice(0, 1);
    api.routes['GET /api/environments/4/status'] = { state: 'offline', reason: 'The engine cannot be reached: EOF', checkedAt: recently(0) };
    render(EnvironmentsScreen);
    await screen.findByRole('table');
    expect(await within(rowOf('far')).findByText('Engine offline: The engine cannot be reached: EOF')).toBeTruthy();
    expect(within(rowOf('far')).getByText('Connected')).toBeTruthy();
  });

  it("refreshes the agents' status while the page is visible, without asking the engines each time", async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    const list = edgeEnvs();
    api.routes['GET /api/environments'] = structuredClone(list);
    render(EnvironmentsScreen);
    await screen.findByRole('table');
    expect(within(rowOf('issued')).getByText('Waiting for the agent')).toBeTruthy();
    await waitFor(() => expect(api.called('GET /api/environments/7/status')).toHaveLength(1));
    const calls = api.called('GET /api/environments').length;
    list[3] = { ...list[3], agentConnected: true, agentStatus: { connected: true, lastSeen: recently(0), agentName: 'box', agentVersion: '2.0.0' } };
    api.routes['GET /api/environments'] = structuredClone(list);
    await vi.advanceTimersByTimeAsync(5000);
    await waitFor(() => expect(within(rowOf('issued')).getByText('Connected')).toBeTruthy());
    expect(within(rowOf('issued')).getByText('box 2.0.0')).toBeTruthy();
    expect(api.called('GET /api/environments').length).toBe(calls + 1);
    expect(api.called('GET /api/environments/4/status')).toHaveLength(1); // an online engine is not asked again this soon
  });

  it('asks an offline engine again by itself and shows it back online', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    render(EnvironmentsScreen);
    await screen.findByRole('table');
    await waitFor(() => expect(within(rowOf('edge')).getByText('Offline')).toBeTruthy());
    api.routes['GET /api/environments/2/status'] = online;
    await vi.advanceTimersByTimeAsync(10_000);
    await waitFor(() => expect(within(rowOf('edge')).getByText('Online')).toBeTruthy());
  });

  it('tests a connection from the list', async () => {
    api.routes['POST /api/environments/2/test'] = { success: false, error: 'Cannot connect to the engine: refused' };
    render(EnvironmentsScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Test connection of edge' }));
    expect(await within(rowOf('edge')).findByText('Cannot connect to the engine: refused')).toBeTruthy();
    expect(api.called('POST /api/environments/2/test')).toHaveLength(1);
  });

  it('deletes after confirmation and refreshes the switcher', async () => {
    render(EnvironmentsScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Delete edge' }));
    const dialog = screen.getByRole('dialog', { name: 'Delete environment edge?' });
    expect(api.called('DELETE /api/environments/2')).toHaveLength(0);
    const before = api.called('GET /api/environments').length;
    api.routes['GET /api/environments'] = [envs[0], envs[2]];
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Delete' }));
    await waitFor(() => expect(api.called('DELETE /api/environments/2')).toHaveLength(1));
    await waitFor(() => expect(screen.getByRole('status').textContent).toBe('Environment edge deleted.'));
    expect(api.called('GET /api/environments').length).toBeGreaterThan(before);
    expect(session.environments.map((e) => e.name)).toEqual(['local', 'remote-agent']);
    await waitFor(() => expect(screen.queryByRole('link', { name: 'edge' })).toBeNull());
  });

  it('explains a refused delete', async () => {
    api.routes['DELETE /api/environments/2'] = () => {
      throw new ApiError(409, 'Environment is in use by 2 schedules');
    };
    render(EnvironmentsScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Delete edge' }));
    await fireEvent.click(within(screen.getByRole('dialog', { name: 'Delete environment edge?' })).getByRole('button', { name: 'Delete' }));
    expect((await screen.findByRole('alert')).textContent).toBe('Delete edge: Environment is in use by 2 schedules');
  });

  it('shows the list error', async () => {
    api.routes['GET /api/environments'] = () => {
      throw new ApiError(403, 'Permission denied');
    };
    render(EnvironmentsScreen);
    expect((await screen.findByRole('alert')).textContent).toContain('Environments could not be listed: Permission denied');
  });

  it('shows a Viewer the environments with no control that changes them', async () => {
    session.session = { authenticated: true, authEnabled: true, user: { id: 2, username: 'v', isAdmin: false, permissions: { environments: ['view'] } } };
    render(EnvironmentsScreen);
    await screen.findByRole('table');
    expect(screen.getByRole('link', { name: 'View edge' })).toBeTruthy();
    expect(screen.queryByRole('link', { name: 'New environment' })).toBeNull();
    expect(screen.queryByRole('button', { name: /^(Test connection of|Delete) / })).toBeNull();
    expect(screen.queryByRole('link', { name: /^Edit / })).toBeNull();
  });
});
