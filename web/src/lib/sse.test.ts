import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from './api';
import { SSEParser, dataOf, stream } from './sse';

describe('SSEParser', () => {
  it('splits events across chunks, names and comments', () => {
    const p = new SSEParser();
    expect(p.feed(': keepalive\n\nevent: progress\ndata: {"a":')).toEqual([]);
    expect(p.feed('1}\n\ndata: x\r\ndata: y\r\n\r\n')).toEqual([
      { event: 'progress', data: '{"a":1}' },
      { event: 'message', data: 'x\ny' },
    ]);
    expect(p.feed('data:no-space\n')).toEqual([]);
    expect(p.feed('\n')).toEqual([{ event: 'message', data: 'no-space' }]);
  });

  it('reads JSON data', () => {
    expect(dataOf({ event: 'm', data: '{"x":2}' })).toEqual({ x: 2 });
    expect(dataOf({ event: 'm', data: 'plain' })).toBeUndefined();
  });
});

describe('stream', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('posts the body and delivers each event', async () => {
    const body = new ReadableStream<Uint8Array>({
      start(c) {
        const enc = new TextEncoder();
        c.enqueue(enc.encode('event: line\ndata: "one"\n\n'));
        c.enqueue(enc.encode('event: done\ndata: {"ok":true}\n\n'));
        c.close();
      },
    });
    const fetchMock = vi.fn(async () => new Response(body, { status: 200, headers: { 'X-Job-Id': 'j1' } }));
    vi.stubGlobal('fetch', fetchMock);
    const got: string[] = [];
    let job = '';
    await stream('POST', '/api/stacks/web/deploy', (e) => got.push(`${e.event}:${e.data}`), {
      query: { env: 1 },
      body: { a: 1 },
      onOpen: (r) => (job = r.headers.get('X-Job-Id') ?? ''),
    });
    expect(got).toEqual(['line:"one"', 'done:{"ok":true}']);
    expect(job).toBe('j1');
    const [url, init] = fetchMock.mock.calls[0] as unknown as [string, RequestInit];
    expect(url).toBe('/api/stacks/web/deploy?env=1');
    expect(init.method).toBe('POST');
    expect(init.body).toBe('{"a":1}');
    expect((init.headers as Record<string, string>).Accept).toBe('text/event-stream');
  });

  it('rejects with the server message', async () => {
    vi.stubGlobal('fetch', vi.fn(async () => new Response('{"error":"Stack not found"}', { status: 404 })));
    const err = await stream('GET', '/api/x', () => {}).catch((e) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err.message).toBe('Stack not found');
    expect(err.status).toBe(404);
  });
});
