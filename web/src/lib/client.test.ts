import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiError, onMutated, onUnauthorized } from './api';
import { client, readClient, unwrap } from './client';

describe('unwrap', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    onUnauthorized(null);
  });

  it('answers the data and sends the query the caller gave', async () => {
    const fetch = vi.fn(async (req: Request) => {
      expect(new URL(req.url).pathname + new URL(req.url).search).toBe('/api/volumes?env=3');
      expect(req.headers.get('Accept')).toBe('application/json');
      return new Response(JSON.stringify([{ name: 'data' }]), { status: 200, headers: { 'Content-Type': 'application/json' } });
    });
    vi.stubGlobal('fetch', fetch);
    const vols = await unwrap(client.GET('/api/volumes', { params: { query: { env: 3 } } }));
    expect(vols).toEqual([{ name: 'data' }]);
    expect(fetch).toHaveBeenCalledTimes(1);
  });

  it("turns an error answer into an ApiError with the server's message, and reports a 401", async () => {
    const seen: ApiError[] = [];
    onUnauthorized((e) => seen.push(e));
    vi.stubGlobal('fetch', async () => new Response(JSON.stringify({ error: 'Permission denied' }), { status: 403 }));
    await expect(unwrap(client.GET('/api/volumes', { params: { query: { env: 1 } } }))).rejects.toMatchObject({
      status: 403,
      message: 'Permission denied',
    });
    expect(seen).toHaveLength(0);
    vi.stubGlobal('fetch', async () => new Response(JSON.stringify({ error: 'Unauthorized' }), { status: 401 }));
    await expect(unwrap(client.GET('/api/volumes', { params: { query: { env: 1 } } }))).rejects.toBeInstanceOf(ApiError);
    expect(seen.map((e) => e.status)).toEqual([401]);
  });

  it('says the server cannot be reached when the request fails', async () => {
    vi.stubGlobal('fetch', async () => {
      throw new TypeError('Failed to fetch');
    });
    await expect(unwrap(client.GET('/api/volumes', { params: { query: { env: 1 } } }))).rejects.toMatchObject({
      status: 0,
      message: 'Cannot reach the Berth server',
    });
  });
});

describe('readClient', () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    onMutated(null);
  });

  it('sends a POST that only reads without marking the cached reads stale, as a change through client does', async () => {
    let mutated = 0;
    onMutated(() => mutated++);
    vi.stubGlobal('fetch', async (req: Request) => {
      expect(await req.json()).toEqual({ path: '/srv/app' });
      return new Response(JSON.stringify({ valid: true }), { status: 200, headers: { 'Content-Type': 'application/json' } });
    });
    const check = { params: { query: { env: 1 } }, body: { path: '/srv/app' } };
    expect(await unwrap(readClient.POST('/api/stacks/validate-path', check))).toEqual({ valid: true });
    expect(mutated).toBe(0);
    await unwrap(client.POST('/api/stacks/validate-path', check));
    expect(mutated).toBe(1);
  });
});
