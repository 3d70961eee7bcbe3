// Types of the vulnerability view (the findings of an environment's stored
// scans, one per vulnerability, package and image, with what runs the image,
// and their counts) and the download URL of their export; the screen reads
// them through the data layer.
import { buildUrl } from './api';
import type { Severity, SeveritySummary } from './api-images';

export interface Finding {
  cve: string;
  severity: Severity;
  package: string;
  version: string;
  fixedVersion: string;
  fixable: boolean;
  description: string;
  urls: string[];
  imageId: string;
  imageName: string;
  scanners: string[];
  /** RFC 3339. */
  scannedAt: string;
  containers: string[];
  stacks: string[];
}

/** What the list is narrowed to; empty fields narrow nothing. */
export interface FindingFilter {
  q?: string;
  severity?: Severity | '';
  image?: string;
  container?: string;
  stack?: string;
  fixable?: boolean;
}

export interface FindingPage {
  findings: Finding[];
  total: number;
  limit: number;
  offset: number;
}

export interface FindingCounts {
  total: number;
  summary: SeveritySummary;
  fixable: number;
  images: string[];
  containers: string[];
  stacks: string[];
}

function query(env: number, f: FindingFilter) {
  return { env, q: f.q, severity: f.severity, image: f.image, container: f.container, stack: f.stack, fixable: f.fixable };
}

/** The download URL of the findings the filter selects. */
export function exportUrl(env: number, f: FindingFilter, format: 'json' | 'csv'): string {
  return buildUrl('/api/vulnerabilities/export', { ...query(env, f), format });
}
