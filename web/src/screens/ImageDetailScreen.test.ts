import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type * as images from '../lib/api-images';
import { ApiError } from '../lib/api';
import { queryClient } from '../lib/query';
import { router } from '../lib/router.svelte';
import type { Route } from '../lib/routes';
import { session } from '../lib/session.svelte';
import * as sse from '../lib/sse';
import { stubApi, type StubApi, type StubCall } from '../test-api';
import { expectNoSeriousAxeViolations } from '../test-axe';
import ImageDetailScreen from './ImageDetailScreen.svelte';

vi.mock('../lib/sse', async (importOriginal) => {
  const real = await importOriginal<typeof import('../lib/sse')>();
  return { ...real, followJob: vi.fn() };
});

const ID = 'sha256:3f2b9e0d8c7a6b5e4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e';
const image: images.ImageSummary = {
  Id: ID,
  RepoTags: ['berth-test/debian-vuln:1', 'vuln:latest'],
  RepoDigests: ['127.0.0.1:5000/vuln@sha256:feed'],
  Created: 1_700_000_000,
  Size: 1_983_342,
  Labels: { 'org.example.team': 'platform' },
  Containers: -1,
};

const grype: images.ScanResult = {
  imageId: ID,
  imageName: 'berth-test/debian-vuln:1',
  scanner: 'scanner_a',
  scannedAt: '2026-01-02T03:04:05Z',
  scanDuration: 4200,
  summary: { critical: 1, high: 1, medium: 1, low: 0, negligible: 0, unknown: 0 },
  vulnerabilities: [
    { id: 'CVE-2023-4911', severity: 'high', package: 'libc6', version: '2.36-9', fixedVersion: '2.36-9+deb12u3', urls: ['https://security-tracker.debian.org/tracker/CVE-2023-4911'] },
    { id: 'CVE-2024-0001', severity: 'critical', package: 'openssl', version: '3.0.11', fixedVersion: '3.0.13' },
    { id: 'CVE-2022-0002', severity: 'medium', package: 'zlib1g', version: '1.2.13', description: 'memory corruption' },
  ],
};

const route = (id: string): Route => ({ name: 'image', params: { id }, path: `/images/${encodeURIComponent(id)}` });

const usable = (a: boolean, b: boolean) => ({
  setting: 'none',
  usable: a || b,
  scanners: [
    { scanner: 'scanner_a', name: 'Grype', usable: a, binarySetting: 'GRYPE_PATH', image: 'grype:1', imagePresent: false, reason: a ? undefined : 'Grype is not installed.' },
    { scanner: 'scanner_b', name: 'Trivy', usable: b, binarySetting: 'TRIVY_PATH', image: 'trivy:1', imagePresent: false, reason: b ? undefined : 'Trivy is not installed.' },
  ],
});

let api: StubApi;
beforeEach(() => {
  session.environments = [{ id: 1, name: 'local', connectionType: 'socket' }];
  session.envId = 1;
  session.session = { authenticated: false, authEnabled: false };
  api = stubApi({
    'GET /api/images': [structuredClone(image), { Id: 'sha256:other', RepoTags: ['x:1'] }],
    'GET /api/containers': [{ id: 'c1', imageId: ID }, { id: 'c2', imageId: ID }],
    [`GET /api/images/${ID}`]: {
      Id: ID,
      Os: 'linux',
      Architecture: 'amd64',
      Config: { Cmd: ['bash'], Entrypoint: null, Env: ['PATH=/usr/bin', 'LANG=C.UTF-8'], ExposedPorts: { '8080/tcp': {} }, WorkingDir: '/srv' },
      RootFS: { Layers: ['sha256:a', 'sha256:b'] },
    },
    [`GET /api/images/${ID}/history`]: [
      { Id: ID, Created: 1_700_000_000, CreatedBy: '/bin/sh -c #(nop)  CMD ["bash"]', Size: 0 },
      { Id: '<missing>', Created: 1_699_000_000, CreatedBy: '/bin/sh -c #(nop) ADD file:abc in / ', Size: 1_983_342, Comment: 'base' },
    ],
    'GET /api/images/scan': (c: StubCall) => (c.query.scanner === 'scanner_a' ? { found: true, result: structuredClone(grype) } : { found: false }),
    'GET /api/images/scanners': usable(true, true),
    'DELETE /api/images/vuln:latest': { success: true, removed: [{ untagged: 'vuln:latest' }] },
    [`DELETE /api/images/${ID}`]: { success: true, removed: [{ deleted: ID }] },
  });
});
afterEach(() => {
  cleanup();
  queryClient.clear();
  vi.clearAllMocks();
  vi.unstubAllGlobals();
});

