// Vulnerability scan results: severity summary, filtering, sorting, links.
import type { ScanResult, Severity, SeveritySummary, Vulnerability } from '../../lib/api-images';

/** Most severe first. */
export const SEVERITIES: readonly Severity[] = ['critical', 'high', 'medium', 'low', 'negligible', 'unknown'];

export const SCANNER_LABELS: Record<string, string> = { scanner_a: 'Grype', scanner_b: 'Trivy' };

export function scannerLabel(name: string): string {
  return SCANNER_LABELS[name] ?? name;
}

export function normalSeverity(s: string | null | undefined): Severity {
  const w = (s ?? '').toLowerCase().trim() as Severity;
  return SEVERITIES.includes(w) ? w : 'unknown';
}

export function severityRank(s: string): number {
  return SEVERITIES.indexOf(normalSeverity(s));
}

export function emptySummary(): SeveritySummary {
  return { critical: 0, high: 0, medium: 0, low: 0, negligible: 0, unknown: 0 };
}

/** Counts findings by severity. */
export function summarize(vulns: readonly Vulnerability[] | null | undefined): SeveritySummary {
  const s = emptySummary();
  for (const v of vulns ?? []) s[normalSeverity(v.severity)]++;
  return s;
}

/** A result's summary: the server's counts, or counted from the findings when it sent none. */
export function summaryOf(r: Pick<ScanResult, 'summary' | 'vulnerabilities'>): SeveritySummary {
  if (!r.summary) return summarize(r.vulnerabilities);
  const s = emptySummary();
  for (const k of SEVERITIES) s[k] = Number(r.summary[k]) || 0;
  return s;
}

export function totalOf(s: SeveritySummary): number {
  return SEVERITIES.reduce((n, k) => n + s[k], 0);
}

/** The most severe level with a finding, or null when there is none. */
export function worstSeverity(s: SeveritySummary): Severity | null {
  return SEVERITIES.find((k) => s[k] > 0) ?? null;
}

export type VulnSortKey = 'id' | 'severity' | 'package' | 'version' | 'fixedVersion';
export type SortDir = 'asc' | 'desc';

/** Keeps findings of a severity ('' for all) whose id, package, versions or description contain every word of text. */
export function filterVulns(vulns: readonly Vulnerability[], severity: string, text: string): Vulnerability[] {
  const words = text.toLowerCase().split(/\s+/).filter(Boolean);
  return vulns.filter((v) => {
    if (severity && normalSeverity(v.severity) !== severity) return false;
    if (!words.length) return true;
    const hay = [v.id, v.package, v.version, v.fixedVersion ?? '', v.description ?? ''].join(' ').toLowerCase();
    return words.every((w) => hay.includes(w));
  });
}

const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });

/** A sorted copy; severity sorts most severe first when ascending; ties by severity, then id and package. */
export function sortVulns(vulns: readonly Vulnerability[], key: VulnSortKey, dir: SortDir): Vulnerability[] {
  const sign = dir === 'asc' ? 1 : -1;
  const tie = (a: Vulnerability, b: Vulnerability) =>
    severityRank(a.severity) - severityRank(b.severity) || collator.compare(a.id, b.id) || collator.compare(a.package, b.package);
  return [...vulns].sort((a, b) => {
    let d: number;
    if (key === 'severity') d = severityRank(a.severity) - severityRank(b.severity);
    else if (key === 'fixedVersion') {
      // Findings without a fix go last either way.
      const fa = a.fixedVersion ?? '';
      const fb = b.fixedVersion ?? '';
      if (!fa !== !fb) return fa ? -1 : 1;
      d = collator.compare(fa, fb);
    } else d = collator.compare(a[key] ?? '', b[key] ?? '');
    return sign * d || tie(a, b);
  });
}

export function nextSort<K extends string>(cur: { key: K; dir: SortDir }, key: K): { key: K; dir: SortDir } {
  if (cur.key === key) return { key, dir: cur.dir === 'asc' ? 'desc' : 'asc' };
  return { key, dir: 'asc' };
}

/** Where a finding is described: its first http(s) URL, else the advisory database its id names. */
export function vulnLink(v: Pick<Vulnerability, 'id' | 'urls'>): string | null {
  const url = (v.urls ?? []).find((u) => /^https?:\/\//i.test(u));
  if (url) return url;
  if (/^CVE-\d{4}-\d+$/i.test(v.id)) return `https://nvd.nist.gov/vuln/detail/${v.id.toUpperCase()}`;
  if (/^GHSA-[\w-]+$/i.test(v.id)) return `https://github.com/advisories/${v.id}`;
  return null;
}
