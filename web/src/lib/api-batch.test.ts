import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from './api';
import { runBatch } from './api-batch';
import { stubApi } from '../test-api';

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
    const api = stubApi({
      'POST /api/batch': { jobId: 'j 1' },
      'GET /api/jobs/j 1': () =>
        sse([
          'event: start\ndata: {"type":"start","total":2}\n\n',
          'event: progress\ndata: {"type":"progress","id":"a","name":"web","status":"processing","current":1,"total":2}\n\n',
          'event: progress\ndata: {"type":"progress","id":"a","name":"web","status":"success","current":1,"total":2}\n\n',
          'event: progress\ndata: {"type":"progress","id":"b","name":"db","status":"error","error":"No such container: b","current":2,"total":2}\n\n',
          `event: complete\ndata: ${JSON.stringify(complete)}\n\n`,
        ]),
    });
    const seen: [string, number][] = [];
    const req = { operation: 'stop', entityType: 'containers' as const, items: [{ id: 'a', name: 'web' }, { id: 'b', name: 'db' }] };
    const r = await runBatch(3, req, (p, done) => seen.push([p.name, done]));
    expect(r).toEqual(complete);
    expect(seen).toEqual([
      ['web', 1],
      ['db', 2],
    ]);
    expect(api.calls.map((c) => `${c.method} ${c.path}`)).toEqual(['POST /api/batch', 'GET /api/jobs/j 1']);
    expect(api.calls[0].query).toEqual({ env: '3' });
    expect(api.calls[0].body).toEqual(req);
  });

  it('rejects with the server message when the batch is refused', async () => {
    stubApi({
      'POST /api/batch': () => {
        throw new ApiError(403, 'Permission denied');
      },
    });
    const err = await runBatch(1, { operation: 'stop', entityType: 'containers', items: [{ id: 'a', name: 'a' }] }).catch((e) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err.message).toBe('Permission denied');
  });

  it('fails when the job ends without its results', async () => {
    stubApi({
      'POST /api/batch': { jobId: 'j2' },
      'GET /api/jobs/j2': () => sse(['event: error\ndata: {"error":"job cancelled"}\n\n']),
    });
    await expect(runBatch(1, { operation: 'stop', entityType: 'containers', items: [{ id: 'a', name: 'a' }] })).rejects.toThrow(
      'job cancelled',
    );
  });
});
