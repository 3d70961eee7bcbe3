import { describe, expect, it, vi } from 'vitest';
import type { AuditEntry, AuditFilter } from '../../lib/api-admin';
import { AUDIT_RESOURCES, MAX_EXPORT, collectAll, matchesText } from './audit';

const mk = (id: number, extra: Partial<AuditEntry> = {}): AuditEntry => ({
  id,
  timestamp: '2025-01-01T00:00:00Z',
  userId: 1,
  username: 'admin',
  environmentId: null,
  action: 'user.create',
  entityType: 'user',
  entityId: '',
  entityName: '',
  description: '',
  details: '',
  ipAddress: '127.0.0.1',
  ...extra,
});

describe('audit helpers', () => {
  it('suggests the resource types of the actions', () => {
    expect(AUDIT_RESOURCES).toContain('session');
    expect(AUDIT_RESOURCES).toContain('git_stack');
    expect(AUDIT_RESOURCES).toContain('user');
    expect(AUDIT_RESOURCES).not.toContain('login');
  });

  it('matches text in any field, ignoring case', () => {
    const e = mk(1, { entityName: 'Web-Frontend', details: '{"force":true}' });
    expect(matchesText(e, 'frontend')).toBe(true);
    expect(matchesText(e, 'FORCE')).toBe(true);
    expect(matchesText(e, '  ')).toBe(true);
    expect(matchesText(e, 'nothing')).toBe(false);
  });

  it('collects every page of a filter with progress', async () => {
    const all = Array.from({ length: 2500 }, (_, i) => mk(i + 1));
    const list = vi.fn(async (f: AuditFilter) => ({
      entries: all.slice(f.offset!, f.offset! + f.limit!),
      total: all.length,
      limit: f.limit!,
      offset: f.offset!,
    }));
    const progress: string[] = [];
    const got = await collectAll(list, { action: 'user.*' }, (d, t) => progress.push(`${d}/${t}`));
    expect(got).toHaveLength(2500);
    expect(got[2499].id).toBe(2500);
    expect(list).toHaveBeenCalledTimes(3);
    expect(list.mock.calls[1][0]).toEqual({ action: 'user.*', limit: 1000, offset: 1000 });
    expect(progress).toEqual(['1000/2500', '2000/2500', '2500/2500']);
  });

  it('stops when a page comes back short and at the export limit', async () => {
    const short = vi.fn(async () => ({ entries: [mk(1)], total: 5, limit: 1000, offset: 0 }));
    expect(await collectAll(short, {})).toHaveLength(1);
    expect(short).toHaveBeenCalledTimes(1);

    const endless = vi.fn(async (f: AuditFilter) => ({
      entries: Array.from({ length: f.limit! }, (_, i) => mk(f.offset! + i)),
      total: 10 * MAX_EXPORT,
      limit: f.limit!,
      offset: f.offset!,
    }));
    expect(await collectAll(endless, {})).toHaveLength(MAX_EXPORT);
  });
});
