import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import * as images from '../lib/api-images';
import { ApiError } from '../lib/api';
import { session } from '../lib/session.svelte';
import * as sse from '../lib/sse';
import { expectNoSeriousAxeViolations } from '../test-axe';
import ImagesScreen from './ImagesScreen.svelte';

vi.mock('../lib/api-images', async (importOriginal) => {
  const real = await importOriginal<typeof import('../lib/api-images')>();
  return {
    ...real,
    listImages: vi.fn(),
    listContainerImages: vi.fn(),
    scanResult: vi.fn(),
    pullImage: vi.fn(),
    pushImage: vi.fn(),
    tagImage: vi.fn(),
    removeImage: vi.fn(),
    pruneImages: vi.fn(),
    scanImage: vi.fn(),
    listRegistries: vi.fn(),
    scannerSetting: vi.fn(),
  };
});

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

type Ev = [string, unknown];
/** Events each job id replays; a job waits for its gate (when one is set) before ending. */
let jobs: Record<string, Ev[]> = {};
let gate: Promise<void> | null = null;

beforeEach(() => {
  session.environments = [{ id: 1, name: 'local', connectionType: 'socket' }];
  session.envId = 1;
  jobs = {};
  gate = null;
  vi.mocked(images.listImages).mockResolvedValue(structuredClone(list));
  vi.mocked(images.listContainerImages).mockResolvedValue([{ id: 'c1', imageId: 'sha256:aaa111aaa111aaa1' }]);
  vi.mocked(images.scanResult).mockImplementation(async (_env, image) =>
    image === 'sha256:bbb222bbb222bbb2' ? { found: true, result: scanned } : { found: false },
  );
  vi.mocked(images.listRegistries).mockResolvedValue([
    { id: 7, name: 'local registry', url: '127.0.0.1:5000', username: 'berth', hasCredentials: true },
  ]);
  vi.mocked(images.scannerSetting).mockResolvedValue({ scanner: 'none' });
  vi.mocked(images.removeImage).mockResolvedValue({ success: true, removed: [{ untagged: 'nginx:1.27' }] });
  vi.mocked(images.pruneImages).mockResolvedValue({ success: true, deleted: [{ deleted: 'sha256:ccc' }, { untagged: 'x' }], spaceReclaimed: 5_000_000 });
  vi.mocked(images.tagImage).mockResolvedValue({ success: true, tag: 'nginx:stable' });
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
  vi.clearAllMocks();
});

const groupHeaders = () => screen.getAllByRole('rowheader').map((h) => h.textContent?.replace(/\s+/g, ' ').trim());

describe('ImagesScreen', () => {
  it('lists the images grouped by repository, with use and scan status', async () => {
    render(ImagesScreen);
    expect(screen.getByRole('heading', { level: 1, name: 'Images' })).toBeTruthy();
    await screen.findByRole('table');
    expect(images.listImages).toHaveBeenCalledWith(1);
    expect(groupHeaders()).toEqual(['nginx 2 tags', 'redis 1 tag', '<none> 1 image']);
    expect(screen.getByRole('link', { name: 'nginx:1.27' }).getAttribute('href')).toBe('/images/sha256%3Aaaa111aaa111aaa1');
    expect(screen.getByText('dangling')).toBeTruthy();
    expect(screen.getAllByText('1 container')).toHaveLength(2); // both names of the used image
    await waitFor(() => expect(screen.getByRole('link', { name: 'Scan results of redis:7' })).toBeTruthy());
    const pills = within(screen.getByRole('link', { name: 'Scan results of redis:7' }));
    expect(pills.getByText('critical', { exact: false }).textContent).toContain('1');
    expect(pills.getByText('high', { exact: false }).textContent).toContain('2');
    expect(images.scanResult).toHaveBeenCalledWith(1, 'sha256:ccc333ccc333ccc3', undefined, expect.any(AbortSignal));
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
    vi.mocked(images.listImages).mockResolvedValueOnce([]);
    const r = render(ImagesScreen);
    expect(await screen.findByText('No images on this environment.')).toBeTruthy();
    r.unmount();
    vi.mocked(images.listImages).mockRejectedValueOnce(new ApiError(403, 'Access denied to this environment'));
    render(ImagesScreen);
    expect((await screen.findByRole('alert')).textContent).toContain('Access denied to this environment');
  });

  it('pulls through the dialog with live per-layer progress', async () => {
    vi.mocked(images.pullImage).mockResolvedValue({ jobId: 'pull-1' });
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
    expect(images.pullImage).toHaveBeenCalledWith(1, '127.0.0.1:5000/app:1', false);

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
    await waitFor(() => expect(images.listImages).toHaveBeenCalledTimes(2));
    expect(screen.getByRole('status').textContent).toContain('127.0.0.1:5000/app:1 pulled.');
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Close' }));
    expect(screen.queryByRole('dialog')).toBeNull();
  });

  it("shows a pull's error in the dialog", async () => {
    vi.mocked(images.pullImage).mockResolvedValue({ jobId: 'pull-2' });
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
    await waitFor(() => expect(images.removeImage).toHaveBeenCalledWith(1, 'nginx:1.27', true));
    await waitFor(() => expect(screen.getByRole('status').textContent).toContain('untagged'));
  });

  it('removes an untagged image by id and shows the server message on failure', async () => {
    vi.mocked(images.removeImage).mockRejectedValueOnce(new ApiError(409, 'Failed to remove image'));
    render(ImagesScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Remove untagged image ccc333ccc333' }));
    await fireEvent.click(within(screen.getByRole('dialog')).getByRole('button', { name: 'Remove' }));
    expect(images.removeImage).toHaveBeenCalledWith(1, 'sha256:ccc333ccc333ccc3', false);
    expect((await screen.findByRole('alert')).textContent).toContain('Failed to remove image');
  });

  it('prunes after confirmation and reports the space reclaimed', async () => {
    render(ImagesScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Prune' }));
    const dialog = screen.getByRole('dialog', { name: 'Prune images?' });
    await fireEvent.click(within(dialog).getByLabelText('All images no container uses'));
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Prune' }));
    await waitFor(() => expect(images.pruneImages).toHaveBeenCalledWith(1, true));
    await waitFor(() => expect(screen.getByRole('status').textContent).toContain('1 image removed, 5.0 MB reclaimed'));
  });

  it('scans an image with progress, then shows the results', async () => {
    vi.mocked(images.scanImage).mockResolvedValue({ jobId: 'scan-1' });
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
    await fireEvent.click(screen.getByRole('button', { name: 'Scan nginx:1.27' }));
    expect(images.scanImage).toHaveBeenCalledWith(1, 'nginx:1.27', '');
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
    await waitFor(() => expect(images.tagImage).toHaveBeenCalledWith(1, 'sha256:aaa111aaa111aaa1', 'nginx', 'stable'));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    expect(screen.getByRole('status').textContent).toContain('Tagged nginx:stable.');
  });

  it('pushes to a registry with progress', async () => {
    vi.mocked(images.pushImage).mockResolvedValue({ jobId: 'push-1' });
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
    expect(images.pushImage).toHaveBeenCalledWith(1, { imageId: 'sha256:bbb222bbb222bbb2', registryId: 7, imageName: 'redis:7', newTag: undefined });
    expect(await within(dialog).findByText('Pushed 127.0.0.1:5000/redis:7')).toBeTruthy();
    expect(within(dialog).getByRole('progressbar', { name: 'Layer l1' }).getAttribute('aria-valuenow')).toBe('100');
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
