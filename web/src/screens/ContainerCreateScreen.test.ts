import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../lib/api';
import { queryClient } from '../lib/query';
import { router } from '../lib/router.svelte';
import { session } from '../lib/session.svelte';
import { stubApi, type StubApi } from '../test-api';
import { expectNoSeriousAxeViolations } from '../test-axe';
import ContainerCreateScreen from './ContainerCreateScreen.svelte';

// The form is large: rendering it takes seconds on a shared machine.
vi.setConfig({ testTimeout: 30_000 });

let api: StubApi;

const sse = (events: [string, unknown][]) =>
  new Response(events.map(([e, d]) => `event: ${e}\ndata: ${JSON.stringify(d)}\n\n`).join(''), {
    status: 200,
    headers: { 'Content-Type': 'text/event-stream' },
  });

const inspected = {
  Id: 'abc123abc123' + '0'.repeat(52),
  Name: '/web',
  Image: 'sha256:1',
  Config: {
    Image: 'busybox:latest',
    Cmd: ['sleep', '600'],
    Env: ['MODE=old', 'PATH=/bin'],
    Labels: { team: 'web', 'org.opencontainers.image.title': 'busybox' },
    Hostname: 'abc123abc123',
    WorkingDir: '/srv',
    Healthcheck: { Test: ['CMD-SHELL', 'true'], Interval: 5e9, Retries: 2 },
  },
  HostConfig: {
    NetworkMode: 'bridge',
    PortBindings: { '80/tcp': [{ HostIp: '', HostPort: '8080' }] },
    RestartPolicy: { Name: 'on-failure', MaximumRetryCount: 3 },
    Memory: 64 * 1024 * 1024,
    CapAdd: ['CAP_NET_ADMIN'],
    Dns: ['1.1.1.1'],
  },
  Mounts: [
    { Type: 'volume', Name: 'data', Destination: '/data', RW: true },
    { Type: 'volume', Name: 'f'.repeat(64), Destination: '/anon', RW: true },
  ],
};

