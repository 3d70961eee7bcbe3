// The action bar of a container's page: what each user may do, Kill and Recreate.
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../lib/api';
import { queryClient } from '../lib/query';
import { router } from '../lib/router.svelte';
import type { Route } from '../lib/routes';
import { session } from '../lib/session.svelte';
import { stubApi, type StubApi } from '../test-api';
import { expectNoSeriousAxeViolations } from '../test-axe';
import ContainerDetailScreen from './ContainerDetailScreen.svelte';

const ID = 'abc123abc123abc123';
const NEW = 'def456'.repeat(4);
const doc = (id = ID) => ({
  Id: id,
  Name: '/web',
  Created: '2024-05-01T10:00:00Z',
  Image: 'sha256:1',
  State: { Status: 'running', Running: true, Paused: false, ExitCode: 0 },
  Config: { Image: 'berth-test/busybox:1', Labels: {}, Env: [] },
  HostConfig: { RestartPolicy: { Name: 'no' } },
  NetworkSettings: { Networks: {} },
});
const route = (id = 'web'): Route => ({ name: 'container', params: { id }, path: `/containers/${id}` });

// The page is large: rendering it takes seconds on a shared machine.
vi.setConfig({ testTimeout: 30_000 });

let api: StubApi;
beforeEach(() => {
  queryClient.clear();
  session.environments = [{ id: 1, name: 'local', connectionType: 'socket' }];
  session.envId = 1;
  session.session = { authenticated: false, authEnabled: false };
  router.navigate('/containers/web', { replace: true });
  api = stubApi({
    'GET /api/containers/web': doc(),
    [`GET /api/containers/${ID}`]: doc(),
    [`GET /api/containers/${NEW}`]: doc(NEW),
    [`POST /api/containers/${ID}/kill`]: { success: true },
    [`POST /api/containers/${ID}/update`]: { success: true, id: NEW, recreated: true },
  });
});
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

describe('container actions', () => {
  it('a Viewer sees no action; an Operator starts and stops but neither edits, duplicates nor removes', async () => {
    session.session = {
      authenticated: true,
      authEnabled: true,
      user: { id: 2, username: 'v', isAdmin: false, environmentPermissions: { '1': { containers: ['view', 'inspect', 'logs'] } } },
    } as never;
    render(ContainerDetailScreen, { route: route() });
    const actions = await screen.findByRole('group', { name: 'Container actions' });
    expect(within(actions).queryAllByRole('button')).toEqual([]);
    expect(within(actions).queryAllByRole('link')).toEqual([]);
    cleanup();
    session.session = {
      authenticated: true,
      authEnabled: true,
      user: {
        id: 3,
        username: 'op',
        isAdmin: false,
        environmentPermissions: { '1': { containers: ['view', 'inspect', 'start', 'stop', 'restart'] } },
      },
    } as never;
    render(ContainerDetailScreen, { route: route() });
    const ops = await screen.findByRole('group', { name: 'Container actions' });
    expect(within(ops).getAllByRole('button').map((b) => b.textContent?.trim())).toEqual(['Stop', 'Restart', 'Pause', 'Kill']);
    expect(within(ops).queryAllByRole('link')).toEqual([]);
  });

  it('kills with the chosen signal and says the server refusal', async () => {
    const { container } = render(ContainerDetailScreen, { route: route() });
    await fireEvent.click(await screen.findByRole('button', { name: 'Kill' }));
    const dialog = await screen.findByRole('dialog', { name: 'Kill web?' });
    await expectNoSeriousAxeViolations(container.ownerDocument.body);
    await fireEvent.change(within(dialog).getByLabelText('Signal'), { target: { value: 'SIGTERM' } });
    api.routes[`POST /api/containers/${ID}/kill`] = () => {
      throw new ApiError(409, 'Container is not running');
    };
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Kill' }));
    expect((await within(dialog).findByRole('alert')).textContent).toContain('Kill web: Container is not running');
    api.routes[`POST /api/containers/${ID}/kill`] = { success: true };
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Kill' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    const calls = api.called(`POST /api/containers/${ID}/kill`);
    expect(calls.map((c) => c.body)).toEqual([{ signal: 'SIGTERM' }, { signal: 'SIGTERM' }]);
    expect(calls[1].query).toEqual({ env: '1' });
    expect(screen.getByText('SIGTERM sent to web.')).toBeTruthy();
  });

  it('recreates pulling a newer image, then shows the new container; a rollback is said', async () => {
    render(ContainerDetailScreen, { route: route() });
    await fireEvent.click(await screen.findByRole('button', { name: 'Recreate' }));
    const dialog = await screen.findByRole('dialog', { name: 'Recreate web?' });
    expect((within(dialog).getByLabelText(/Pull a newer/) as HTMLInputElement).checked).toBe(true);
    api.routes[`POST /api/containers/${ID}/update`] = () => {
      throw new ApiError(500, 'Update rolled back: the new container exited (code 1)');
    };
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Recreate' }));
    expect((await within(dialog).findByRole('alert')).textContent).toContain('Recreate web: Update rolled back: the new container exited (code 1)');
    api.routes[`POST /api/containers/${ID}/update`] = { success: true, id: NEW, recreated: true };
    await fireEvent.click(within(dialog).getByLabelText(/Pull a newer/));
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Recreate' }));
    await waitFor(() => expect(location.pathname).toBe(`/containers/${NEW}`));
    expect(api.called(`POST /api/containers/${ID}/update`).map((c) => c.body)).toEqual([
      { image: 'berth-test/busybox:1', repullImage: true, startAfterUpdate: true },
      { image: 'berth-test/busybox:1', repullImage: false, startAfterUpdate: true },
    ]);
  });
});
