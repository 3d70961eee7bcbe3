// The configuration dialog alone: the extra paths, excludes and a stack's
// hook service it sends, what it refuses before sending, and the "berth"
// type (Berth itself) offered to administrators only, with the volume, path,
// stop and hook fields hidden and never sent.
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { session } from '../../lib/session.svelte';
import { stubApi, type StubApi, type StubCall } from '../../test-api';
import { expectNoSeriousAxeViolations } from '../../test-axe';
import ConfigForm from './ConfigForm.svelte';

const destinations = [{ id: 1, name: 'nas', type: 'local', repository: '/srv/restic' }];
const admin = { id: 1, username: 'admin', isAdmin: true };
const operator = { id: 3, username: 'op', isAdmin: false, permissions: { backups: ['view', 'manage'] }, environmentPermissions: {} };

let api: StubApi;
let saved: ReturnType<typeof vi.fn<(c: unknown, created: boolean) => void>>;
beforeEach(() => {
  session.session = { authenticated: true, authEnabled: true, user: admin } as never;
  session.environments = [{ id: 1, name: 'local', connectionType: 'socket' }];
  session.envId = 1;
  api = stubApi({
    'POST /api/backup/configs': (c: StubCall) => ({ id: 9, ...(c.body as object) }),
    'GET /api/backup/stack-path': { kind: 'candidate', hostPath: '/srv/stacks/web' },
  });
  saved = vi.fn<(c: unknown, created: boolean) => void>();
});
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

const open = (props: Record<string, unknown> = {}) => render(ConfigForm, { props: { destinations, onclose: () => {}, onsaved: saved, ...props } });
const field = (d: HTMLElement, label: RegExp | string) => within(d).getByLabelText(label) as HTMLInputElement;

describe('ConfigForm', () => {
  it('sends extra paths and exclude patterns, one a line', async () => {
    open();
    const d = screen.getByRole('dialog');
    await fireEvent.input(field(d, /Container name/), { target: { value: 'web' } });
    await fireEvent.input(field(d, /Extra host paths/), { target: { value: '/srv/app/uploads\n\n/etc/app ' } });
    await fireEvent.input(field(d, /^Exclude/), { target: { value: '*.tmp\ncache/, logs' } });
    await fireEvent.click(within(d).getByRole('button', { name: 'Create' }));
    await waitFor(() => expect(saved).toHaveBeenCalled());
    expect(api.called('POST /api/backup/configs')[0].body).toMatchObject({
      type: 'container',
      targetName: 'web',
      destinationId: 1,
      paths: ['/srv/app/uploads', '/etc/app'],
      excludes: ['*.tmp', 'cache/, logs'],
      hookService: '',
    });
  });

  it('refuses a relative extra path and a stack hook without its service, and sends nothing', async () => {
    open({ preset: { type: 'stack', targetName: 'web' } });
    const d = screen.getByRole('dialog');
    await fireEvent.input(field(d, /Extra host paths/), { target: { value: 'srv/app' } });
    await fireEvent.click(within(d).getByRole('button', { name: 'Create' }));
    expect(within(d).getByRole('alert').textContent).toMatch(/Extra path "srv\/app" must be an absolute/);

    await fireEvent.input(field(d, /Extra host paths/), { target: { value: '' } });
    await fireEvent.input(field(d, /Before the backup/), { target: { value: 'pg_dump -f /data/dump.sql' } });
    await fireEvent.click(within(d).getByRole('button', { name: 'Create' }));
    expect(within(d).getByRole('alert').textContent).toMatch(/hooks need the service/);
    expect(api.called('POST /api/backup/configs')).toHaveLength(0);

    await fireEvent.input(field(d, /Hook service/), { target: { value: 'db' } });
    await fireEvent.click(within(d).getByRole('button', { name: 'Create' }));
    await waitFor(() => expect(api.called('POST /api/backup/configs')).toHaveLength(1));
    expect(api.called('POST /api/backup/configs')[0].body).toMatchObject({ type: 'stack', preHook: 'pg_dump -f /data/dump.sql', hookService: 'db' });
  });

  it('has no hook service field for a container; the form has no serious axe violation', async () => {
    open();
    expect(within(screen.getByRole('dialog')).queryByLabelText(/Hook service/)).toBeNull();
    await expectNoSeriousAxeViolations(document.body);
  });

  it('offers an administrator the Berth type, hiding the volume, path, stop and hook fields', async () => {
    open();
    const d = screen.getByRole('dialog');
    const type = field(d, 'What') as unknown as HTMLSelectElement;
    expect(within(type).getByRole('option', { name: /Berth itself/ })).toBeTruthy();
    await fireEvent.change(type, { target: { value: 'berth' } });
    for (const hidden of [/Container name/, /Stack name/, /All its volumes/, /Extra host paths/, /^Exclude/, /Stop it during/, /Before the backup/, /After the backup/, /Hook service/])
      expect(within(d).queryByLabelText(hidden), String(hidden)).toBeNull();
    for (const shown of ['Environment', 'Destination', /^Schedule \(cron/, 'last', 'daily'] as const) expect(within(d).getByLabelText(shown)).toBeTruthy();
    await expectNoSeriousAxeViolations(document.body);
    await fireEvent.click(within(d).getByLabelText(/Include git checkouts/));
    await fireEvent.click(within(d).getByRole('button', { name: 'Create' }));
    await waitFor(() => expect(api.called('POST /api/backup/configs')).toHaveLength(1));
    const body = api.called('POST /api/backup/configs')[0].body as Record<string, unknown>;
    expect(body).toEqual({
      type: 'berth',
      environmentId: 1,
      destinationId: 1,
      enabled: true,
      schedule: '',
      retention: { keepDaily: 7, keepWeekly: 4 },
      options: { includeGit: true },
    });
  });

  it('edits a Berth configuration keeping its other options', async () => {
    const c = {
      id: 4,
      name: 'berth',
      type: 'berth',
      targetName: '',
      environmentId: 1,
      destinationId: 1,
      enabled: true,
      allVolumes: true,
      selectedVolumes: [],
      paths: [],
      excludes: [],
      hookService: '',
      options: { includeGit: true, compression: 'max' },
      includeStackDir: false,
      stopBeforeBackup: false,
      schedule: '0 2 * * *',
      retention: { keepLast: 3 },
      preHook: '',
      postHook: '',
      running: false,
    };
    api.routes['PUT /api/backup/configs/4'] = (call: StubCall) => ({ ...c, ...(call.body as object) });
    open({ config: c });
    const d = screen.getByRole('dialog', { name: 'Edit the backup of Berth' });
    expect((within(d).getByLabelText(/Include git checkouts/) as HTMLInputElement).checked).toBe(true);
    await fireEvent.click(within(d).getByLabelText(/Include git checkouts/));
    await fireEvent.click(within(d).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(api.called('PUT /api/backup/configs/4')).toHaveLength(1));
    expect(api.called('PUT /api/backup/configs/4')[0].body).toMatchObject({ type: 'berth', schedule: '0 2 * * *', options: { includeGit: false, compression: 'max' } });
  });

  it('does not offer the Berth type to an operator', () => {
    session.session = { authenticated: true, authEnabled: true, user: operator } as never;
    open();
    const type = field(screen.getByRole('dialog'), 'What') as unknown as HTMLSelectElement;
    expect(within(type).queryByRole('option', { name: /Berth itself/ })).toBeNull();
    expect(within(type).getAllByRole('option')).toHaveLength(2);
  });
});
