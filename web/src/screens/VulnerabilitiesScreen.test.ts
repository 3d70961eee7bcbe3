import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { queryClient } from '../lib/query';
import { session } from '../lib/session.svelte';
import * as sse from '../lib/sse';
import { stubApi, type StubApi } from '../test-api';
import VulnerabilitiesScreen from './VulnerabilitiesScreen.svelte';

vi.mock('../lib/sse', async (importOriginal) => {
  const real = await importOriginal<typeof import('../lib/sse')>();
  return { ...real, followJob: vi.fn() };
});

const grype = { scanner: 'scanner_a', name: 'Grype', usable: true, via: 'binary', binary: '/usr/bin/grype', binarySetting: 'GRYPE_PATH', image: 'anchore/grype:1', imagePresent: false };
const trivy = { scanner: 'scanner_b', name: 'Trivy', usable: true, via: 'image', binarySetting: 'TRIVY_PATH', image: 'aquasec/trivy:1', imagePresent: true };
const noTrivy = { ...trivy, usable: false, via: undefined, imagePresent: false, reason: 'Trivy is not installed.' };

let api: StubApi;
beforeEach(() => {
  queryClient.clear();
  session.session = { authenticated: true, authEnabled: false };
  session.environments = [{ id: 1, name: 'local', connectionType: 'socket' }];
  session.envId = 1;
  api = stubApi({
    'GET /api/vulnerabilities': { findings: [], total: 0, limit: 100, offset: 0 },
    'GET /api/vulnerabilities/count': { total: 0, summary: {}, fixable: 0, images: [], containers: [], stacks: [] },
    'POST /api/vulnerabilities/scan-all': { jobId: 'all-1' },
  });
  vi.mocked(sse.followJob).mockImplementation(async (_jobId, onEvent) => {
    onEvent({ event: 'result', data: JSON.stringify({ stage: 'complete', message: 'Scanned 3 of 3 images' }) });
  });
});
afterEach(() => {
  cleanup();
  vi.clearAllMocks();
  vi.unstubAllGlobals();
  session.session = null;
  session.environments = [];
  session.envId = null;
});

/** Clicks "Scan all" and returns the query it was sent with. */
async function scanAll() {
  await fireEvent.click(await screen.findByRole('button', { name: 'Scan all' }));
  await waitFor(() => expect(api.called('POST /api/vulnerabilities/scan-all')).toHaveLength(1));
  expect(await screen.findByText('Scanned 3 of 3 images')).toBeTruthy();
  return api.called('POST /api/vulnerabilities/scan-all')[0].query;
}

describe('VulnerabilitiesScreen, Scan all', () => {
  it('scans with what can run when the setting names a scanner that cannot, and says so', async () => {
    api.routes['GET /api/images/scanners'] = { setting: 'scanner_b', usable: true, scanners: [grype, noTrivy] };
    render(VulnerabilitiesScreen);
    expect(await screen.findByText(/"Scan all" scans with Grype: Trivy cannot run on this environment\./)).toBeTruthy();
    expect(await scanAll()).toEqual({ env: '1', scanner: 'scanner_a' });
  });

  it("leaves the choice to the setting when every scanner it names can run", async () => {
    api.routes['GET /api/images/scanners'] = { setting: 'both', usable: true, scanners: [grype, trivy] };
    render(VulnerabilitiesScreen);
    expect(await scanAll()).toEqual({ env: '1' });
    expect(screen.queryByText(/"Scan all" scans with/)).toBeNull();
  });

  it('offers no Scan all while no scanner can run, and says how to get one', async () => {
    api.routes['GET /api/images/scanners'] = { setting: 'scanner_a', usable: false, scanners: [{ ...grype, usable: false, reason: 'Grype is not installed.' }, noTrivy] };
    render(VulnerabilitiesScreen);
    await screen.findByRole('region', { name: 'No vulnerability scanner on this environment' });
    expect(screen.queryByRole('button', { name: 'Scan all' })).toBeNull();
  });
});
