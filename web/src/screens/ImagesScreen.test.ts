import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type * as images from '../lib/api-images';
import { ApiError } from '../lib/api';
import { queryClient } from '../lib/query';
import { session } from '../lib/session.svelte';
import * as sse from '../lib/sse';
import { stubApi, type StubApi } from '../test-api';
import { expectNoSeriousAxeViolations } from '../test-axe';
import ImagesScreen from './ImagesScreen.svelte';

vi.mock('../lib/sse', async (importOriginal) => {
  const real = await importOriginal<typeof import('../lib/sse')>();
  return { ...real, followJob: vi.fn() };
});

const list: images.ImageSummary[] = [
  { Id: 'sha256:aaa111aaa111aaa1', RepoTags: ['nginx:1.27', 'nginx:latest'], Created: 1_700_000_000, Size: 190_000_000, Containers: -1 },
  { Id: 'sha256:bbb222bbb222bbb2', RepoTags: ['redis:7'], Created: 1_690_000_000, Size: 120_000_000, Containers: -1 },
  { Id: 'sha256:ccc333ccc333ccc3', RepoTags: ['<none>:<none>'], Created: 1_600_000_000, Size: 5_000_000, Containers: -1 },
];

const scanned: images.ScanResult = {
  imageId: 'sha256:bbb222bbb222bbb2',
  imageName: 'redis:7',
  scanner: 'scanner_a',
  scannedAt: '2026-01-01T00:00:00Z',
  summary: { critical: 1, high: 2, medium: 0, low: 0, negligible: 0, unknown: 0 },
  vulnerabilities: [],
};

const status = (scanner: string, name: string, usable: boolean, extra: Record<string, unknown> = {}) => ({
  scanner,
  name,
  usable,
  via: usable ? 'binary' : undefined,
  binarySetting: scanner === 'scanner_a' ? 'GRYPE_PATH' : 'TRIVY_PATH',
  image: `${name.toLowerCase()}:1`,
  imagePresent: false,
  ...extra,
});
const scanners = (a: boolean, b: boolean, extra: Record<string, unknown> = {}) => ({
  setting: 'none',
  usable: a || b,
  scanners: [status('scanner_a', 'Grype', a, a ? {} : extra), status('scanner_b', 'Trivy', b, { reason: 'Trivy is not installed.' })],
});

type Ev = [string, unknown];
/** Events each job id replays; a job waits for its gate (when one is set) before ending. */
let jobs: Record<string, Ev[]> = {};
let gate: Promise<void> | null = null;
let api: StubApi;

beforeEach(() => {
  session.environments = [{ id: 1, name: 'local', connectionType: 'socket' }];
  session.envId = 1;
  session.session = { authenticated: false, authEnabled: false };
  jobs = {};
  gate = null;
  api = stubApi({
    'GET /api/images': list,
    'GET /api/containers': [{ id: 'c1', imageId: 'sha256:aaa111aaa111aaa1' }],
    'GET /api/images/scan': (c: { query: Record<string, string> }) =>
      c.query.image === 'sha256:bbb222bbb222bbb2' ? { found: true, result: scanned } : { found: false },
    'GET /api/images/scanners': scanners(true, true),
    'GET /api/registries': [{ id: 7, name: 'local registry', url: '127.0.0.1:5000', username: 'berth', hasCredentials: true }],
    'DELETE /api/images/nginx:1.27': { success: true, removed: [{ untagged: 'nginx:1.27' }] },
    'POST /api/prune/images': { success: true, deleted: [{ deleted: 'sha256:ccc' }, { untagged: 'x' }], spaceReclaimed: 5_000_000 },
    'POST /api/images/sha256:aaa111aaa111aaa1/tag': { success: true, tag: 'nginx:stable' },
  });
  vi.mocked(sse.followJob).mockImplementation(async (jobId, onEvent) => {
    const evs = jobs[jobId] ?? [];
    for (const [i, [event, data]] of evs.entries()) {
      if (i === evs.length - 1 && gate) await gate;
      onEvent({ event, data: JSON.stringify(data) });
    }
  });
});
afterEach(() => {
  cleanup();
  queryClient.clear();
  vi.clearAllMocks();
  vi.unstubAllGlobals();
});

