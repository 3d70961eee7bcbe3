import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../lib/api';
import type * as admin from '../lib/api-admin';
import { session } from '../lib/session.svelte';
import { stubApi, type StubApi } from '../test-api';
import { expectNoSeriousAxeViolations } from '../test-axe';
import AuditScreen from './AuditScreen.svelte';

let api: StubApi;
/** The queries GET /api/audit was called with, oldest first. */
const asked = () => api.called('GET /api/audit').map((c) => c.query);

const mk = (id: number, extra: Partial<admin.AuditEntry> = {}): admin.AuditEntry => ({
  id,
  timestamp: `2025-01-0${(id % 9) + 1}T10:00:00Z`,
  userId: 1,
  username: 'admin',
  environmentId: null,
  action: 'user.create',
  entityType: 'user',
  entityId: String(id),
  entityName: `user${id}`,
  description: '',
  details: '',
  ipAddress: '127.0.0.1',
  ...extra,
});

const entries = [
  mk(3, { action: 'container.start', entityType: 'container', entityName: 'web', environmentId: 1, details: '{"force":true}' }),
  mk(2, { description: 'first admin created with the setup token', entityName: 'admin' }),
  mk(1, { action: 'login', entityType: 'session', entityName: 'admin', entityId: '' }),
];

function page(list: admin.AuditEntry[], total = list.length, offset = 0, limit = 50): admin.AuditPage {
  return { entries: list, total, limit, offset };
}

let saved: { name: string; text: string }[] = [];

beforeEach(() => {
  session.session = { authenticated: true, authEnabled: true, user: { id: 1, username: 'admin', isAdmin: true } };
  session.environments = [{ id: 1, name: 'local', connectionType: 'socket' }];
  api = stubApi({ 'GET /api/audit': page(entries), 'GET /api/users': [] });
  saved = [];
  URL.createObjectURL = vi.fn(() => 'blob:audit');
  URL.revokeObjectURL = vi.fn();
  // The download link's click: read the blob it points at.
  const blobs: Blob[] = [];
  vi.mocked(URL.createObjectURL).mockImplementation((b) => {
    blobs.push(b as Blob);
    return `blob:${blobs.length - 1}`;
  });
  vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(function (this: HTMLAnchorElement) {
    const b = blobs[Number(this.href.split(':').pop())];
    const name = this.download;
    void b.text().then((text) => saved.push({ name, text }));
  });
});
afterEach(() => {
  cleanup();
  vi.restoreAllMocks();
  vi.unstubAllGlobals();
  session.session = null;
  session.environments = [];
});

