import { afterEach, describe, expect, it, vi } from 'vitest';
import { followAudit } from './api-system';

function stubFetch(respond: () => Response) {
  const f = vi.fn(async () => respond());
  vi.stubGlobal('fetch', f);
  return () =>
    f.mock.calls.map((c) => {
      const [url, init] = c as unknown as [string, RequestInit];
      return { url, method: init.method, body: init.body ? JSON.parse(String(init.body)) : undefined, accept: (init.headers as Record<string, string>).Accept };
    });
}

afterEach(() => vi.unstubAllGlobals());

describe('api-system', () => {
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
