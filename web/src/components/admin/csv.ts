// Audit log export, built in the browser from the rows the filters select:
// CSV (RFC 4180: comma separated, CRLF line ends, fields with a comma, quote
// or line break quoted, quotes doubled) and JSON, saved through a download link.
import type { AuditEntry } from '../../lib/api-admin';

/** The columns of the export, in the order of the server's own CSV export. */
export const AUDIT_COLUMNS: readonly (keyof AuditEntry)[] = [
  'id',
  'timestamp',
  'userId',
  'username',
  'environmentId',
  'action',
  'entityType',
  'entityId',
  'entityName',
  'description',
  'details',
  'ipAddress',
];

/**
 * Text that a spreadsheet would run as a formula (=, +, -, @, or a leading tab
 * or carriage return) gets a leading apostrophe (CSV injection). Numbers are
 * not text and stay as they are.
 */
export function defuse(value: string): string {
  return /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
}

/** One CSV field: quoted when it holds a comma, a quote or a line break. */
export function csvField(value: unknown): string {
  if (value === null || value === undefined) return '';
  const s = typeof value === 'string' ? defuse(value) : String(value);
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

/** A CSV document: a header line, then one line per row, each ended by CRLF. */
export function toCsv<T>(rows: readonly T[], columns: readonly (keyof T & string)[]): string {
  const line = (cells: unknown[]) => cells.map(csvField).join(',') + '\r\n';
  return line([...columns]) + rows.map((r) => line(columns.map((c) => r[c]))).join('');
}

/** The audit entries as CSV. */
export function auditCsv(rows: readonly AuditEntry[]): string {
  return toCsv(rows, AUDIT_COLUMNS);
}

/** The audit entries as JSON (an array, as GET /api/audit?format=json answers). */
export function auditJson(rows: readonly AuditEntry[]): string {
  return JSON.stringify(rows, null, 2) + '\n';
}

/** berth-audit-20250102-030405.csv: the date and time (UTC) of the export. */
export function exportFilename(ext: 'csv' | 'json', now: Date = new Date()): string {
  const p = (n: number) => String(n).padStart(2, '0');
  const stamp =
    `${now.getUTCFullYear()}${p(now.getUTCMonth() + 1)}${p(now.getUTCDate())}-` +
    `${p(now.getUTCHours())}${p(now.getUTCMinutes())}${p(now.getUTCSeconds())}`;
  return `berth-audit-${stamp}.${ext}`;
}

/** Saves text as a file through a temporary download link. */
export function download(filename: string, text: string, type: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  a.style.display = 'none';
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
