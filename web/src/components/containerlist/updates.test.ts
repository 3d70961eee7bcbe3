import { afterEach, describe, expect, it, vi } from 'vitest';
import { stubApi } from '../../test-api';
import { runUpdates } from './updates';

const sse = (events: [string, unknown][]) =>
  new Response(events.map(([e, d]) => `event: ${e}\ndata: ${JSON.stringify(d)}\n\n`).join(''), {
    status: 200,
    headers: { 'Content-Type': 'text/event-stream' },
  });

afterEach(() => vi.unstubAllGlobals());

describe('runUpdates', () => {
  it('reads the batch update as a stream: each outcome as it finishes, then all of them', async () => {
    const a = { container: 'a1', name: 'web', status: 'updated', success: true };
    const b = { container: 'b2', name: 'db', status: 'failed', success: false, error: 'pull failed' };
    const api = stubApi({
      'POST /api/containers/batch-update-stream': () =>
        sse([
          ['start', { container: 'a1', index: 0, total: 2 }],
          ['result', { index: 0, total: 2, result: a }],
          ['result', { index: 1, total: 2, result: b }],
          ['complete', { success: false, results: [a, b], summary: { total: 2, success: 1, failed: 1 } }],
        ]),
    });
    const seen: [string, number][] = [];
    const out = await runUpdates(3, ['a1', 'b2'], (r, n) => seen.push([r.container, n]));
    expect(out).toEqual([a, b]);
    expect(seen).toEqual([
      ['a1', 1],
      ['b2', 2],
    ]);
    const call = api.called('POST /api/containers/batch-update-stream')[0];
    expect(call.query).toEqual({ env: '3' });
    expect(call.body).toEqual({ containerIds: ['a1', 'b2'] });
  });

  it('rejects with the server message when the stream ends without results', async () => {
    stubApi({ 'POST /api/containers/batch-update-stream': () => sse([['error', { error: 'engine offline' }]]) });
    await expect(runUpdates(3, ['a1'])).rejects.toThrow('engine offline');
  });
});
