// Who may change config sets (settings:edit) and environment labels
// (environments:edit): an admin has every permission; without
// authentication everyone may.
import type { Session } from '../../lib/api';

export function canEditSettings(s: Session | null | undefined): boolean {
  if (!s) return false;
  if (!s.authEnabled) return true;
  const u = s.user;
  return !!u && (u.isAdmin || !!u.permissions?.settings?.some((a) => a === 'edit' || a === '*'));
}

export function canEditLabels(s: Session | null | undefined): boolean {
  if (!s) return false;
  if (!s.authEnabled) return true;
  const u = s.user;
  return !!u && (u.isAdmin || !!u.permissions?.environments?.some((a) => a === 'edit' || a === '*'));
}
