// The audit log's Live toggle (AuditScreen.svelte): new entries from
// /api/audit/events appear at the top of the first page.
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type * as admin from '../lib/api-admin';
import * as sys from '../lib/api-system';
import { session } from '../lib/session.svelte';
import { stubApi } from '../test-api';
import { expectNoSeriousAxeViolations } from '../test-axe';
import AuditScreen from './AuditScreen.svelte';

vi.mock('../lib/api-system', async (importOriginal) => {
  const real = await importOriginal<typeof import('../lib/api-system')>();
  return { ...real, followAudit: vi.fn() };
});

const mk = (id: number, action: string): admin.AuditEntry => ({
  id, timestamp: '2026-11-23T10:00:00Z', userId: 1, username: 'admin', environmentId: null, action,
  entityType: 'user', entityId: String(id), entityName: `user${id}`, description: '', details: '', ipAddress: '127.0.0.1',
});

beforeEach(() => {
  session.session = { authenticated: true, authEnabled: true, user: { id: 1, username: 'admin', isAdmin: true } };
  stubApi({ 'GET /api/audit': { entries: [mk(1, 'login')], total: 1, limit: 50, offset: 0 }, 'GET /api/users': [] });
});
afterEach(() => {
  cleanup();
  vi.clearAllMocks();
  vi.unstubAllGlobals();
  session.session = null;
});

describe('AuditScreen live', () => {
  it('follows new entries while Live is on and stops when it is off', async () => {
    let push: ((e: admin.AuditEntry) => void) | null = null;
    let signal: AbortSignal | null = null;
    vi.mocked(sys.followAudit).mockImplementation((_f, onEntry, s) => {
      push = onEntry as (e: admin.AuditEntry) => void;
      signal = s;
      return new Promise(() => {});
    });
    const { container } = render(AuditScreen);
    expect(await screen.findByText('login')).toBeTruthy();
    expect(sys.followAudit).not.toHaveBeenCalled();
    await fireEvent.click(screen.getByRole('checkbox', { name: 'Live' }));
    await waitFor(() => expect(sys.followAudit).toHaveBeenCalledTimes(1));
    push!(mk(2, 'role.create'));
    push!(mk(2, 'role.create')); // the same entry twice shows once
    expect(await screen.findByText('role.create')).toBeTruthy();
    expect(screen.getAllByText('role.create')).toHaveLength(1);
    expect(screen.getByText(/Entries 1–2 of 2/)).toBeTruthy();
    await expectNoSeriousAxeViolations(container);
    await fireEvent.click(screen.getByRole('checkbox', { name: 'Live' }));
    expect(signal!.aborted).toBe(true);
  });
});