const groupHeaders = () => screen.getAllByRole('rowheader').map((h) => h.textContent?.replace(/\s+/g, ' ').trim());

describe('ImagesScreen', () => {
  it('lists the images grouped by repository, with use and scan status', async () => {
    render(ImagesScreen);
    expect(screen.getByRole('heading', { level: 1, name: 'Images' })).toBeTruthy();
    await screen.findByRole('table');
    expect(api.called('GET /api/images')[0].query).toEqual({ env: '1' });
    expect(groupHeaders()).toEqual(['nginx 2 tags', 'redis 1 tag', '<none> 1 image']);
    expect(screen.getByRole('link', { name: 'nginx:1.27' }).getAttribute('href')).toBe('/images/sha256%3Aaaa111aaa111aaa1');
    expect(screen.getByText('dangling')).toBeTruthy();
    expect(screen.getAllByText('1 container')).toHaveLength(2); // both names of the used image
    await waitFor(() => expect(screen.getByRole('link', { name: 'Scan results of redis:7' })).toBeTruthy());
    const pills = within(screen.getByRole('link', { name: 'Scan results of redis:7' }));
    expect(pills.getByText('critical', { exact: false }).textContent).toContain('1');
    expect(pills.getByText('high', { exact: false }).textContent).toContain('2');
    expect(api.called('GET /api/images/scan').map((c) => c.query.image)).toContain('sha256:ccc333ccc333ccc3');
    await waitFor(() => expect(screen.getAllByText('not scanned')).toHaveLength(3));
  });

  it('filters and shows an empty match state', async () => {
    render(ImagesScreen);
    await screen.findByRole('table');
    await fireEvent.input(screen.getByLabelText('Filter'), { target: { value: 'dangling' } });
    expect(groupHeaders()).toEqual(['<none> 1 image']);
    await fireEvent.input(screen.getByLabelText('Filter'), { target: { value: 'zzz' } });
    expect(screen.getByText(/No image matches/)).toBeTruthy();
  });

  it('shows the empty state and the list error', async () => {
    api.routes['GET /api/images'] = [];
    const r = render(ImagesScreen);
    expect(await screen.findByText('No images on this environment.')).toBeTruthy();
    r.unmount();
    queryClient.clear();
    api.routes['GET /api/images'] = () => {
      throw new ApiError(403, 'Access denied to this environment');
    };
    render(ImagesScreen);
    expect((await screen.findByRole('alert')).textContent).toContain('Access denied to this environment');
  });

  it('pulls through the dialog with live per-layer progress', async () => {
    api.routes['POST /api/images/pull'] = { jobId: 'pull-1' };
    api.routes['GET /api/images/scanners'] = { ...scanners(true, true), setting: 'none' };
    let open!: () => void;
    gate = new Promise((r) => (open = r));
    jobs['pull-1'] = [
      ['progress', { id: '1', status: 'Pulling from app', progressDetail: { current: 0, total: 0 } }],
      ['progress', { id: 'layer1', status: 'Downloading', progressDetail: { current: 500, total: 1000 } }],
      ['progress', { id: 'layer2', status: 'Already exists', progressDetail: { current: 0, total: 0 } }],
      ['result', { status: 'complete' }],
    ];
    render(ImagesScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Pull' }));
    const dialog = screen.getByRole('dialog', { name: 'Pull an image' });
    await waitFor(() => expect(within(dialog).getAllByRole('option')).toHaveLength(2));
    expect(within(dialog).getByText(/Scanning is off for this environment/)).toBeTruthy();
    await fireEvent.input(within(dialog).getByLabelText('Image reference'), { target: { value: 'app:1' } });
    await fireEvent.change(within(dialog).getByLabelText('Registry'), { target: { value: '7' } });
    expect(within(dialog).getByText('127.0.0.1:5000/app:1')).toBeTruthy();
    await fireEvent.click(within(dialog).getByLabelText(/Scan for vulnerabilities/));
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Pull' }));
    await waitFor(() => expect(api.called('POST /api/images/pull')[0]?.body).toEqual({ image: '127.0.0.1:5000/app:1', scanAfterPull: false }));

    // While the job runs: a bar per layer and the overall one.
    const layer1 = await within(dialog).findByRole('progressbar', { name: 'Layer layer1' });
    expect(layer1.getAttribute('aria-valuenow')).toBe('40');
    expect(within(dialog).getByRole('progressbar', { name: 'Layer layer2' }).getAttribute('aria-valuenow')).toBe('100');
    expect(within(dialog).getByRole('progressbar', { name: 'Pull progress overall' }).getAttribute('aria-valuenow')).toBe('70');
    expect(within(dialog).getByText('Pulling: 70%')).toBeTruthy();
    expect(within(dialog).getByRole('button', { name: 'Close (pull continues)' })).toBeTruthy();

    open();
    await within(dialog).findByText('Pull complete', { selector: 'strong' });
    expect(within(dialog).getByRole('progressbar', { name: 'Pull progress overall' }).getAttribute('aria-valuenow')).toBe('100');
    await waitFor(() => expect(api.called('GET /api/images').length).toBeGreaterThanOrEqual(2));
    expect(screen.getByRole('status').textContent).toContain('127.0.0.1:5000/app:1 pulled.');
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Close' }));
    expect(screen.queryByRole('dialog')).toBeNull();
  });

  it("shows a pull's error in the dialog", async () => {
    api.routes['POST /api/images/pull'] = { jobId: 'pull-2' };
    jobs['pull-2'] = [['result', { status: 'error', error: 'Authentication failed. Check registry credentials.' }]];
    render(ImagesScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Pull' }));
    const dialog = screen.getByRole('dialog');
    await fireEvent.input(within(dialog).getByLabelText('Image reference'), { target: { value: 'private/app' } });
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Pull' }));
    expect((await within(dialog).findByRole('alert')).textContent).toContain('Authentication failed');
  });

  it('asks before removing a tag, with the force option', async () => {
    render(ImagesScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Remove nginx:1.27' }));
    const dialog = screen.getByRole('dialog', { name: 'Remove nginx:1.27?' });
    expect(within(dialog).getByText(/stays under its other name/)).toBeTruthy();
    await fireEvent.click(within(dialog).getByRole('checkbox'));
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Remove' }));
    await waitFor(() => expect(api.called('DELETE /api/images/nginx:1.27')[0]?.query).toEqual({ env: '1', force: 'true' }));
    await waitFor(() => expect(screen.getByRole('status').textContent).toContain('untagged'));
  });

  it('removes an untagged image by id and shows the server message on failure', async () => {
    api.routes['DELETE /api/images/sha256:ccc333ccc333ccc3'] = () => {
      throw new ApiError(409, 'Failed to remove image');
    };
    render(ImagesScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Remove untagged image ccc333ccc333' }));
    await fireEvent.click(within(screen.getByRole('dialog')).getByRole('button', { name: 'Remove' }));
    await waitFor(() => expect(api.called('DELETE /api/images/sha256:ccc333ccc333ccc3')[0]?.query).toEqual({ env: '1', force: 'false' }));
    expect((await screen.findByRole('alert')).textContent).toContain('Failed to remove image');
  });

  it('prunes after confirmation and reports the space reclaimed', async () => {
    render(ImagesScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Prune' }));
    const dialog = screen.getByRole('dialog', { name: 'Prune images?' });
    await fireEvent.click(within(dialog).getByLabelText('All images no container uses'));
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Prune' }));
    await waitFor(() => expect(api.called('POST /api/prune/images')[0]?.body).toEqual({ dangling: false }));
    await waitFor(() => expect(screen.getByRole('status').textContent).toContain('1 image removed, 5.0 MB reclaimed'));
  });

  it('scans an image with progress, then shows the results', async () => {
    api.routes['POST /api/images/scan'] = { jobId: 'scan-1' };
    let open!: () => void;
    gate = new Promise((r) => (open = r));
    const result = { ...scanned, imageId: 'sha256:aaa111aaa111aaa1', imageName: 'nginx:1.27' };
    jobs['scan-1'] = [
      ['progress', { stage: 'scanning', message: 'Scanning nginx:1.27', progress: 0 }],
      ['progress', { stage: 'analyzing', message: 'Analyzing nginx:1.27 with Grype', progress: 45 }],
      ['result', { stage: 'complete', message: 'Scan complete', progress: 100, result, results: [result] }],
    ];
    render(ImagesScreen);
    await screen.findByRole('table');
    await fireEvent.click(await screen.findByRole('button', { name: 'Scan nginx:1.27' }));
    await waitFor(() => expect(api.called('POST /api/images/scan')[0]?.body).toEqual({ imageName: 'nginx:1.27' }));
    const bar = await screen.findByRole('progressbar', { name: 'Scan of nginx:1.27' });
    await waitFor(() => expect(bar.getAttribute('aria-valuenow')).toBe('45'));
    open();
    expect(await screen.findByText('Scan of nginx:1.27 complete.')).toBeTruthy();
    expect(screen.getByRole('link', { name: 'View results' }).getAttribute('href')).toBe('/images/sha256%3Aaaa111aaa111aaa1#scan');
    expect(screen.getByRole('link', { name: 'Scan results of nginx:1.27' })).toBeTruthy();
  });

  it('tags an image', async () => {
    render(ImagesScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Tag nginx:1.27' }));
    const dialog = screen.getByRole('dialog', { name: 'Tag nginx:1.27' });
    expect((within(dialog).getByLabelText('Repository') as HTMLInputElement).value).toBe('nginx');
    await fireEvent.input(within(dialog).getByLabelText('Tag'), { target: { value: 'bad:tag' } });
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Tag' }));
    expect(within(dialog).getByRole('alert').textContent).toContain('A tag has no');
    await fireEvent.input(within(dialog).getByLabelText('Tag'), { target: { value: 'stable' } });
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Tag' }));
    await waitFor(() => expect(api.called('POST /api/images/sha256:aaa111aaa111aaa1/tag')[0]?.body).toEqual({ repo: 'nginx', tag: 'stable' }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    expect(screen.getByRole('status').textContent).toContain('Tagged nginx:stable.');
  });

  it('pushes to a registry with progress', async () => {
    api.routes['POST /api/images/push'] = { jobId: 'push-1' };
    jobs['push-1'] = [
      ['message', { status: 'tagging', message: 'Tagging' }],
      ['message', { id: 'l1', status: 'Pushing', progressDetail: { current: 10, total: 20 } }],
      ['message', { status: 'complete', message: 'Pushed 127.0.0.1:5000/redis:7', targetTag: '127.0.0.1:5000/redis:7' }],
    ];
    render(ImagesScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Push redis:7' }));
    const dialog = screen.getByRole('dialog', { name: 'Push redis:7' });
    expect(await within(dialog).findByText('127.0.0.1:5000/redis:7')).toBeTruthy();
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Push' }));
    await waitFor(() => expect(api.called('POST /api/images/push')[0]?.body).toEqual({ imageId: 'sha256:bbb222bbb222bbb2', registryId: 7, imageName: 'redis:7' }));
    expect(await within(dialog).findByText('Pushed 127.0.0.1:5000/redis:7')).toBeTruthy();
    expect(within(dialog).getByRole('progressbar', { name: 'Layer l1' }).getAttribute('aria-valuenow')).toBe('100');
  });

  it('scans with the one scanner that can run when the setting names both', async () => {
    api.routes['GET /api/images/scanners'] = { ...scanners(false, true), setting: 'both' };
    api.routes['POST /api/images/scan'] = { jobId: 'scan-2' };
    render(ImagesScreen);
    await fireEvent.click(await screen.findByRole('button', { name: 'Scan redis:7' }));
    await waitFor(() => expect(api.called('POST /api/images/scan')[0]?.body).toEqual({ imageName: 'redis:7', scanner: 'scanner_b' }));
  });

  it('offers no Scan while no scanner can run, and pulls a scanner image a registry serves', async () => {
    api.routes['GET /api/images/scanners'] = scanners(false, false, {
      reason: 'Grype is not installed. To scan, pull its image from mirror.',
      image: 'anchore/grype:v0.120.1',
      pullFrom: { registryId: 7, registryName: 'mirror', reference: '127.0.0.1:5000/anchore/grype:v0.120.1' },
    });
    api.routes['POST /api/images/scanners/pull'] = { jobId: 'pull-s' };
    jobs['pull-s'] = [
      ['progress', { id: 'l1', status: 'Downloading', progressDetail: { current: 5, total: 10 } }],
      ['result', { status: 'complete', message: 'Pulled anchore/grype:v0.120.1 from mirror' }],
    ];
    render(ImagesScreen);
    const help = await screen.findByRole('region', { name: 'No vulnerability scanner on this environment' });
    await screen.findByRole('table');
    expect(screen.queryByRole('button', { name: /^Scan / })).toBeNull();
    expect(within(help).getByText(/Trivy is not installed/)).toBeTruthy();
    expect(within(help).getByRole('link', { name: 'Settings' }).getAttribute('href')).toBe('/settings#scanner-title');

    api.routes['GET /api/images/scanners'] = scanners(true, false);
    await fireEvent.click(within(help).getByRole('button', { name: 'Pull Grype image' }));
    await waitFor(() => expect(api.called('POST /api/images/scanners/pull')[0]?.body).toEqual({ scanner: 'scanner_a' }));
    expect(api.called('POST /api/images/scanners/pull')[0].query).toEqual({ env: '1' });
    expect(await screen.findByRole('button', { name: 'Scan nginx:1.27' })).toBeTruthy();
    expect(screen.queryByRole('region', { name: 'No vulnerability scanner on this environment' })).toBeNull();
  });

  it('offers no scanner pull to a user who may not pull, nor Scan to one who may not inspect', async () => {
    session.session = {
      authenticated: true,
      authEnabled: true,
      user: { id: 2, username: 'o', isAdmin: false, environmentPermissions: { '1': { images: ['view', 'inspect'] } } },
    };
    api.routes['GET /api/images/scanners'] = scanners(false, false, {
      reason: 'Grype is not installed.',
      pullFrom: { registryId: 7, registryName: 'mirror', reference: '127.0.0.1:5000/grype:1' },
    });
    const r = render(ImagesScreen);
    const help = await screen.findByRole('region', { name: 'No vulnerability scanner on this environment' });
    expect(within(help).queryByRole('button')).toBeNull();
    expect(within(help).queryByRole('link', { name: 'Settings' })).toBeNull();
    r.unmount();
    queryClient.clear();
    session.session = {
      authenticated: true,
      authEnabled: true,
      user: { id: 3, username: 'v', isAdmin: false, environmentPermissions: { '1': { images: ['view'] } } },
    };
    render(ImagesScreen);
    await screen.findByRole('table');
    expect(screen.queryByRole('region', { name: 'No vulnerability scanner on this environment' })).toBeNull();
    expect(screen.queryByRole('button', { name: /^Scan / })).toBeNull();
    expect(api.called('GET /api/images/scanners')).toHaveLength(1);
  });

  it('has no serious or critical axe violations, nor with the pull dialog open', async () => {
    const { container } = render(ImagesScreen);
    await screen.findByRole('table');
    await waitFor(() => expect(screen.queryByText('…')).toBeNull());
    await expectNoSeriousAxeViolations(container);
    await fireEvent.click(screen.getByRole('button', { name: 'Pull' }));
    await expectNoSeriousAxeViolations(container);
  });
});
