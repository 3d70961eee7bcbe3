// Whether a vulnerability scanner can run on an environment
// (GET /api/images/scanners), read through the data layer, and which
// scanner a scan should ask for: Scan is offered only when one can run.
import { createQuery } from '@tanstack/svelte-query';
import { client, unwrap, type Schema } from '../../lib/client';
import { envKey, qc } from '../../lib/query';
import { session } from '../../lib/session.svelte';

export type ScannersState = Schema<'api.scannersAnswer'>;
export type ScannerStatus = Schema<'scan.Status'>;
export type ScannerName = 'scanner_a' | 'scanner_b';

/** The scanners' state of env, for users who may scan there (images:inspect). */
export function createScannersQuery(env: () => number | null) {
  return createQuery(
    () => ({
      queryKey: envKey(env(), 'scanners'),
      queryFn: () => unwrap(client.GET('/api/images/scanners', { params: { query: { env: env() ?? undefined } } })),
      enabled: env() !== null && session.can('images:inspect', env()),
      staleTime: 30_000,
    }),
    qc,
  );
}

/**
 * The rule of every scan, the single image's and "Scan all" alike (the
 * server's scan.Choose applies the same, so a scan asked for by it starts).
 * The scanner a scan asks for: '' lets the environment's setting decide
 * (every scanner it names can run), a scanner's name when only it can run
 * of those the setting names (or of both, when none is set), null when none
 * can run.
 */
export function scanChoice(s: ScannersState | undefined | null): ScannerName | '' | null {
  if (!s) return null;
  const usable = (s.scanners ?? []).filter((x) => x.usable).map((x) => x.scanner as ScannerName);
  if (!usable.length) return null;
  const wanted: ScannerName[] = s.setting === 'scanner_a' || s.setting === 'scanner_b' ? [s.setting] : ['scanner_a', 'scanner_b'];
  if (wanted.every((w) => usable.includes(w))) return '';
  return wanted.find((w) => usable.includes(w)) ?? usable[0];
}
