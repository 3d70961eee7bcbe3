import { describe, expect, it } from 'vitest';
import type { Vulnerability } from '../../lib/api-images';
import { formatAge, formatBytes, pullReference, pushTarget, registryHost, splitRef } from './format';
import { filterVulns, sortVulns, summarize, summaryOf, totalOf, vulnLink, worstSeverity } from './severity';

const vulns: Vulnerability[] = [
  { id: 'CVE-2024-2', severity: 'high', package: 'openssl', version: '3.0.1', fixedVersion: '3.0.9' },
  { id: 'CVE-2024-10', severity: 'critical', package: 'zlib', version: '1.2.11', urls: ['https://security-tracker.debian.org/tracker/CVE-2024-10'] },
  { id: 'GHSA-abcd-efgh-ijkl', severity: 'Medium', package: 'lodash', version: '4.17.0', fixedVersion: '4.17.21' },
  { id: 'CVE-2023-1', severity: 'weird', package: 'bash', version: '5.1', description: 'shell injection' },
  { id: 'CVE-2024-3', severity: 'low', package: 'apt', version: '2.2' },
];

describe('severity summary', () => {
  it('counts by severity, anything unknown as unknown', () => {
    expect(summarize(vulns)).toEqual({ critical: 1, high: 1, medium: 1, low: 1, negligible: 0, unknown: 1 });
    expect(totalOf(summarize(vulns))).toBe(5);
    expect(worstSeverity(summarize(vulns))).toBe('critical');
    expect(worstSeverity(summarize([]))).toBeNull();
  });

  it("prefers the server's summary, counting the findings when it sent none", () => {
    expect(summaryOf({ summary: { critical: 2, high: 0 }, vulnerabilities: [] })).toEqual({
      critical: 2, high: 0, medium: 0, low: 0, negligible: 0, unknown: 0,
    });
    expect(summaryOf({ vulnerabilities: vulns }).medium).toBe(1);
  });

  it('filters by severity and text', () => {
    expect(filterVulns(vulns, 'medium', '').map((v) => v.id)).toEqual(['GHSA-abcd-efgh-ijkl']);
    expect(filterVulns(vulns, '', 'injection').map((v) => v.id)).toEqual(['CVE-2023-1']);
    expect(filterVulns(vulns, '', 'openssl 3.0.9').map((v) => v.id)).toEqual(['CVE-2024-2']);
    expect(filterVulns(vulns, 'unknown', '').map((v) => v.id)).toEqual(['CVE-2023-1']);
  });

  it('sorts by severity (most severe first), id (numeric), fixed version (no fix last)', () => {
    expect(sortVulns(vulns, 'severity', 'asc').map((v) => v.severity)).toEqual(['critical', 'high', 'Medium', 'low', 'weird']);
    expect(sortVulns(vulns, 'severity', 'desc')[0].severity).toBe('weird');
    expect(sortVulns(vulns, 'id', 'asc').map((v) => v.id)).toEqual(['CVE-2023-1', 'CVE-2024-2', 'CVE-2024-3', 'CVE-2024-10', 'GHSA-abcd-efgh-ijkl']);
    expect(sortVulns(vulns, 'fixedVersion', 'asc').map((v) => v.fixedVersion ?? '-')).toEqual(['3.0.9', '4.17.21', '-', '-', '-']);
    expect(sortVulns(vulns, 'fixedVersion', 'desc').slice(0, 2).map((v) => v.fixedVersion)).toEqual(['4.17.21', '3.0.9']);
  });

  it('links out to the first URL or the advisory database', () => {
    expect(vulnLink(vulns[1])).toBe('https://security-tracker.debian.org/tracker/CVE-2024-10');
    expect(vulnLink(vulns[0])).toBe('https://nvd.nist.gov/vuln/detail/CVE-2024-2');
    expect(vulnLink(vulns[2])).toBe('https://github.com/advisories/GHSA-abcd-efgh-ijkl');
    expect(vulnLink({ id: 'DLA-1', urls: ['javascript:alert(1)'] })).toBeNull();
  });
});

describe('image references and formats', () => {
  it('splits references', () => {
    expect(splitRef('127.0.0.1:5000/team/app:2')).toEqual({ repo: '127.0.0.1:5000/team/app', tag: '2' });
    expect(splitRef('127.0.0.1:5000/team/app')).toEqual({ repo: '127.0.0.1:5000/team/app', tag: 'latest' });
    expect(splitRef('app@sha256:ab')).toEqual({ repo: 'app', tag: 'sha256:ab' });
  });

  it('prefixes the chosen registry host to a pull reference that names none', () => {
    expect(pullReference('team/app:1', 'https://reg.example:5000/v2')).toBe('reg.example:5000/team/app:1');
    expect(pullReference('other.example/app:1', 'reg.example')).toBe('other.example/app:1');
    expect(pullReference('nginx', 'https://index.docker.io/v1/')).toBe('nginx');
    expect(pullReference(' nginx ', undefined)).toBe('nginx');
    expect(registryHost('HTTPS://Reg.Example:5000/path')).toBe('reg.example:5000');
  });

  it('computes the push target as the server does', () => {
    expect(pushTarget('old.example/team/app:1', '127.0.0.1:5000')).toBe('127.0.0.1:5000/team/app:1');
    expect(pushTarget('app', 'https://127.0.0.1:5000')).toBe('127.0.0.1:5000/app:latest');
    expect(pushTarget('team/app:1', 'docker.io')).toBe('team/app:1');
  });

  it('formats sizes and ages', () => {
    expect(formatBytes(999)).toBe('999 B');
    expect(formatBytes(1_983_025)).toBe('2.0 MB');
    expect(formatBytes(55_131_458)).toBe('55 MB');
    expect(formatBytes(undefined)).toBe('—');
    const now = 1_000_000_000_000;
    expect(formatAge(now / 1000 - 30, now)).toBe('just now');
    expect(formatAge(now / 1000 - 3 * 3600, now)).toBe('3 hours ago');
    expect(formatAge(now / 1000 - 86400, now)).toBe('1 day ago');
    expect(formatAge(0, now)).toBe('—');
  });
});
