// The settings screen's pure parts: write-only secrets, role mappings, the
// OIDC callback address and the session timeout.
import { OIDC_CALLBACK_PATH } from '../../lib/api-admin';

/**
 * The API field of a write-only secret edited in a form: undefined keeps the
 * stored one (the field is left out), "" clears it, a string replaces it.
 */
export function secretChange(typed: string, clear: boolean): string | undefined {
  if (clear) return '';
  return typed === '' ? undefined : typed;
}

/** A role mapping in a form: the group DN or claim value, and the role. */
export interface Mapping {
  value: string;
  roleId: number;
}

/** Mappings without the rows left empty. */
export function cleanMappings(list: Mapping[]): Mapping[] {
  return list.map((m) => ({ value: m.value.trim(), roleId: Number(m.roleId) })).filter((m) => m.value && m.roleId > 0);
}

/** The callback address to register at an OIDC provider, for a console served at origin. */
export function callbackUrl(origin: string): string {
  return origin.replace(/\/+$/, '') + OIDC_CALLBACK_PATH;
}

/** A session timeout in seconds as minutes for the form, and back (the API takes 60 to 31536000 s). */
export const MIN_TIMEOUT_MIN = 1;
export const MAX_TIMEOUT_MIN = 525_600;
export function timeoutLabel(seconds: number): string {
  if (seconds % 86_400 === 0) return `${seconds / 86_400} day${seconds === 86_400 ? '' : 's'}`;
  if (seconds % 3600 === 0) return `${seconds / 3600} hour${seconds === 3600 ? '' : 's'}`;
  return `${Math.round(seconds / 60)} minutes`;
}
