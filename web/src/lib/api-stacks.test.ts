import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from './api';
import { runStreamed } from './api-stacks';
import { webhookUrl } from './api-git';

function sse(chunks: string[], init: ResponseInit = {}): Response {
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      const enc = new TextEncoder();
      for (const s of chunks) c.enqueue(enc.encode(s));
      c.close();
    },
  });
  return new Response(body, { status: 200, headers: { 'Content-Type': 'text/event-stream', ...(init.headers ?? {}) } });
}

afterEach(() => vi.unstubAllGlobals());

describe('streamed deploys', () => {
  it('posts the create body, hands each line on and resolves with the final payload', async () => {
    const fetchMock = vi.fn(async () =>
      sse(
        [
          ': keepalive\n\n',
          'data: {"message":"Network demo_default Creating"}\n\n',
          'data: {"message":"Container demo-web-1 Started"}\n\ndata: {"success":true,"started":true,"output":"…"}\n\n',
        ],
        { headers: { 'X-Job-Id': 'j1' } },
      ),
    );
    vi.stubGlobal('fetch', fetchMock);
    const lines: string[] = [];
    const body = { name: 'demo', compose: 'services: {}', envVars: [], rawEnvContent: '' };
    const r = await runStreamed('POST', '/api/stacks', { query: { env: 1 }, body }, (l) => lines.push(l));
    expect(lines).toEqual(['Network demo_default Creating', 'Container demo-web-1 Started']);
    expect(r).toEqual({ success: true, started: true, output: '…' });
    const [url, init] = fetchMock.mock.calls[0] as unknown as [string, RequestInit];
    expect(url).toBe('/api/stacks?env=1');
    expect(init.method).toBe('POST');
    expect(JSON.parse(init.body as string)).toEqual({ name: 'demo', compose: 'services: {}', envVars: [], rawEnvContent: '' });
  });

  it('resolves with a failed final payload (the stack exists, compose failed)', async () => {
    vi.stubGlobal('fetch', vi.fn(async () => sse(['data: {"success":false,"started":false,"error":"pull access denied","output":""}\n\n'])));
    const r = await runStreamed('POST', '/api/stacks/x/deploy', {}, () => {});
    expect(r).toMatchObject({ success: false, error: 'pull access denied' });
  });

  it('rejects with the server message when refused before the stream', async () => {
    vi.stubGlobal('fetch', vi.fn(async () => new Response('{"error":"Stack name is required"}', { status: 400 })));
    const err = await runStreamed('POST', '/api/stacks', {}, () => {}).catch((e) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err.message).toBe('Stack name is required');
  });

  it('follows the job again when the stream ends early, skipping the events already seen', async () => {
    const fetchMock = vi
      .fn()
      .mockResolvedValueOnce(sse(['data: {"message":"one"}\n\n'], { headers: { 'X-Job-Id': 'job 7' } }))
      .mockResolvedValueOnce(sse(['data: {"message":"one"}\n\n', 'data: {"message":"two"}\n\n', 'data: {"success":true}\n\n']));
    vi.stubGlobal('fetch', fetchMock);
    const lines: string[] = [];
    const r = await runStreamed('POST', '/api/stacks/x/deploy', { query: { env: 1 } }, (l) => lines.push(l));
    expect(lines).toEqual(['one', 'two']);
    expect(r).toEqual({ success: true });
    expect(fetchMock.mock.calls[1][0]).toBe('/api/jobs/job%207');
  });

  it('fails when the stream ends without a result and no job to follow', async () => {
    vi.stubGlobal('fetch', vi.fn(async () => sse(['data: {"message":"one"}\n\n'])));
    await expect(runStreamed('POST', '/x', {}, () => {})).rejects.toThrow('The operation ended without a result');
  });
});

describe('small calls', () => {
  it('builds a webhook URL from the path the API gives', () => {
    expect(webhookUrl('/api/git/stacks/5/webhook', 'https://berth.example')).toBe('https://berth.example/api/git/stacks/5/webhook');
  });
});