beforeEach(() => {
  queryClient.clear();
  session.environments = [{ id: 2, name: 'edge', connectionType: 'socket' }];
  session.envId = 2;
  session.session = { authenticated: false, authEnabled: false };
  router.navigate('/containers/new', { replace: true });
  api = stubApi({
    'GET /api/networks': [{ name: 'bridge' }, { name: 'host' }, { name: 'backend' }],
    'GET /api/volumes': [{ name: 'data' }],
    'GET /api/images': [{ Id: 'sha256:1', RepoTags: ['busybox:latest', 'berth-test/busybox:1'] }],
    'GET /api/registries': [{ id: 7, name: 'team', url: 'https://reg.example:5000', isDefault: false }],
    'GET /api/registry/catalog': { repositories: [{ name: 'apps/web' }], pagination: { pageSize: 100, hasMore: false } },
    'GET /api/config-sets': [],
    'POST /api/containers': { success: true, id: 'f00d' },
    'POST /api/images/pull': { jobId: 'j1' },
    'GET /api/jobs/j1': () =>
      sse([
        ['progress', { status: 'Downloading', id: 'l1', progressDetail: { current: 5, total: 10 } }],
        ['result', { status: 'complete' }],
      ]),
    'GET /api/containers/web': inspected,
    // The image's own variable and label: not copied into the form.
    'GET /api/images/sha256:1': { Id: 'sha256:1', Config: { Env: ['PATH=/bin'], Labels: { 'org.opencontainers.image.title': 'busybox' } } },
    'POST /api/containers/web/update': { success: true, id: 'beef'.repeat(16), recreated: true },
  });
});
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
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
    const image = screen.getByRole('combobox', { name: /^Image/ });
    expect(image.getAttribute('aria-invalid')).toBe('true');
    await waitFor(() => expect(document.activeElement).toBe(image));
    expect(api.called('POST /api/containers')).toHaveLength(0);

    // Messages follow the input once shown.
    await input(/^Image/, 'busybox');
    await input('Name', 'bad name');
    expect(screen.getByText("Use letters, digits, '_', '.' and '-', starting with a letter or digit.", { selector: 'p' })).toBeTruthy();
    expect(screen.queryByText('Image is required.')).toBeNull();
  });

  it('sends the form as the server reads it, without a pull when the engine has the image, and opens the new container', async () => {
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
    await fireEvent.change(screen.getByLabelText('Restart policy'), { target: { value: 'on-failure' } });
    await input('Maximum retries', '4');
    await input('Memory limit', '128');
    await input('CPU limit (CPUs)', '0.5');
    await fireEvent.click(screen.getByRole('button', { name: 'Add label' }));
    await input('Label 1 name', 'berth.test');
    await input('Label 1 value', 'abc');
    // The advanced options.
    await input('Entrypoint', '/bin/sh -c');
    await input('Working directory', '/srv');
    await input('User', '1000:1000');
    await input('Hostname', 'box');
    await input('Add capabilities', 'net_admin, SYS_TIME');
    await input('Drop capabilities', 'MKNOD');
    await fireEvent.click(screen.getByLabelText(/^Privileged/));
    await fireEvent.click(screen.getByRole('button', { name: 'Add device' }));
    await input('Device 1 host path', '/dev/null');
    await input('DNS servers', '1.1.1.1 9.9.9.9');
    await input('DNS search domains', 'example.internal');
    await input('DNS options', 'ndots:2');
    await input('Network aliases', 'web primary');
    await fireEvent.change(screen.getByLabelText('Health check'), { target: { value: 'custom' } });
    await input('Health check command', 'test -f /tmp/ok');
    await input('Interval (seconds)', '5');
    await input('Retries', '2');
    await input('Log driver', 'local');
    await fireEvent.click(screen.getByRole('button', { name: 'Add log option' }));
    await input('Log option 1 name', 'max-size');
    await input('Log option 1 value', '1m');
    await input('Process limit', '100');
    await fireEvent.click(screen.getByLabelText('Start after create'));

    await fireEvent.click(screen.getByRole('button', { name: 'Create container' }));
    await waitFor(() => expect(api.called('POST /api/containers')).toHaveLength(1));
    expect(api.called('POST /api/images/pull')).toHaveLength(0);
    const call = api.called('POST /api/containers')[0];
    expect(call.query).toEqual({ env: '2' });
    expect(call.body).toEqual({
      name: 'e2e-x',
      image: 'berth-test/busybox:1',
      command: ['sleep', '600'],
      ports: [{ containerPort: '80', hostPort: '8080', protocol: 'tcp' }],
      env: ['MODE=test'],
      labels: { 'berth.test': 'abc' },
      volumes: ['data:/data'],
      networkMode: 'backend',
      restartPolicy: 'on-failure:4',
      memory: 128 * 1024 * 1024,
      nanoCpus: 500_000_000,
      startAfterCreate: false,
      entrypoint: ['/bin/sh', '-c'],
      workingDir: '/srv',
      user: '1000:1000',
      hostname: 'box',
      networkAliases: ['web', 'primary'],
      pidsLimit: 100,
      capAdd: ['CAP_NET_ADMIN', 'CAP_SYS_TIME'],
      capDrop: ['CAP_MKNOD'],
      privileged: true,
      devices: [{ hostPath: '/dev/null', containerPath: '/dev/null', permissions: 'rwm' }],
      dns: ['1.1.1.1', '9.9.9.9'],
      dnsSearch: ['example.internal'],
      dnsOptions: ['ndots:2'],
      healthcheck: { test: ['CMD-SHELL', 'test -f /tmp/ok'], interval: 5e9, retries: 2 },
      logDriver: 'local',
      logOptions: { 'max-size': '1m' },
    });
    await waitFor(() => expect(location.pathname).toBe('/containers/f00d'));
  }, 30_000);

  it('pulls an image the engine lacks first, with its progress, then creates', async () => {
    let created: () => void = () => {};
    const done = new Promise<void>((r) => (created = r));
    api.routes['POST /api/containers'] = async () => {
      await done;
      return { success: true, id: 'f00d' };
    };
    render(ContainerCreateScreen);
    await input(/^Image/, 'nginx:1.27');
    await fireEvent.click(screen.getByRole('button', { name: 'Create container' }));
    expect((await screen.findAllByText('Pull complete')).length).toBeGreaterThan(0);
    expect(api.called('POST /api/images/pull')[0].body).toEqual({ image: 'nginx:1.27', scanAfterPull: false });
    await waitFor(() => expect(api.called('POST /api/containers')).toHaveLength(1));
    created();
    await waitFor(() => expect(location.pathname).toBe('/containers/f00d'));
  });

  it('refuses before creating when the policy is never and the engine lacks the image; says why a pull failed', async () => {
    render(ContainerCreateScreen);
    await input(/^Image/, 'nginx:1.27');
    await fireEvent.change(screen.getByLabelText('Pull the image'), { target: { value: 'never' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Create container' }));
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain('The image nginx:1.27 is not on this engine and the pull policy is “never”');
    expect(api.called('POST /api/images/pull')).toHaveLength(0);
    expect(api.called('POST /api/containers')).toHaveLength(0);

    api.routes['GET /api/jobs/j1'] = () => sse([['result', { status: 'error', error: 'manifest unknown' }]]);
    await fireEvent.change(screen.getByLabelText('Pull the image'), { target: { value: 'always' } });
    await input(/^Image/, 'busybox'); // on the engine, but "always" pulls
    await fireEvent.click(screen.getByRole('button', { name: 'Create container' }));
    await waitFor(() =>
      expect(screen.getAllByRole('alert').map((a) => a.textContent).join(' ')).toContain('The image busybox could not be pulled: manifest unknown'),
    );
    expect(api.called('POST /api/containers')).toHaveLength(0);
  });

  it('suggests local images and registry repositories in a combobox usable by keyboard', async () => {
    render(ContainerCreateScreen);
    const box = screen.getByRole('combobox', { name: /^Image/ });
    await waitFor(() => expect(api.called('GET /api/registry/catalog')).toHaveLength(1));
    expect(api.called('GET /api/registry/catalog')[0].query).toMatchObject({ registry: '7' });
    await fireEvent.focus(box);
    await fireEvent.input(box, { target: { value: 'web' } });
    await waitFor(() => expect(box.getAttribute('aria-expanded')).toBe('true'));
    const list = screen.getByRole('listbox', { name: 'Suggested images' });
    expect(within(list).getAllByRole('option').map((o) => o.textContent?.replace(/\s+/g, ' ').trim())).toEqual(['reg.example:5000/apps/web team']);
    await fireEvent.input(box, { target: { value: 'busy' } });
    await fireEvent.keyDown(box, { key: 'ArrowDown' });
    const opts = within(list).getAllByRole('option');
    expect(opts).toHaveLength(2);
    expect(box.getAttribute('aria-activedescendant')).toBe(opts[0].id);
    expect(opts[0].getAttribute('aria-selected')).toBe('true');
    await fireEvent.keyDown(box, { key: 'ArrowDown' });
    await fireEvent.keyDown(box, { key: 'Enter' });
    expect((box as HTMLInputElement).value).toBe('berth-test/busybox:1');
    expect(box.getAttribute('aria-expanded')).toBe('false');
  });

  it("says before submitting what the environment's security settings refuse a non-administrator", async () => {
    session.session = {
      authenticated: true,
      authEnabled: true,
      user: { id: 3, username: 'op', isAdmin: false, environmentPermissions: { '2': { containers: ['create', 'view'], environments: ['view'] } } },
    } as never;
    api.routes['GET /api/environments/2/security'] = {
      allowPrivileged: false,
      allowCapAdd: true,
      allowDevices: false,
      allowBindMounts: true,
      allowedBindPaths: ['/srv/data'],
    };
    render(ContainerCreateScreen);
    await fireEvent.click(screen.getByText('Advanced: security and devices'));
    const note = await screen.findByText(/This environment's security settings refuse/);
    expect(note.textContent).toContain('privileged containers, devices');
    expect(note.textContent).not.toContain('capabilities');
    expect(screen.getByText(/Host paths are allowed under \/srv\/data only/)).toBeTruthy();
  });

  it('a user who may not create containers gets no form', () => {
    session.session = {
      authenticated: true,
      authEnabled: true,
      user: { id: 4, username: 'v', isAdmin: false, environmentPermissions: { '2': { containers: ['view'] } } },
    } as never;
    render(ContainerCreateScreen);
    expect(screen.getByText(/You may not create containers on edge/)).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Create container' })).toBeNull();
  });

  it('edits a container: prefilled from its inspection, saved through update, and says it was recreated', async () => {
    router.navigate('/containers/new?edit=web', { replace: true });
    render(ContainerCreateScreen);
    expect(await screen.findByRole('heading', { level: 1, name: 'Edit web' })).toBeTruthy();
    expect(((await screen.findByLabelText('Name')) as HTMLInputElement).value).toBe('web');
    expect((screen.getByLabelText('Variable 1 value') as HTMLInputElement).value).toBe('old');
    expect((screen.getByLabelText('Working directory') as HTMLInputElement).value).toBe('/srv');
    expect((screen.getByLabelText('Hostname') as HTMLInputElement).value).toBe(''); // the engine's own
    expect((screen.getByLabelText('Mount 1 volume or host path') as HTMLInputElement).value).toBe('data');
    expect(screen.queryByLabelText('Mount 2 volume or host path')).toBeNull(); // anonymous: not copied
    // The image's PATH and title label are the image's: not listed, so not frozen into the container.
    expect(screen.queryByLabelText('Variable 2 name')).toBeNull();
    expect((screen.getByLabelText('Label 1 name') as HTMLInputElement).value).toBe('team');
    expect(screen.queryByLabelText('Label 2 name')).toBeNull();
    expect(screen.getByText(/Nothing is changed yet/)).toBeTruthy();
    await input('Variable 1 value', 'new');
    await fireEvent.click(screen.getByRole('button', { name: 'Save and recreate' }));
    await waitFor(() => expect(screen.getByText(/web was recreated \(new id beefbeefbeef\)/)).toBeTruthy());
    expect(api.called('POST /api/images/pull')).toHaveLength(0); // same image
    // Only what changed: the rest keeps what the container has.
    const body = api.called('POST /api/containers/web/update')[0].body as Record<string, unknown>;
    expect(body).toEqual({ env: ['MODE=new'], startAfterUpdate: true });
    expect(screen.getByRole('link', { name: 'Open the container' }).getAttribute('href')).toBe(`/containers/${'beef'.repeat(16)}`);
  }, 30_000);

  it('clears the command and the entrypoint of an edit: sent empty, not left out', async () => {
    api.routes['GET /api/containers/web'] = { ...inspected, Config: { ...inspected.Config, Entrypoint: ['/bin/sh', '-c'] } };
    router.navigate('/containers/new?edit=web', { replace: true });
    render(ContainerCreateScreen);
    expect(((await screen.findByLabelText('Command')) as HTMLInputElement).value).toBe('sleep 600');
    expect((screen.getByLabelText('Entrypoint') as HTMLInputElement).value).toBe('/bin/sh -c');
    await input('Command', '');
    await input('Entrypoint', '');
    await fireEvent.click(screen.getByRole('button', { name: 'Save and recreate' }));
    await waitFor(() => expect(api.called('POST /api/containers/web/update')).toHaveLength(1));
    expect(api.called('POST /api/containers/web/update')[0].body).toEqual({ command: [], entrypoint: [], startAfterUpdate: true });
  }, 30_000);

  it('applies a change of resources and restart policy in place, and says so before saving', async () => {
    api.routes['POST /api/containers/web/update'] = { success: true, id: inspected.Id, recreated: false };
    router.navigate('/containers/new?edit=web', { replace: true });
    render(ContainerCreateScreen);
    await screen.findByLabelText('Memory limit');
    expect(screen.getByRole('button', { name: 'Save and recreate' })).toBeTruthy();
    await input('Memory limit', '128');
    await fireEvent.change(screen.getByLabelText('Restart policy'), { target: { value: 'always' } });
    expect(screen.getByText(/without recreating it/)).toBeTruthy();
    await fireEvent.click(screen.getByRole('button', { name: 'Apply without recreating' }));
    await waitFor(() => expect(screen.getByText(/web was changed in place/)).toBeTruthy());
    expect(api.called('POST /api/containers/web/update')[0].body).toEqual({ memory: 128 * 1024 * 1024, memorySwap: 256 * 1024 * 1024, restartPolicy: 'always' });
    // Removing a limit is not something docker update does: that recreates,
    // and the form says so before saving.
    expect(document.getElementById('limit-removal')).toBeNull();
    await input('Memory limit', '');
    expect(screen.getByRole('button', { name: 'Save and recreate' })).toBeTruthy();
    expect(document.getElementById('limit-removal')?.textContent).toMatch(/Removing a limit recreates the container \(the memory limit\)/);
  }, 30_000);

  it('shows a rolled-back edit as the server says it', async () => {
    router.navigate('/containers/new?edit=web', { replace: true });
    api.routes['POST /api/containers/web/update'] = () => {
      throw new ApiError(500, 'Update rolled back: the new container exited (code 1)');
    };
    render(ContainerCreateScreen);
    await screen.findByLabelText('Variable 1 value');
    await input('Variable 1 value', 'new');
    await fireEvent.click(await screen.findByRole('button', { name: 'Save and recreate' }));
    await waitFor(() =>
      expect(screen.getByRole('alert').textContent).toContain('The container was not changed: Update rolled back: the new container exited (code 1)'),
    );
  });

  it('duplicates a container under a new name', async () => {
    router.navigate('/containers/new?duplicate=web', { replace: true });
    render(ContainerCreateScreen);
    expect(await screen.findByRole('heading', { level: 1, name: 'Duplicate web' })).toBeTruthy();
    expect(((await screen.findByLabelText('Name')) as HTMLInputElement).value).toBe('web-copy');
    await fireEvent.click(screen.getByRole('button', { name: 'Create container' }));
    await waitFor(() => expect(api.called('POST /api/containers')).toHaveLength(1));
    expect(api.called('POST /api/containers')[0].body).toMatchObject({ name: 'web-copy', image: 'busybox:latest', env: ['MODE=old'] });
    // The image's own variable and label stay the image's: the engine adds them.
    expect((api.called('POST /api/containers')[0].body as { labels?: unknown }).labels).toEqual({ team: 'web' });
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
    api.routes['POST /api/containers'] = () => {
      throw new ApiError(500, 'Failed to start container', {}, 'created 0123456789abcdef but could not start it: port is already allocated');
    };
    render(ContainerCreateScreen);
    await input(/^Image/, 'busybox');
    await fireEvent.click(screen.getByRole('button', { name: 'Create container' }));
    await waitFor(() => expect(screen.getByRole('alert').textContent).toContain('The container could not be created: Failed to start container'));
    const alert = screen.getByRole('alert');
    expect(alert.textContent).toContain('port is already allocated');
    expect(within(alert).getByRole('link', { name: 'Open the created container' }).getAttribute('href')).toBe('/containers/0123456789abcdef');
    expect(location.pathname).toBe('/containers/new');
  });

  it('says when the networks cannot be listed', async () => {
    api.routes['GET /api/networks'] = () => {
      throw new ApiError(403, 'Permission denied');
    };
    render(ContainerCreateScreen);
    expect((await screen.findByRole('alert')).textContent).toContain('Networks could not be listed: Permission denied');
  });

  it('has no serious or critical axe violations, also with messages and advanced sections shown', async () => {
    const { container } = render(ContainerCreateScreen);
    await fireEvent.click(screen.getByRole('button', { name: 'Add port' }));
    await fireEvent.click(screen.getByRole('button', { name: 'Add variable' }));
    await fireEvent.click(screen.getByRole('button', { name: 'Add mount' }));
    for (const s of container.querySelectorAll('details')) s.open = true;
    await fireEvent.click(screen.getByRole('button', { name: 'Add device' }));
    await input('Port 1 container port', 'x');
    await input('Device 1 host path', 'dev');
    await fireEvent.click(screen.getByRole('button', { name: 'Create container' }));
    await screen.findByRole('alert');
    await expectNoSeriousAxeViolations(container);
  }, 30_000);
});
