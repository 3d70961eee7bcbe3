import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from './api';
import { runBatch } from './api-batch';

function sse(chunks: string[]): Response {
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      const enc = new TextEncoder();
      for (const s of chunks) c.enqueue(enc.encode(s));
      c.close();
    },
  });
  return new Response(body, { status: 200, headers: { 'Content-Type': 'text/event-stream' } });
}

const json = (v: unknown, status = 200) => new Response(JSON.stringify(v), { status, headers: { 'Content-Type': 'application/json' } });

afterEach(() => vi.unstubAllGlobals());

describe('runBatch', () => {
  it('posts the reference shape, follows the job and resolves with each item outcome', async () => {
    const complete = {
      type: 'complete',
      summary: { total: 2, success: 1, failed: 1 },
      results: [
        { id: 'a', name: 'web', status: 'success' },
        { id: 'b', name: 'db', status: 'error', error: 'No such container: b' },
      ],
    };
    const fetchMock = vi
      .fn()
      .mockResolvedValueOnce(json({ jobId: 'j 1' }))
      .mockResolvedValueOnce(
        sse([
          'event: start\ndata: {"type":"start","total":2}\n\n',
          'event: progress\ndata: {"type":"progress","id":"a","name":"web","status":"processing","current":1,"total":2}\n\n',
          'event: progress\ndata: {"type":"progress","id":"a","name":"web","status":"success","current":1,"total":2}\n\n',
          'event: progress\ndata: {"type":"progress","id":"b","name":"db","status":"error","error":"No such container: b","current":2,"total":2}\n\n',
          `event: complete\ndata: ${JSON.stringify(complete)}\n\n`,
        ]),
      );
    vi.stubGlobal('fetch', fetchMock);
    const seen: [string, number][] = [];
    const req = { operation: 'stop', entityType: 'containers' as const, items: [{ id: 'a', name: 'web' }, { id: 'b', name: 'db' }] };
    const r = await runBatch(3, req, (p, done) => seen.push([p.name, done]));
    expect(r).toEqual(complete);
    expect(seen).toEqual([
      ['web', 1],
      ['db', 2],
    ]);
    const [url, init] = fetchMock.mock.calls[0] as [string, RequestInit];
    expect(url).toBe('/api/batch?env=3');
    expect(init.method).toBe('POST');
    expect(JSON.parse(init.body as string)).toEqual(req);
    expect(fetchMock.mock.calls[1][0]).toBe('/api/jobs/j%201');
  });

  it('rejects with the server message when the batch is refused', async () => {
    vi.stubGlobal('fetch', vi.fn(async () => json({ error: 'Permission denied' }, 403)));
    const err = await runBatch(1, { operation: 'stop', entityType: 'containers', items: [{ id: 'a', name: 'a' }] }).catch((e) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err.message).toBe('Permission denied');
  });

  it('fails when the job ends without its results', async () => {
    const fetchMock = vi
      .fn()
      .mockResolvedValueOnce(json({ jobId: 'j2' }))
      .mockResolvedValueOnce(sse(['event: error\ndata: {"error":"job cancelled"}\n\n']));
    vi.stubGlobal('fetch', fetchMock);
    await expect(runBatch(1, { operation: 'stop', entityType: 'containers', items: [{ id: 'a', name: 'a' }] })).rejects.toThrow(
      'job cancelled',
    );
  });
});
