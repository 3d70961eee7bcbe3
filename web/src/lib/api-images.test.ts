import { afterEach, describe, expect, it, vi } from 'vitest';
import { testRegistry, updateRegistry } from './api-images';

function stubFetch(body: unknown = { jobId: 'j' }) {
  const f = vi.fn(async () => new Response(JSON.stringify(body), { status: 200, headers: { 'Content-Type': 'application/json' } }));
  vi.stubGlobal('fetch', f);
  return () => f.mock.calls.map((c) => {
    const [url, init] = c as unknown as [string, RequestInit];
    return { url, method: init.method, body: init.body ? JSON.parse(String(init.body)) : undefined, accept: (init.headers as Record<string, string>).Accept };
  });
}

afterEach(() => vi.unstubAllGlobals());

describe('api-images', () => {
  it('tests and updates registries', async () => {
    const calls = stubFetch({ success: true });
    await testRegistry(1, { id: 3 });
    await updateRegistry(3, { name: 'r', url: 'reg:5000' });
    expect(calls().map((c) => `${c.method} ${c.url} ${JSON.stringify(c.body ?? null)}`)).toEqual([
      'POST /api/registries/test?env=1 {"id":3}',
      'PUT /api/registries/3 {"name":"r","url":"reg:5000"}',
    ]);
  });
});
