import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../lib/api';
import type * as admin from '../lib/api-admin';
import { session } from '../lib/session.svelte';
import { stubApi, type StubApi, type StubCall } from '../test-api';
import { expectNoSeriousAxeViolations } from '../test-axe';
import RolesScreen from './RolesScreen.svelte';

const roles: admin.Role[] = [
  { id: 1, name: 'Viewer', description: 'Read-only access', permissions: { containers: ['view', 'logs'] }, environmentIds: null, isSystem: true },
  { id: 4, name: 'Deployers', description: 'Stacks on prod', permissions: { stacks: ['view', 'start'] }, environmentIds: [2], isSystem: false },
];

beforeEach(() => {
  session.session = { authenticated: true, authEnabled: true, user: { id: 1, username: 'admin', isAdmin: true } };
  session.environments = [
    { id: 1, name: 'local', connectionType: 'socket' },
    { id: 2, name: 'prod', connectionType: 'direct' },
  ];
  api = stubApi({
    'GET /api/roles': roles,
    'GET /api/license': { edition: 'enterprise', license: null },
    'DELETE /api/roles/4': { success: true },
    'POST /api/roles': (c: StubCall) => ({ ...(c.body as object), id: 9, isSystem: false }),
    'PUT /api/roles/4': (c: StubCall) => ({ ...(c.body as object), id: 4, isSystem: false }),
  });
});
afterEach(() => {
  cleanup();
  vi.clearAllMocks();
  vi.unstubAllGlobals();
  session.session = null;
  session.environments = [];
});

let api: StubApi;

