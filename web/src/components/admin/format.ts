// Small display helpers of the administration screens.
import { ApiError } from '../../lib/api';

/** A time for display in the user's locale, or "—" for none. */
export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

/** The value of a datetime-local input as an RFC 3339 UTC time without fractions, or undefined. */
export function localInputToRfc3339(v: string): string | undefined {
  if (!v) return undefined;
  const d = new Date(v);
  if (Number.isNaN(d.getTime())) return undefined;
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Whether an error is the server's refusal (403): no permission, no licence, no access. */
export function isForbidden(e: unknown): boolean {
  return e instanceof ApiError && e.status === 403;
}

/** "ldap:Corp" → "LDAP (Corp)", "oidc:Dex" → "OIDC (Dex)", "local" → "Local". */
export function providerLabel(p: string | undefined | null): string {
  if (!p || p === 'local') return 'Local';
  const [kind, name] = p.split(/:(.*)/s);
  const k = kind === 'ldap' ? 'LDAP' : kind === 'oidc' ? 'OIDC' : kind;
  return name ? `${k} (${name})` : k;
}

/**
 * The bounds of a filter's time range from its From and Until inputs
 * (datetime-local values; empty: unbounded), or the message to show when the
 * end does not come after the start.
 */
export function timeRange(since: string, until: string): { since?: string; until?: string } | { error: string } {
  const r: { since?: string; until?: string } = {};
  if (since) r.since = localInputToRfc3339(since);
  if (until) r.until = localInputToRfc3339(until);
  if (r.since && r.until && r.since >= r.until) return { error: 'The end of the time range must come after its start' };
  return r;
}