describe('AuditScreen', () => {
  it('shows the newest entries with user, action, resource and environment', async () => {
    render(AuditScreen);
    expect(screen.getByRole('heading', { level: 1, name: 'Audit log' })).toBeTruthy();
    const table = await screen.findByRole('table');
    expect(asked()).toEqual([{ limit: '50', offset: '0' }]);
    const rows = within(table).getAllByRole('row').slice(1);
    expect(rows).toHaveLength(3);
    expect(within(rows[0]).getByText('container.start')).toBeTruthy();
    expect(within(rows[0]).getByText('local')).toBeTruthy();
    expect(within(rows[0]).getByText('web')).toBeTruthy();
    expect(screen.getByText('Entries 1–3 of 3')).toBeTruthy();
  });

  it('sends the filters to the server', async () => {
    render(AuditScreen);
    await screen.findByRole('table');
    await fireEvent.input(screen.getByLabelText('User'), { target: { value: ' admin ' } });
    await fireEvent.input(screen.getByLabelText('Action'), { target: { value: 'user.*' } });
    await fireEvent.change(screen.getByLabelText('Resource type'), { target: { value: 'user' } });
    await fireEvent.change(screen.getByLabelText('Environment'), { target: { value: '1' } });
    await fireEvent.input(screen.getByLabelText('From'), { target: { value: '2025-01-01T00:00' } });
    await fireEvent.input(screen.getByLabelText('Until'), { target: { value: '2025-02-01T00:00' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Apply filters' }));
    await waitFor(() => expect(asked()).toHaveLength(2));
    const f = asked()[1];
    expect(f).toMatchObject({ username: 'admin', action: 'user.*', entityType: 'user', environmentId: '1', limit: '50', offset: '0' });
    expect(f.since).toBe(new Date('2025-01-01T00:00').toISOString().replace('.000Z', 'Z'));
    expect(f.until).toMatch(/^2025-0[12]-\d\dT\d\d:00:00Z$/);

    // Back to no filter: the first page is still cached, and shown at once.
    await fireEvent.click(screen.getByRole('button', { name: 'Reset' }));
    expect(await screen.findByText('Entries 1–3 of 3')).toBeTruthy();
    expect(asked().every((q) => q.username === undefined || q.username === 'admin')).toBe(true);
    expect((screen.getByLabelText('Action') as HTMLInputElement).value).toBe('');
  });

  it('refuses a time range that ends before it starts', async () => {
    render(AuditScreen);
    await screen.findByRole('table');
    const calls = asked().length;
    await fireEvent.input(screen.getByLabelText('From'), { target: { value: '2025-02-01T00:00' } });
    await fireEvent.input(screen.getByLabelText('Until'), { target: { value: '2025-01-01T00:00' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Apply filters' }));
    expect(screen.getByRole('alert').textContent).toContain('must come after its start');
    expect(asked().length).toBe(calls);
  });

  it('narrows the loaded rows by text', async () => {
    render(AuditScreen);
    await screen.findByRole('table');
    await fireEvent.input(screen.getByLabelText('Text'), { target: { value: 'SETUP TOKEN' } });
    const rows = within(screen.getByRole('table')).getAllByRole('row').slice(1);
    expect(rows).toHaveLength(1);
    expect(within(rows[0]).getByText('first admin created with the setup token')).toBeTruthy();
  });

  it('pages through the entries', async () => {
    let release = () => {};
    api.routes['GET /api/audit'] = async (c: { query: Record<string, string> }) => {
      if (c.query.offset === '50') await new Promise<void>((r) => (release = r));
      return page(c.query.offset === '50' ? [mk(9, { action: 'image.pull' })] : entries, 120, Number(c.query.offset));
    };
    render(AuditScreen);
    await screen.findByRole('table');
    expect((screen.getByRole('button', { name: 'Previous page' }) as HTMLButtonElement).disabled).toBe(true);
    expect(screen.getByText('Page 1 of 3')).toBeTruthy();
    await fireEvent.click(screen.getByRole('button', { name: 'Next page' }));
    await waitFor(() => expect(asked().at(-1)).toEqual({ limit: '50', offset: '50' }));
    // The previous page stays on screen while the next one loads.
    expect(screen.getByText('container.start')).toBeTruthy();
    release();
    expect(await screen.findByText('image.pull')).toBeTruthy();
    expect(screen.getByText('Page 2 of 3')).toBeTruthy();
    // Back: the first page comes from the cache.
    const n = asked().length;
    await fireEvent.click(screen.getByRole('button', { name: 'Previous page' }));
    expect(await screen.findByText('container.start')).toBeTruthy();
    expect(asked()).toHaveLength(n);
    await fireEvent.change(screen.getByLabelText('Rows per page'), { target: { value: '100' } });
    await waitFor(() => expect(asked().at(-1)).toEqual({ limit: '100', offset: '0' }));
  });

  it('expands the details of an entry', async () => {
    render(AuditScreen);
    await screen.findByRole('table');
    const btn = screen.getByRole('button', { name: 'Details of entry 3' });
    expect(btn.getAttribute('aria-expanded')).toBe('false');
    await fireEvent.click(btn);
    expect(btn.getAttribute('aria-expanded')).toBe('true');
    expect(screen.getByText('{"force":true}')).toBeTruthy();
    expect(screen.getByText('local (id 1)')).toBeTruthy();
    await fireEvent.click(btn);
    expect(screen.queryByText('{"force":true}')).toBeNull();
  });

  it('exports every filtered row as CSV and JSON, named with the date', async () => {
    render(AuditScreen);
    await screen.findByRole('table');
    await fireEvent.input(screen.getByLabelText('Action'), { target: { value: 'user.create' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Apply filters' }));
    await fireEvent.input(screen.getByLabelText('Text'), { target: { value: 'setup' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Export CSV' }));
    await waitFor(() => expect(saved).toHaveLength(1));
    expect(asked()).toContainEqual({ action: 'user.create', limit: '1000', offset: '0' });
    expect(saved[0].name).toMatch(/^berth-audit-\d{8}-\d{6}\.csv$/);
    const lines = saved[0].text.split('\r\n');
    expect(lines[0]).toBe('id,timestamp,userId,username,environmentId,action,entityType,entityId,entityName,description,details,ipAddress');
    expect(lines).toHaveLength(3); // header, the one matching row, the final CRLF
    expect(lines[1]).toContain('first admin created with the setup token');
    expect(await screen.findByText(/1 entry exported to berth-audit-/)).toBeTruthy();

    await fireEvent.click(screen.getByRole('button', { name: 'Export JSON' }));
    await waitFor(() => expect(saved).toHaveLength(2));
    expect(saved[1].name).toMatch(/^berth-audit-\d{8}-\d{6}\.json$/);
    expect(JSON.parse(saved[1].text).map((e: admin.AuditEntry) => e.id)).toEqual([2]);
  });

  it('shows an empty log and an empty filter result differently', async () => {
    api.routes['GET /api/audit'] = page([]);
    render(AuditScreen);
    expect(await screen.findByText('The audit log is empty.')).toBeTruthy();
    expect((screen.getByRole('button', { name: 'Export CSV' }) as HTMLButtonElement).disabled).toBe(true);
    await fireEvent.input(screen.getByLabelText('Action'), { target: { value: 'nothing' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Apply filters' }));
    expect(await screen.findByText('No entry matches these filters.')).toBeTruthy();
  });

  it('says plainly that the audit log needs a license', async () => {
    api.routes['GET /api/audit'] = () => {
      throw new ApiError(403, 'Enterprise license required');
    };
    render(AuditScreen);
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toMatch(/Not allowed\..*Enterprise license required/);
    expect(within(alert).getByRole('link', { name: 'See the license' })).toBeTruthy();
    expect(screen.queryByRole('form')).toBeNull();
  });

  it('has no serious or critical axe violations', async () => {
    const { container } = render(AuditScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Details of entry 3' }));
    await expectNoSeriousAxeViolations(container);
  }, 30_000);
});