const vulnIds = (table: HTMLElement) =>
  within(table)
    .getAllByRole('row')
    .slice(1)
    .map((r) => within(r).getAllByRole('cell')[0].textContent?.trim());

describe('ImageDetailScreen', () => {
  it('shows the facts, tags, history and the stored scan results', async () => {
    render(ImageDetailScreen, { route: route(ID) });
    expect(await screen.findByRole('heading', { level: 1, name: 'berth-test/debian-vuln:1' })).toBeTruthy();
    expect(screen.getByText(ID)).toBeTruthy();
    expect(screen.getByText('by 2 containers')).toBeTruthy();
    expect(screen.getByText('org.example.team=platform')).toBeTruthy();
    expect(screen.getByText('vuln:latest')).toBeTruthy();
    expect(screen.getByText('127.0.0.1:5000/vuln@sha256:feed')).toBeTruthy();
    expect(await screen.findByText('CMD ["bash"]')).toBeTruthy();
    expect(api.called(`GET /api/images/${ID}/history`)[0]?.query).toEqual({ env: '1' });
    expect(api.called('GET /api/images/scan').map((c) => c.query)).toEqual([
      { env: '1', image: ID, scanner: 'scanner_a' },
      { env: '1', image: ID, scanner: 'scanner_b' },
    ]);

    const section = await screen.findByRole('region', { name: 'Grype' });
    const pills = within(section).getByRole('list', { name: '3 vulnerabilities by severity' });
    expect(within(pills).getAllByRole('listitem').map((li) => li.textContent?.replace(/\s+/g, ' ').trim())).toEqual([
      '1 critical', '1 high', '1 medium', '0 low', '0 negligible', '0 unknown',
    ]);
    const table = within(section).getByRole('table');
    expect(vulnIds(table)).toEqual(['CVE-2024-0001', 'CVE-2023-4911', 'CVE-2022-0002']); // most severe first
    expect(within(table).getByRole('link', { name: 'CVE-2023-4911' }).getAttribute('href')).toBe(
      'https://security-tracker.debian.org/tracker/CVE-2023-4911',
    );
    expect(within(table).getByRole('link', { name: 'CVE-2024-0001' }).getAttribute('href')).toBe('https://nvd.nist.gov/vuln/detail/CVE-2024-0001');
    expect(within(table).getByText('2.36-9+deb12u3')).toBeTruthy();
    expect(within(table).getByText('no fix')).toBeTruthy();
    expect(screen.getByRole('link', { name: 'Settings' }).getAttribute('href')).toBe('/settings');
    expect(screen.getByRole('button', { name: 'Scan now' })).toBeTruthy();
  });

  it('filters the findings by severity and text, and sorts by column', async () => {
    render(ImageDetailScreen, { route: route(ID) });
    const section = await screen.findByRole('region', { name: 'Grype' });
    const table = () => within(section).getByRole('table');
    await fireEvent.change(within(section).getByLabelText('Severity'), { target: { value: 'high' } });
    expect(vulnIds(table())).toEqual(['CVE-2023-4911']);
    await fireEvent.change(within(section).getByLabelText('Severity'), { target: { value: '' } });
    await fireEvent.input(within(section).getByLabelText('Search'), { target: { value: 'corruption' } });
    expect(vulnIds(table())).toEqual(['CVE-2022-0002']);
    await fireEvent.input(within(section).getByLabelText('Search'), { target: { value: 'nothing-like-it' } });
    expect(within(section).getByText('No vulnerability matches.')).toBeTruthy();
    await fireEvent.click(within(section).getByRole('button', { name: 'Clear filters' }));
    await fireEvent.click(within(section).getByRole('button', { name: /Package/ }));
    expect(vulnIds(table())).toEqual(['CVE-2023-4911', 'CVE-2024-0001', 'CVE-2022-0002']); // libc6, openssl, zlib1g
    expect(within(section).getByRole('columnheader', { name: /Package/ }).getAttribute('aria-sort')).toBe('ascending');
  });

  it('scans now with the chosen scanner and shows progress, then the new results', async () => {
    api.routes['GET /api/images/scan'] = { found: false };
    api.routes['POST /api/images/scan'] = { jobId: 'j1' };
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const trivy: images.ScanResult = { ...grype, scanner: 'scanner_b', summary: undefined, vulnerabilities: grype.vulnerabilities!.slice(0, 1) };
    vi.mocked(sse.followJob).mockImplementation(async (_id, onEvent) => {
      onEvent({ event: 'progress', data: JSON.stringify({ stage: 'analyzing', message: 'Analyzing with Trivy', progress: 10 }) });
      await gate;
      onEvent({ event: 'result', data: JSON.stringify({ stage: 'complete', message: 'done', progress: 100, result: trivy, results: [trivy] }) });
    });
    render(ImageDetailScreen, { route: route(ID) });
    expect(await screen.findByText('This image has not been scanned yet.')).toBeTruthy();
    await fireEvent.change(await screen.findByLabelText('Scanner'), { target: { value: 'scanner_b' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Scan now' }));
    await waitFor(() => expect(api.called('POST /api/images/scan')[0]?.body).toEqual({ imageName: 'berth-test/debian-vuln:1', scanner: 'scanner_b' }));
    const bar = await screen.findByRole('progressbar', { name: 'Scan of berth-test/debian-vuln:1' });
    expect(bar.getAttribute('aria-valuenow')).toBe('10');
    expect((screen.getByRole('button', { name: 'Scanning…' }) as HTMLButtonElement).disabled).toBe(true);
    open();
    const section = await screen.findByRole('region', { name: 'Trivy' });
    expect(within(section).getByText('1 vulnerabilities', { exact: false })).toBeTruthy();
    expect(screen.queryByRole('progressbar')).toBeNull();
  });

  it("shows a scan job's error", async () => {
    api.routes['POST /api/images/scan'] = { jobId: 'j2' };
    vi.mocked(sse.followJob).mockImplementation(async (_id, onEvent) => {
      onEvent({ event: 'result', data: JSON.stringify({ stage: 'error', message: 'Scan failed', error: 'scanner not available' }) });
    });
    render(ImageDetailScreen, { route: route(ID) });
    await screen.findByRole('region', { name: 'Grype' });
    await fireEvent.click(await screen.findByRole('button', { name: 'Scan now' }));
    expect((await screen.findByRole('alert')).textContent).toContain('Scan failed: scanner not available');
  });

  it('offers no Scan now while no scanner can run, and says how to get one', async () => {
    api.routes['GET /api/images/scanners'] = usable(false, false);
    render(ImageDetailScreen, { route: route(ID) });
    const help = await screen.findByRole('region', { name: 'No vulnerability scanner on this environment' });
    expect(within(help).getByText(/Grype is not installed\./)).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Scan now' })).toBeNull();
    expect(await screen.findByRole('region', { name: 'Grype' })).toBeTruthy(); // the stored results stay readable
  });

  it('scans with the scanner that can run, and offers only it', async () => {
    api.routes['GET /api/images/scanners'] = usable(false, true);
    api.routes['POST /api/images/scan'] = { jobId: 'j3' };
    vi.mocked(sse.followJob).mockImplementation(async () => {});
    render(ImageDetailScreen, { route: route(ID) });
    const select = (await screen.findByLabelText('Scanner')) as HTMLSelectElement;
    expect([...select.options].map((o) => o.textContent)).toEqual(['Trivy (the one that can run)', 'Trivy only']);
    await fireEvent.click(screen.getByRole('button', { name: 'Scan now' }));
    await waitFor(() => expect(api.called('POST /api/images/scan')[0]?.body).toEqual({ imageName: 'berth-test/debian-vuln:1', scanner: 'scanner_b' }));
  });

  it('removes a tag after confirmation', async () => {
    render(ImageDetailScreen, { route: route(ID) });
    await screen.findByRole('heading', { level: 1, name: 'berth-test/debian-vuln:1' });
    await fireEvent.click(screen.getByRole('button', { name: 'Remove tag vuln:latest' }));
    const dialog = screen.getByRole('dialog', { name: 'Remove tag vuln:latest?' });
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Remove tag' }));
    await waitFor(() => expect(api.called('DELETE /api/images/vuln:latest')[0]?.query).toEqual({ env: '1', force: 'false' }));
    await waitFor(() => expect(screen.getByRole('status').textContent).toContain('Tag vuln:latest removed.'));
  });

  it('removes the image and goes back to the list', async () => {
    const nav = vi.spyOn(router, 'navigate').mockImplementation(() => {});
    render(ImageDetailScreen, { route: route(ID) });
    await screen.findByRole('heading', { level: 1, name: 'berth-test/debian-vuln:1' });
    await fireEvent.click(screen.getByRole('button', { name: 'Remove' }));
    const dialog = screen.getByRole('dialog');
    await fireEvent.click(within(dialog).getByRole('checkbox'));
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Remove' }));
    await waitFor(() => expect(api.called(`DELETE /api/images/${ID}`)[0]?.query).toEqual({ env: '1', force: 'true' }));
    await waitFor(() => expect(nav).toHaveBeenCalledWith('/images'));
    nav.mockRestore();
  });

  it('says when the image is not there, and shows API errors', async () => {
    const r = render(ImageDetailScreen, { route: route('sha256:gone') });
    expect((await screen.findByRole('alert')).textContent).toContain('Image not found on this environment');
    r.unmount();
    queryClient.clear();
    api.routes['GET /api/images'] = () => {
      throw new ApiError(409, 'Environment is offline');
    };
    render(ImageDetailScreen, { route: route(ID) });
    expect((await screen.findByRole('alert')).textContent).toContain('Environment is offline');
  });

  it('has no serious or critical axe violations', async () => {
    const { container } = render(ImageDetailScreen, { route: route(ID) });
    await screen.findByRole('region', { name: 'Grype' });
    await screen.findByText('CMD ["bash"]');
    await expectNoSeriousAxeViolations(container);
  });
});

describe('image detail: the engine inspection', () => {
  it('shows platform, command, ports, working directory and environment', async () => {
    render(ImageDetailScreen, { route: route(ID) });
    await screen.findByText('linux/amd64');
    expect(api.called(`GET /api/images/${ID}`)[0]?.query).toEqual({ env: '1' });
    expect(screen.getByText('8080/tcp')).toBeTruthy();
    expect(screen.getByText('/srv')).toBeTruthy();
    expect(screen.getByText('LANG=C.UTF-8')).toBeTruthy();
  });

  it('still shows the page when the inspection fails', async () => {
    api.routes[`GET /api/images/${ID}`] = () => {
      throw new ApiError(500, 'boom');
    };
    render(ImageDetailScreen, { route: route(ID) });
    await screen.findByRole('heading', { level: 2, name: 'Details' });
    await waitFor(() => expect(api.called(`GET /api/images/${ID}`)).toHaveLength(1));
    expect(screen.queryByText('Platform')).toBeNull();
    expect(screen.queryByRole('alert')).toBeNull();
  });
});
