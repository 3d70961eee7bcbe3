import { afterEach, describe, expect, it, vi } from 'vitest';
import { followAudit, getDatabaseHealth, prune } from './api-system';

function stubFetch(respond: () => Response) {
  const f = vi.fn(async () => respond());
  vi.stubGlobal('fetch', f);
  return () =>
    f.mock.calls.map((c) => {
      const [url, init] = c as unknown as [string, RequestInit];
      return { url, method: init.method, body: init.body ? JSON.parse(String(init.body)) : undefined, accept: (init.headers as Record<string, string>).Accept };
    });
}
const json = (body: unknown, status = 200) => () => new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });

afterEach(() => vi.unstubAllGlobals());

describe('api-system', () => {
  it('prunes synchronously, with volumes only for a prune of everything', async () => {
    const calls = stubFetch(json({ success: true, deleted: [], spaceReclaimed: 0 }));
    await prune(2, 'containers');
    await prune(2, 'all', { volumes: true });
    expect(calls()).toEqual([
      { url: '/api/prune/containers?env=2', method: 'POST', body: {}, accept: 'application/json' },
      { url: '/api/prune/all?env=2', method: 'POST', body: { volumes: true }, accept: 'application/json' },
    ]);
  });

  it('reads an unreachable database (503) as a health, not a failure', async () => {
    stubFetch(json({ status: 'error', healthy: false, dialect: 'sqlite', latencyMs: 5000, error: 'Database unreachable' }, 503));
    expect((await getDatabaseHealth()).healthy).toBe(false);
  });

  it('follows the audit stream with the filters and hands over its entries', async () => {
    const calls = stubFetch(
      () =>
        new Response('event: connected\ndata: {}\n\nevent: entry\ndata: {"id":7,"action":"role.create"}\n\n: keepalive\n\n', {
          status: 200,
          headers: { 'Content-Type': 'text/event-stream' },
        }),
    );
    const got: unknown[] = [];
    await followAudit({ action: 'role.*', username: 'root' }, (e) => got.push(e), new AbortController().signal);
    expect(got).toEqual([{ id: 7, action: 'role.create' }]);
    expect(calls()[0]).toMatchObject({ url: '/api/audit/events?action=role.*&username=root', method: 'GET', accept: 'text/event-stream' });
  });
});
