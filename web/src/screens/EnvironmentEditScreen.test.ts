import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../lib/api';
import type * as infra from '../lib/api-infra';
import { queryClient } from '../lib/query';
import { router } from '../lib/router.svelte';
import { session } from '../lib/session.svelte';
import { expectNoSeriousAxeViolations } from '../test-axe';
import EnvironmentEditScreen from './EnvironmentEditScreen.svelte';
import { settingsRoutes } from '../components/environment/test-routes';
import { stubApi, type StubApi, type StubCall } from '../test-api';

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

const openSecurity: infra.EnvironmentSecurity = {
  allowBindMounts: true,
  allowedBindPaths: [],
  allowPrivileged: true,
  allowHostNetwork: true,
  allowHostPID: true,
  allowHostIPC: true,
  allowDevices: true,
  allowCapAdd: true,
  allowSecurityOpt: true,
  berthHost: false,
};

let api: StubApi;
/** The bodies sent to "METHOD /path". */
const sent = (route: string) => api.called(route).map((c) => c.body as Record<string, unknown>);
const refuse = (status: number, message: string) => () => {
  throw new ApiError(status, message);
};

beforeEach(() => {
  queryClient.clear();
  session.session = { authenticated: true, authEnabled: false };
  api = stubApi({
    ...settingsRoutes(),
    'GET /api/environments': [],
    'GET /api/environments/2': edge,
    'POST /api/environments': { id: 7, name: 'second', connectionType: 'socket' },
    'PUT /api/environments/2': (c: StubCall) => ({ ...edge, ...(c.body as object), id: 2 }),
    'DELETE /api/environments/2': { success: true },
    'POST /api/environments/2/test': { success: true, info: { serverVersion: '27.3.1', containers: 4, images: 9, name: 'host1' } },
    'POST /api/environments/test': { success: true, info: { serverVersion: '27.3.1', containers: 1, images: 2 } },
    'POST /api/environments/2/agent-token': install('bae_first'),
    'GET /api/environments/2/agent-status': { connected: false },
    'GET /api/environments/2/security': openSecurity,
    'PUT /api/environments/2/security': (c: StubCall) => ({ ...(c.body as object), berthHost: false }),
    'GET /api/hawser/tokens': [],
  });
  vi.spyOn(router, 'navigate').mockImplementation(() => {});
});
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
  vi.useRealTimers();
});

function install(token: string): infra.AgentInstall {
  return {
    token,
    serverUrl: 'http://berth.lan:3001',
    command: `berth-agent --server http://berth.lan:3001 --token ${token}`,
    dockerRun: `docker run -d --name berth-agent -e BERTH_SERVER=http://berth.lan:3001 -e BERTH_TOKEN=${token} berth/agent:1.0`,
  };
}

