import { afterEach, describe, expect, it, vi } from 'vitest';
import { pruneImages, pullImage, pushImage, removeImage, scanImage, scanResult, tagImage, testRegistry, updateRegistry } from './api-images';

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
  it('starts pull, push and scan as jobs: the Accept header does not ask for the synchronous answer', async () => {
    const calls = stubFetch();
    await pullImage(1, 'nginx:1.27', false);
    await pushImage(1, { imageId: 'sha256:a', registryId: 2, imageName: 'nginx:1.27' });
    await scanImage(1, 'nginx:1.27', '');
    await scanImage(1, 'nginx:1.27', 'scanner_b');
    expect(calls()).toEqual([
      { url: '/api/images/pull?env=1', method: 'POST', body: { image: 'nginx:1.27', scanAfterPull: false }, accept: '*/*' },
      { url: '/api/images/push?env=1', method: 'POST', body: { imageId: 'sha256:a', registryId: 2, imageName: 'nginx:1.27' }, accept: '*/*' },
      { url: '/api/images/scan?env=1', method: 'POST', body: { imageName: 'nginx:1.27' }, accept: '*/*' },
      { url: '/api/images/scan?env=1', method: 'POST', body: { imageName: 'nginx:1.27', scanner: 'scanner_b' }, accept: '*/*' },
    ]);
  });

  it('addresses images by escaped id or name', async () => {
    const calls = stubFetch({ success: true });
    await tagImage(1, 'reg:5000/app:1', 'app', '2');
    await removeImage(1, 'reg:5000/app:1', true);
    await scanResult(1, 'sha256:abc', 'scanner_a');
    await pruneImages(1, true);
    await testRegistry(1, { id: 3 });
    await updateRegistry(3, { name: 'r', url: 'reg:5000' });
    expect(calls().map((c) => `${c.method} ${c.url} ${JSON.stringify(c.body ?? null)}`)).toEqual([
      'POST /api/images/reg%3A5000%2Fapp%3A1/tag?env=1 {"repo":"app","tag":"2"}',
      'DELETE /api/images/reg%3A5000%2Fapp%3A1?env=1&force=true null',
      'GET /api/images/scan?env=1&image=sha256%3Aabc&scanner=scanner_a null',
      'POST /api/prune/images?env=1 {"dangling":false}',
      'POST /api/registries/test?env=1 {"id":3}',
      'PUT /api/registries/3 {"name":"r","url":"reg:5000"}',
    ]);
  });
});