describe('RolesScreen', () => {
  it('lists the roles with scope and permission count', async () => {
    render(RolesScreen);
    expect(screen.getByRole('heading', { level: 1, name: 'Roles' })).toBeTruthy();
    const table = await screen.findByRole('table');
    const viewer = within(within(table).getByText('Viewer').closest('tr')!);
    expect(viewer.getByText('built-in')).toBeTruthy();
    expect(viewer.getByText('All environments')).toBeTruthy();
    expect(viewer.getByText(/^2 of \d+$/)).toBeTruthy();
    const dep = within(within(table).getByText('Deployers').closest('tr')!);
    expect(dep.getByText('prod')).toBeTruthy();
    // built-in roles are only viewed, never deleted
    expect(screen.getByRole('button', { name: 'View Viewer' })).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Delete Viewer' })).toBeNull();
    expect(screen.getByRole('button', { name: 'Delete Deployers' })).toBeTruthy();
  });

  it('shows a built-in role read-only', async () => {
    render(RolesScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'View Viewer' }));
    const form = within(screen.getByRole('form', { name: 'Built-in role Viewer' }));
    expect(form.getByText(/cannot be changed or deleted/)).toBeTruthy();
    expect(form.queryAllByRole('checkbox')).toHaveLength(0);
    expect(form.getByText('containers:logs granted')).toBeTruthy();
    expect(form.getByText('containers:start not granted')).toBeTruthy();
    expect(form.queryByRole('button', { name: 'Save role' })).toBeNull();
  });

  it('creates a role from the matrix, on chosen environments', async () => {
    render(RolesScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'New role' }));
    const f = within(screen.getByRole('form', { name: 'New role' }));
    await fireEvent.input(f.getByLabelText('Name'), { target: { value: ' Auditors ' } });
    await fireEvent.click(f.getByLabelText('containers:view'));
    await fireEvent.click(f.getByLabelText('containers:logs'));
    await fireEvent.click(f.getByLabelText('Audit logs: every action'));
    await fireEvent.click(f.getByLabelText('pull on every resource'));
    await fireEvent.click(f.getByLabelText(/Only these environments/));
    await fireEvent.click(f.getByLabelText('prod'));
    expect(f.getByText(/^4 of \d+ granted$/)).toBeTruthy();
    await fireEvent.click(f.getByRole('button', { name: 'Create role' }));
    await waitFor(() => expect(api.called('POST /api/roles')).toHaveLength(1));
    expect(api.called('POST /api/roles')[0].body).toEqual({
      name: 'Auditors',
      description: '',
      permissions: { containers: ['view', 'logs'], images: ['pull'], audit_logs: ['view'] },
      environmentIds: [2],
    });
    expect(await screen.findByText('Role Auditors created.')).toBeTruthy();
  });

  it('refuses a role limited to no environment before asking the server', async () => {
    render(RolesScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'New role' }));
    const f = within(screen.getByRole('form', { name: 'New role' }));
    await fireEvent.input(f.getByLabelText('Name'), { target: { value: 'x' } });
    await fireEvent.click(f.getByLabelText(/Only these environments/));
    await fireEvent.click(f.getByRole('button', { name: 'Create role' }));
    expect(api.called('POST /api/roles')).toHaveLength(0);
    expect(f.getByRole('alert').textContent).toContain('Choose at least one environment');
  });

  it('edits a custom role and duplicates a built-in one', async () => {
    render(RolesScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Edit Deployers' }));
    let f = within(screen.getByRole('form', { name: 'Edit role Deployers' }));
    expect((f.getByLabelText('stacks:start') as HTMLInputElement).checked).toBe(true);
    expect((f.getByLabelText('prod') as HTMLInputElement).checked).toBe(true);
    await fireEvent.click(f.getByLabelText('stacks:start'));
    await fireEvent.click(f.getByRole('button', { name: 'Save role' }));
    await waitFor(() => expect(api.called('PUT /api/roles/4')).toHaveLength(1));
    expect(api.called('PUT /api/roles/4')[0].body).toEqual({
      name: 'Deployers',
      description: 'Stacks on prod',
      permissions: { stacks: ['view'] },
      environmentIds: [2],
    });

    await fireEvent.click(await screen.findByRole('button', { name: 'Duplicate Viewer' }));
    f = within(screen.getByRole('form', { name: 'New role' }));
    expect((f.getByLabelText('Name') as HTMLInputElement).value).toBe('Viewer copy');
    await fireEvent.click(f.getByRole('button', { name: 'Create role' }));
    await waitFor(() => expect(api.called('POST /api/roles')).toHaveLength(1));
    expect(api.called('POST /api/roles')[0].body).toEqual(
      expect.objectContaining({ name: 'Viewer copy', permissions: { containers: ['view', 'logs'] }, environmentIds: null }),
    );
    expect(await screen.findByText('Role Viewer copy created.')).toBeTruthy();
  });

  it('deletes a custom role after confirmation and shows a refusal', async () => {
    api.routes['DELETE /api/roles/4'] = () => {
      throw new ApiError(403, 'Enterprise license required');
    };
    render(RolesScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Delete Deployers' }));
    expect(api.called('DELETE /api/roles/4')).toHaveLength(0);
    await fireEvent.click(within(screen.getByRole('dialog', { name: 'Delete role Deployers?' })).getByRole('button', { name: 'Delete role' }));
    await waitFor(() => expect(api.called('DELETE /api/roles/4')).toHaveLength(1));
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain('Enterprise license required');
    expect(within(alert).getByRole('link', { name: 'See the license' }).getAttribute('href')).toBe('/license');
  });

  it('explains that custom roles need a license in the community edition', async () => {
    api.routes['GET /api/license'] = { edition: 'community', license: null };
    render(RolesScreen);
    await screen.findByRole('table');
    await waitFor(() => expect(screen.getByText(/Custom roles are an enterprise feature/)).toBeTruthy());
    expect((screen.getByRole('button', { name: 'New role' }) as HTMLButtonElement).disabled).toBe(true);
    expect(screen.queryByRole('button', { name: 'Delete Deployers' })).toBeNull();
    await fireEvent.click(screen.getByRole('button', { name: 'View Deployers' }));
    expect(screen.getByRole('form', { name: 'Role Deployers' })).toBeTruthy();
  });

  it('tells a user without the permission that they are not allowed', async () => {
    api.routes['GET /api/roles'] = () => {
      throw new ApiError(403, 'Permission denied');
    };
    render(RolesScreen);
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toMatch(/Not allowed\..*Permission denied/);
  });

  it('has no serious or critical axe violations', async () => {
    const { container } = render(RolesScreen);
    await screen.findByRole('table');
    await expectNoSeriousAxeViolations(container);
    await fireEvent.click(screen.getByRole('button', { name: 'New role' }));
    await expectNoSeriousAxeViolations(container);
    await fireEvent.click(screen.getByRole('button', { name: 'View Viewer' }));
    await expectNoSeriousAxeViolations(container);
  }, 60_000); // axe in jsdom over the whole matrix is slow
});