describe('EnvironmentEditScreen, new', () => {
  it('tests the settings before saving, then creates a socket environment', async () => {
    const { container } = render(EnvironmentEditScreen, { route: newRoute });
    expect(screen.getByRole('heading', { level: 1, name: 'New environment' })).toBeTruthy();
    await fireEvent.click(screen.getByRole('button', { name: 'Test connection' }));
    expect(screen.getByText('Environment name is required')).toBeTruthy();
    expect(api.called('POST /api/environments/test')).toHaveLength(0);

    await fireEvent.input(screen.getByLabelText('Name'), { target: { value: 'second' } });
    expect((screen.getByLabelText('Socket path') as HTMLInputElement).value).toBe('/var/run/docker.sock');
    await fireEvent.click(screen.getByRole('button', { name: 'Test connection' }));
    await waitFor(() =>
      expect(sent('POST /api/environments/test')[0]).toEqual({
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
    await waitFor(() => expect(api.called('POST /api/environments').length).toBeGreaterThan(0));
    await waitFor(() => expect(router.navigate).toHaveBeenCalledWith('/environments/7', { replace: true }));
    expect(api.called('GET /api/environments').length).toBeGreaterThan(0); // the switcher is refreshed
  });

  it('shows a failed test as an alert and the server refusal of a save', async () => {
    api.routes['POST /api/environments/test'] = { success: false, error: 'Cannot connect to the engine: dial unix: no such file' };
    api.routes['POST /api/environments'] = refuse(409, 'An environment with this name already exists');
    render(EnvironmentEditScreen, { route: newRoute });
    await fireEvent.input(screen.getByLabelText('Name'), { target: { value: 'local' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Test connection' }));
    expect((await screen.findByRole('alert')).textContent).toBe('Connection failed: Cannot connect to the engine: dial unix: no such file');
    await fireEvent.click(screen.getByRole('button', { name: 'Create environment' }));
    await waitFor(() => expect(screen.getByText('Create: An environment with this name already exists')).toBeTruthy());
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
      expect(sent('POST /api/environments')[0]).toMatchObject({
        connectionType: 'direct',
        host: 'docker.lan',
        port: 2376,
        protocol: 'https',
        tlsCa: CERT,
        tlsCert: CERT,
        tlsKey: KEY,
      }),
    );
  });
});

describe('EnvironmentEditScreen, edit', () => {
  it('never shows the stored key and keeps it unless replaced', async () => {
    const { container } = render(EnvironmentEditScreen, { route: editRoute });
    expect(await screen.findByRole('heading', { level: 1, name: 'edge' })).toBeTruthy();
    expect(api.called('GET /api/environments/2').length).toBeGreaterThan(0);
    expect((screen.getByLabelText('Host') as HTMLInputElement).value).toBe('10.0.0.5');
    expect((screen.getByLabelText('Client key') as HTMLTextAreaElement).value).toBe('');
    expect(screen.getByText(/A key is stored and never shown/)).toBeTruthy();
    expect((screen.getByRole('button', { name: 'Save' }) as HTMLButtonElement).disabled).toBe(true);
    await expectNoSeriousAxeViolations(container);

    // unchanged: the saved environment is tested
    await fireEvent.click(screen.getByRole('button', { name: 'Test connection' }));
    await waitFor(() => expect(api.called('POST /api/environments/2/test').length).toBeGreaterThan(0));
    expect(await screen.findByText(/^Connected: host1, engine 27.3.1/)).toBeTruthy();

    await fireEvent.input(screen.getByLabelText('Labels'), { target: { value: 'prod\neu' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(api.called('PUT /api/environments/2').length).toBeGreaterThan(0));
    const [req] = sent('PUT /api/environments/2');
    expect(req.labels).toEqual(['prod', 'eu']);
    expect('tlsKey' in req).toBe(false);
    await waitFor(() => expect(api.called('GET /api/environments').length).toBeGreaterThan(0));
  });

  it('removes the stored key on request', async () => {
    render(EnvironmentEditScreen, { route: editRoute });
    await screen.findByRole('heading', { level: 1, name: 'edge' });
    await fireEvent.input(screen.getByLabelText('Client certificate'), { target: { value: '' } });
    await fireEvent.click(screen.getByLabelText('Remove the stored key'));
    await fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(api.called('PUT /api/environments/2').length).toBeGreaterThan(0));
    expect(sent('PUT /api/environments/2')[0]).toMatchObject({ tlsCert: '', tlsKey: '' });
  });

  it('deletes after confirmation', async () => {
    render(EnvironmentEditScreen, { route: editRoute });
    await screen.findByRole('heading', { level: 1, name: 'edge' });
    await fireEvent.click(screen.getByRole('button', { name: 'Delete' }));
    const dialog = screen.getByRole('dialog', { name: 'Delete environment edge?' });
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Delete' }));
    await waitFor(() => expect(api.called('DELETE /api/environments/2').length).toBeGreaterThan(0));
    await waitFor(() => expect(router.navigate).toHaveBeenCalledWith('/environments'));
  });

  it('shows an unknown connection type read-only', async () => {
    api.routes['GET /api/environments/2'] = { id: 2, name: 'odd', connectionType: 'carrier-pigeon' };
    render(EnvironmentEditScreen, { route: editRoute });
    expect(await screen.findByText(/carrier-pigeon/)).toBeTruthy();
    expect(screen.queryByRole('textbox')).toBeNull();
    expect(screen.queryByRole('button', { name: 'Save' })).toBeNull();
  });

  it('says so when the environment does not exist', async () => {
    api.routes['GET /api/environments/2'] = refuse(404, 'Environment not found');
    render(EnvironmentEditScreen, { route: editRoute });
    expect((await screen.findByRole('alert')).textContent).toBe('No environment 2.');
  });
});

const farEdge = (e: Partial<infra.EnvironmentDetail> = {}): infra.EnvironmentDetail => ({
  id: 2,
  name: 'far',
  connectionType: 'agent-edge',
  labels: [],
  hasAgentToken: false,
  agentConnected: false,
  agentStatus: { connected: false },
  ...e,
});

describe('EnvironmentEditScreen, agents', () => {
  it('creates an edge environment and shows its install lines once', async () => {
    api.routes['POST /api/environments'] = { id: 2, name: 'far', connectionType: 'agent-edge' };
    const first = render(EnvironmentEditScreen, { route: newRoute });
    await fireEvent.input(screen.getByLabelText('Name'), { target: { value: 'far' } });
    await fireEvent.click(screen.getByLabelText('Agent (edge)'));
    expect(screen.getByText(/dials Berth's agent port/)).toBeTruthy();
    expect(screen.queryByLabelText('Host')).toBeNull();
    expect(screen.queryByRole('button', { name: 'Test connection' })).toBeNull();
    await expectNoSeriousAxeViolations(first.container);
    await fireEvent.click(screen.getByRole('button', { name: 'Create environment' }));
    await waitFor(() => expect(router.navigate).toHaveBeenCalledWith('/environments/2', { replace: true }));
    expect(sent('POST /api/environments')).toEqual([{ name: 'far', connectionType: 'agent-edge', labels: [], publicIp: '' }]);
    expect(api.called('POST /api/environments/2/agent-token').length).toBeGreaterThan(0);
    first.unmount();

    // The environment's page (mounted anew by the router) shows the lines.
    api.routes['GET /api/environments/2'] = farEdge({ hasAgentToken: true });
    const page = render(EnvironmentEditScreen, { route: editRoute });
    const region = await screen.findByRole('region', { name: 'Install the agent' });
    expect((within(region).getByLabelText('Token') as HTMLInputElement).value).toBe('bae_first');
    expect((within(region).getByLabelText('Server URL') as HTMLInputElement).value).toBe('http://berth.lan:3001');
    expect(within(region).getByText(install('bae_first').command)).toBeTruthy();
    expect(within(region).getByText(install('bae_first').dockerRun)).toBeTruthy();
    expect(within(region).getByRole('button', { name: 'Copy the docker run line' })).toBeTruthy();
    expect(within(region).getByRole('button', { name: 'Copy the command' })).toBeTruthy();
    expect(screen.getByText('Waiting for the agent')).toBeTruthy();
    await expectNoSeriousAxeViolations(page.container);
    await fireEvent.click(screen.getByRole('button', { name: 'Done: hide the token' }));
    expect(screen.queryByRole('region', { name: 'Install the agent' })).toBeNull();
    expect(page.container.innerHTML).not.toContain('bae_first');
    page.unmount();

    // Never again.
    const again = render(EnvironmentEditScreen, { route: editRoute });
    await screen.findByRole('heading', { level: 1, name: 'far' });
    expect(again.container.innerHTML).not.toContain('bae_first');
    expect(screen.queryByRole('region', { name: 'Install the agent' })).toBeNull();
  });

  it('says so when the token of a new edge environment cannot be issued', async () => {
    api.routes['POST /api/environments'] = { id: 2, name: 'far', connectionType: 'agent-edge' };
    api.routes['POST /api/environments/2/agent-token'] = refuse(400, 'The edge agent port is turned off (AGENT_PORT=0)');
    const first = render(EnvironmentEditScreen, { route: newRoute });
    await fireEvent.input(screen.getByLabelText('Name'), { target: { value: 'far' } });
    await fireEvent.click(screen.getByLabelText('Agent (edge)'));
    await fireEvent.click(screen.getByRole('button', { name: 'Create environment' }));
    await waitFor(() => expect(router.navigate).toHaveBeenCalled());
    first.unmount();
    api.routes['GET /api/environments/2'] = farEdge();
    render(EnvironmentEditScreen, { route: editRoute });
    expect((await screen.findByRole('alert')).textContent).toBe(
      'The environment is created, but its token could not be issued: The edge agent port is turned off (AGENT_PORT=0)',
    );
    expect(screen.getByText('No token yet')).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Generate install lines' })).toBeTruthy();
  });

  it('generates the first token at once and a new one only after confirmation', async () => {
    api.routes['GET /api/environments/2'] = farEdge();
    render(EnvironmentEditScreen, { route: editRoute });
    await screen.findByText('No token yet');
    api.routes['GET /api/environments/2'] = farEdge({ hasAgentToken: true });
    await fireEvent.click(screen.getByRole('button', { name: 'Generate install lines' }));
    const region = await screen.findByRole('region', { name: 'Install the agent' });
    expect((within(region).getByLabelText('Token') as HTMLInputElement).value).toBe('bae_first');
    await waitFor(() => expect(screen.getByText('Waiting for the agent')).toBeTruthy());

    api.routes['POST /api/environments/2/agent-token'] = install('bae_second');
    await fireEvent.click(screen.getByRole('button', { name: 'Generate a new token' }));
    let dialog = screen.getByRole('dialog', { name: 'Generate a new token for far?' });
    expect(dialog.textContent).toMatch(/current token stops working at once/);
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Cancel' }));
    expect(api.called('POST /api/environments/2/agent-token')).toHaveLength(1);

    await fireEvent.click(screen.getByRole('button', { name: 'Generate a new token' }));
    dialog = screen.getByRole('dialog', { name: 'Generate a new token for far?' });
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Generate a new token' }));
    await waitFor(() => expect((screen.getByLabelText('Token') as HTMLInputElement).value).toBe('bae_second'));
    expect(api.called('POST /api/environments/2/agent-token')).toHaveLength(2);
  });

  it("shows the server's refusal to issue a token", async () => {
    api.routes['GET /api/environments/2'] = farEdge();
    api.routes['POST /api/environments/2/agent-token'] = refuse(403, 'Permission denied');
    render(EnvironmentEditScreen, { route: editRoute });
    await fireEvent.click(await screen.findByRole('button', { name: 'Generate install lines' }));
    expect((await screen.findByRole('alert')).textContent).toBe('The token could not be issued: Permission denied');
  });

  it('polls the status: connected with its facts, then disconnected with the last error', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    api.routes['GET /api/environments/2'] = farEdge({ hasAgentToken: true });
    const { container } = render(EnvironmentEditScreen, { route: editRoute });
    const region = await screen.findByRole('region', { name: 'Agent' });
    expect(within(region).getByText('Waiting for the agent')).toBeTruthy();

    const connected: infra.AgentStatus = {
      connected: true,
      connectedSince: new Date(Date.now() - 60_000).toISOString(),
      lastSeen: new Date().toISOString(),
      remoteAddress: '203.0.113.7:40000',
      agentId: 'a1',
      agentName: 'pi',
      agentVersion: '1.4.0',
      agentCapabilities: ['engine', 'exec', 'compose', 'metrics'],
    };
    api.routes['GET /api/environments/2/agent-status'] = connected;
    api.routes['GET /api/environments/2'] = farEdge({ hasAgentToken: true, agentConnected: true, agentStatus: connected, agentId: 'a1', agentName: 'pi', agentVersion: '1.4.0' });
    await vi.advanceTimersByTimeAsync(4000);
    await waitFor(() => expect(within(region).getByText('Connected')).toBeTruthy());
    expect(api.called('GET /api/environments/2/agent-status').length).toBeGreaterThan(0);
    expect(within(region).getByText('1.4.0')).toBeTruthy();
    expect(within(region).getByText('203.0.113.7:40000')).toBeTruthy();
    expect(within(region).getByText('1 min ago')).toBeTruthy();
    for (const c of ['engine', 'exec', 'compose', 'metrics']) expect(within(region).getByText(c)).toBeTruthy();
    expect(within(region).getByText('The agent is connected.').getAttribute('role')).toBe('status'); // announced
    await expectNoSeriousAxeViolations(container);

    const lastSeen = new Date(Date.now() - 20_000).toISOString();
    const lost: infra.AgentStatus = {
      connected: false,
      lastError: 'Disconnected: the edge token was rotated: this connection\'s token is no longer valid',
      lastErrorAt: new Date().toISOString(),
    };
    api.routes['GET /api/environments/2/agent-status'] = lost;
    api.routes['GET /api/environments/2'] = farEdge({ hasAgentToken: true, agentStatus: lost, agentId: 'a1', agentName: 'pi', agentVersion: '1.4.0', agentLastSeen: lastSeen });
    await vi.advanceTimersByTimeAsync(4000);
    await waitFor(() => expect(within(region).getByText('Disconnected')).toBeTruthy());
    expect(within(region).getByText('Token rotated')).toBeTruthy();
    expect(within(region).getByText(lost.lastError!)).toBeTruthy();
    expect(within(region).getByText(/^2\d s ago$/)).toBeTruthy(); // last seen, from the stored time
    expect(within(region).getByText('1.4.0')).toBeTruthy(); // the stored facts stay
  });

  it('says a failed status poll is retried, and recovers by itself', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    api.routes['GET /api/environments/2'] = farEdge({ hasAgentToken: true });
    api.routes['GET /api/environments/2/agent-status'] = () => {
      throw new TypeError('Failed to fetch'); // the server does not answer
    };
    render(EnvironmentEditScreen, { route: editRoute });
    await screen.findByRole('region', { name: 'Agent' });
    await vi.advanceTimersByTimeAsync(4000);
    // asked again with back-off, and said so
    expect((await screen.findByText("The agent's status could not be refreshed: Cannot reach the Berth server. Retrying…")).getAttribute('role')).toBe('status');
    // and recovers by itself once the server answers
    api.routes['GET /api/environments/2/agent-status'] = { connected: true, agentName: 'pi', agentVersion: '1.4.0' };
    await vi.advanceTimersByTimeAsync(16_000);
    const region = screen.getByRole('region', { name: 'Agent' });
    await waitFor(() => expect(within(region).getByText('Connected')).toBeTruthy());
    expect(within(region).queryByText(/could not be refreshed/)).toBeNull();
  });

  it('reaches the failed state with Retry once the retries of an unreachable status ran out, and Retry recovers', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    api.routes['GET /api/environments/2'] = farEdge({ hasAgentToken: true });
    api.routes['GET /api/environments/2/agent-status'] = () => {
      throw new ApiError(502, 'The agent cannot be reached');
    };
    render(EnvironmentEditScreen, { route: editRoute });
    const region = await screen.findByRole('region', { name: 'Agent' });
    // 1 + 2 + 4 + 8 s of back-off, then the polls (every 4 s) must not start it all over again
    await vi.advanceTimersByTimeAsync(40_000);
    const failed = await within(region).findByRole('alert');
    expect(failed.textContent).toContain("The agent's status could not be refreshed: The agent cannot be reached");
    const asked = api.called('GET /api/environments/2/agent-status').length;
    expect(asked).toBe(5); // the first try and 4 retries
    await vi.advanceTimersByTimeAsync(20_000);
    expect(api.called('GET /api/environments/2/agent-status')).toHaveLength(asked); // no more polls while failed
    const retry = within(failed).getByRole('button', { name: 'Retry' });
    expect((retry as HTMLButtonElement).disabled).toBe(false);

    api.routes['GET /api/environments/2/agent-status'] = { connected: true, agentName: 'pi', agentVersion: '1.4.0' };
    await fireEvent.click(retry);
    await waitFor(() => expect(within(region).getByText('Connected')).toBeTruthy());
    expect(within(region).queryByRole('alert')).toBeNull();
    await vi.advanceTimersByTimeAsync(8_000);
    expect(api.called('GET /api/environments/2/agent-status').length).toBeGreaterThan(asked + 1); // polled again
  });

  it('creates a standard agent environment with its token and pinned certificate', async () => {
    api.routes['POST /api/environments'] = { id: 9, name: 'lan', connectionType: 'agent-standard' };
    render(EnvironmentEditScreen, { route: newRoute });
    await fireEvent.input(screen.getByLabelText('Name'), { target: { value: 'lan' } });
    await fireEvent.click(screen.getByLabelText('Agent (standard)'));
    expect(screen.getByText(/Berth dials it over TLS/)).toBeTruthy();
    expect((screen.getByLabelText('Port') as HTMLInputElement).value).toBe('2376');
    expect(screen.queryByLabelText('Protocol')).toBeNull();
    await fireEvent.click(screen.getByRole('button', { name: 'Create environment' }));
    expect(screen.getByText('Host is required for a standard agent')).toBeTruthy();
    expect(screen.getByText(/The agent token is required/)).toBeTruthy();
    expect(screen.getByText("Paste the agent's certificate, or skip verification")).toBeTruthy();
    expect(api.called('POST /api/environments')).toHaveLength(0);

    await fireEvent.input(screen.getByLabelText('Host'), { target: { value: 'agent.lan' } });
    const token = screen.getByLabelText('Agent token') as HTMLInputElement;
    expect(token.type).toBe('password');
    await fireEvent.click(screen.getByRole('button', { name: 'Generate' }));
    expect(token.value).toMatch(/^[0-9a-f]{48}$/);
    expect(token.type).toBe('text');
    expect(screen.getByText(`berth-agent --listen :2376 --token ${token.value}`)).toBeTruthy();
    await fireEvent.input(screen.getByLabelText("Agent's certificate"), { target: { value: CERT } });

    await fireEvent.click(screen.getByRole('button', { name: 'Test connection' }));
    await waitFor(() => expect(api.called('POST /api/environments/test').length).toBeGreaterThan(0));
    expect(sent('POST /api/environments/test')[0]).toMatchObject({ connectionType: 'agent-standard', agentToken: token.value, tlsCa: CERT });
    await fireEvent.click(screen.getByRole('button', { name: 'Create environment' }));
    await waitFor(() => expect(api.called('POST /api/environments').length).toBeGreaterThan(0));
    const [req] = sent('POST /api/environments');
    expect(req).toMatchObject({ connectionType: 'agent-standard', host: 'agent.lan', port: 2376, agentToken: token.value, tlsCa: CERT, tlsSkipVerify: false });
    expect('protocol' in req).toBe(false);
    expect(api.called('POST /api/environments/2/agent-token')).toHaveLength(0);
  });

  it("keeps a standard agent's stored token and tests the saved settings with it", async () => {
    const saved: infra.EnvironmentDetail = {
      id: 2,
      name: 'lan',
      connectionType: 'agent-standard',
      host: 'agent.lan',
      port: 2376,
      tlsCa: CERT,
      hasAgentToken: true,
      agentConnected: true,
      agentStatus: { connected: true, lastSeen: new Date().toISOString() },
      agentVersion: '1.4.0',
      agentCapabilities: ['exec'],
      labels: [],
    };
    api.routes['GET /api/environments/2'] = saved;
    api.routes['POST /api/environments/2/test'] = {
      success: true,
      info: { serverVersion: '27.3.1', containers: 1, images: 2, name: 'lanhost', agent: { id: 'a', name: 'lanhost', version: '1.4.0' } },
    };
    render(EnvironmentEditScreen, { route: editRoute });
    const region = await screen.findByRole('region', { name: 'Agent' });
    expect(within(region).getByText('Connected')).toBeTruthy();
    expect(within(region).getByText('agent.lan:2376')).toBeTruthy();
    expect(within(region).queryByRole('button', { name: /token/ })).toBeNull(); // edge only
    expect(screen.getByText(/A token is stored/)).toBeTruthy();
    await fireEvent.input(screen.getByLabelText('Labels'), { target: { value: 'lab' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Test connection' }));
    await waitFor(() => expect(api.called('POST /api/environments/2/test').length).toBeGreaterThan(0));
    expect(await screen.findByText(/^Connected \(the saved settings: save to test the changes with the stored token\): lanhost, engine 27.3.1.* Agent lanhost 1.4.0\.$/)).toBeTruthy();
    await fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(api.called('PUT /api/environments/2').length).toBeGreaterThan(0));
    expect('agentToken' in sent('PUT /api/environments/2')[0]).toBe(false);
  });
});

describe('EnvironmentEditScreen, security settings', () => {
  afterEach(() => {
    session.session = null;
  });

  it('lets an admin turn off bind mounts and list allowed directories', async () => {
    session.session = { authenticated: true, authEnabled: true, user: { id: 1, username: 'root', isAdmin: true } };
    render(EnvironmentEditScreen, { route: editRoute });
    const section = await screen.findByRole('region', { name: 'Security' });
    const binds = await within(section).findByRole('checkbox', { name: /Bind mounts/ });
    expect((binds as HTMLInputElement).checked).toBe(true);
    await fireEvent.input(within(section).getByLabelText('Allowed directories for bind mounts'), { target: { value: 'srv/data' } });
    await fireEvent.click(within(section).getByRole('button', { name: 'Save security settings' }));
    expect(within(section).getByRole('alert').textContent).toContain('srv/data is not an absolute path');
    expect(api.called('PUT /api/environments/2/security')).toHaveLength(0);

    await fireEvent.input(within(section).getByLabelText('Allowed directories for bind mounts'), { target: { value: '/srv/data\n\n/opt/apps ' } });
    await fireEvent.click(within(section).getByRole('checkbox', { name: /Privileged mode/ }));
    await fireEvent.click(within(section).getByRole('button', { name: 'Save security settings' }));
    await waitFor(() => expect(api.called('PUT /api/environments/2/security').length).toBeGreaterThan(0));
    const [body] = sent('PUT /api/environments/2/security');
    expect(body.allowPrivileged).toBe(false);
    expect(body.allowBindMounts).toBe(true);
    expect(body.allowedBindPaths).toEqual(['/srv/data', '/opt/apps']);
    expect('berthHost' in body).toBe(false);
    expect((await within(section).findByRole('status')).textContent).toBe('Security settings saved.');
  });

  it('shows the settings read-only to a non-admin, with the rule of Berth\'s own host', async () => {
    session.session = { authenticated: true, authEnabled: true, user: { id: 2, username: 'olga', isAdmin: false } };
    api.routes['GET /api/environments/2/security'] = { ...openSecurity, allowBindMounts: false, berthHost: true };
    render(EnvironmentEditScreen, { route: editRoute });
    const section = await screen.findByRole('region', { name: 'Security' });
    const binds = (await within(section).findByRole('checkbox', { name: /Bind mounts/ })) as HTMLInputElement;
    expect(binds.checked).toBe(false);
    expect(binds.matches(':disabled')).toBe(true);
    expect(within(section).queryByRole('button', { name: 'Save security settings' })).toBeNull();
    expect(within(section).getByText(/Only administrators change these settings/)).toBeTruthy();
    expect(within(section).getByText(/Berth's data directory/)).toBeTruthy();
  });
});

describe('EnvironmentEditScreen, Hawser (compatibility)', () => {
  const hawserToken: infra.HawserToken = {
    token: 'hw_0123456789abcdef0123456789abcdef',
    tokenId: 5,
    message: 'Token generated successfully. Save this token - it will not be shown again.',
    serverUrl: 'ws://berth.lan/api/hawser/connect',
    command: 'hawser --server ws://berth.lan/api/hawser/connect --token hw_0123456789abcdef0123456789abcdef',
  };
  const listed = (over: Partial<infra.HawserTokenInfo> = {}): infra.HawserTokenInfo => ({
    id: 5,
    tokenPrefix: 'hw_01234',
    name: 'far',
    environmentId: 2,
    isActive: true,
    lastUsed: null,
    createdAt: '2026-11-27T10:00:00Z',
    expiresAt: null,
    ...over,
  });
  const hawserEdge = (over: Partial<infra.EnvironmentDetail> = {}): infra.EnvironmentDetail => ({
    id: 2,
    name: 'far',
    connectionType: 'hawser-edge',
    labels: [],
    agentConnected: false,
    ...over,
  });

  afterEach(() => {
    session.session = null;
  });

  it('offers both Hawser kinds, marked as compatibility; a standard one sends host, port, protocol and token', async () => {
    api.routes['POST /api/environments'] = { id: 3, name: 'old', connectionType: 'hawser-standard' };
    render(EnvironmentEditScreen, { route: newRoute });
    expect(screen.getByLabelText('Hawser (edge) — compatibility')).toBeTruthy();
    await fireEvent.input(screen.getByLabelText('Name'), { target: { value: 'old' } });
    await fireEvent.click(screen.getByLabelText('Hawser (standard) — compatibility'));
    expect(screen.getByText(/calls its Docker API with the agent's token \(X-Hawser-Token\)/)).toBeTruthy();
    await fireEvent.input(screen.getByLabelText('Host'), { target: { value: '10.0.0.9' } });
    await fireEvent.input(screen.getByLabelText('Hawser token'), { target: { value: 'secret-token' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Create environment' }));
    await waitFor(() => expect(api.called('POST /api/environments').length).toBeGreaterThan(0));
    expect(sent('POST /api/environments')[0]).toMatchObject({
      name: 'old',
      connectionType: 'hawser-standard',
      host: '10.0.0.9',
      protocol: 'http',
      agentToken: 'secret-token',
    });
    expect(api.called('POST /api/hawser/tokens')).toHaveLength(0);
  });

  it('creates an edge environment, shows its token once, lists and revokes tokens', async () => {
    api.routes['POST /api/environments'] = { id: 2, name: 'far', connectionType: 'hawser-edge' };
    api.routes['POST /api/hawser/tokens'] = hawserToken;
    const first = render(EnvironmentEditScreen, { route: newRoute });
    await fireEvent.input(screen.getByLabelText('Name'), { target: { value: 'far' } });
    await fireEvent.click(screen.getByLabelText('Hawser (edge) — compatibility'));
    expect(screen.queryByLabelText('Host')).toBeNull();
    expect(screen.queryByRole('button', { name: 'Test connection' })).toBeNull();
    await fireEvent.click(screen.getByRole('button', { name: 'Create environment' }));
    await waitFor(() => expect(router.navigate).toHaveBeenCalledWith('/environments/2', { replace: true }));
    expect(sent('POST /api/environments')).toEqual([{ name: 'far', connectionType: 'hawser-edge', labels: [], publicIp: '' }]);
    expect(sent('POST /api/hawser/tokens')).toEqual([{ name: 'far', environmentId: 2 }]);
    first.unmount();

    api.routes['GET /api/environments/2'] = hawserEdge();
    api.routes['GET /api/hawser/tokens'] = [listed(), listed({ id: 9, environmentId: 4, tokenPrefix: 'hw_other' })];
    const page = render(EnvironmentEditScreen, { route: editRoute });
    const region = await screen.findByRole('region', { name: 'Connect the agent' });
    expect((within(region).getByLabelText('Token') as HTMLInputElement).value).toBe(hawserToken.token);
    expect(within(region).getByText(hawserToken.command)).toBeTruthy();
    expect(screen.getByText('Agent not connected')).toBeTruthy();
    const tokens = await screen.findByRole('table', { name: 'Tokens' });
    expect(within(tokens).getByText('hw_01234…')).toBeTruthy();
    expect(within(tokens).queryByText('hw_other…')).toBeNull(); // another environment's
    await expectNoSeriousAxeViolations(page.container);
    await fireEvent.click(screen.getByRole('button', { name: 'Done: hide the token' }));
    expect(page.container.innerHTML).not.toContain(hawserToken.token);

    api.routes['DELETE /api/hawser/tokens'] = { success: true, message: 'Token revoked' };
    api.routes['GET /api/hawser/tokens'] = [listed({ isActive: false })];
    await fireEvent.click(within(tokens).getByRole('button', { name: 'Revoke token hw_01234' }));
    const dialog = screen.getByRole('dialog', { name: 'Revoke token hw_01234…?' });
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Revoke' }));
    await waitFor(() => expect(api.called('DELETE /api/hawser/tokens').map((c) => c.query)).toEqual([{ id: '5' }]));
    await screen.findByText('revoked');
    expect(screen.getByText(/no active token/)).toBeTruthy();
    page.unmount();

    // Never shown again.
    const again = render(EnvironmentEditScreen, { route: editRoute });
    await screen.findByRole('heading', { level: 1, name: 'far' });
    expect(again.container.innerHTML).not.toContain(hawserToken.token);
  });

  it('shows a viewer the environment and its tokens without any control that changes them', async () => {
    session.session = {
      authenticated: true,
      authEnabled: true,
      user: { id: 3, username: 'vera', isAdmin: false, permissions: { environments: ['view'] } },
    };
    api.routes['GET /api/environments/2'] = hawserEdge();
    api.routes['GET /api/hawser/tokens'] = [listed()];
    render(EnvironmentEditScreen, { route: editRoute });
    await screen.findByText('You may view this environment, not change it.');
    await screen.findByRole('table', { name: 'Tokens' });
    expect(screen.getByText('Agent not connected')).toBeTruthy();
    for (const name of ['Save', 'Delete', 'Generate a new token', 'Revoke token hw_01234', 'Test connection']) {
      expect(screen.queryByRole('button', { name })).toBeNull();
    }
    expect(screen.queryByLabelText('Name')).toBeNull();
  });
});
