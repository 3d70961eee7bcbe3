// The audit log screen's pure parts: the actions and resource types to
// suggest, the text filter over loaded rows, and collecting every row the
// server filters select for an export.
import type { AuditEntry, AuditFilter, AuditPage } from '../../lib/api-admin';

/**
 * The actions Berth records (the route table's audit actions, plus sign-in
 * and webhooks), offered as suggestions; the filter accepts any action and a
 * prefix ending in "*".
 */
export const AUDIT_ACTIONS = [
  'login',
  'login.failure',
  'logout',
  'user.create',
  'user.update',
  'user.delete',
  'user.mfa_setup',
  'user.mfa_enable',
  'user.mfa_disable',
  'user.role.assign',
  'user.role.unassign',
  'role.create',
  'role.update',
  'role.delete',
  'token.create',
  'token.revoke',
  'auth.settings',
  'ldap.create',
  'ldap.update',
  'ldap.delete',
  'oidc.create',
  'oidc.update',
  'oidc.delete',
  'license.install',
  'license.remove',
  'settings.scanner',
  'environment.create',
  'environment.update',
  'environment.delete',
  'container.create',
  'container.start',
  'container.stop',
  'container.restart',
  'container.pause',
  'container.unpause',
  'container.kill',
  'container.rename',
  'container.remove',
  'container.exec',
  'batch.run',
  'job.cancel',
  'image.pull',
  'image.push',
  'image.tag',
  'image.remove',
  'image.prune',
  'image.scan',
  'volume.create',
  'volume.remove',
  'network.create',
  'network.remove',
  'network.connect',
  'network.disconnect',
  'stack.create',
  'stack.adopt',
  'stack.update',
  'stack.env',
  'stack.deploy',
  'stack.start',
  'stack.stop',
  'stack.restart',
  'stack.down',
  'stack.delete',
  'registry.create',
  'registry.update',
  'registry.delete',
  'git_credential.create',
  'git_credential.update',
  'git_credential.delete',
  'git_repository.create',
  'git_repository.update',
  'git_repository.delete',
  'git_stack.create',
  'git_stack.update',
  'git_stack.delete',
  'git_stack.deploy',
  'git_stack.sync',
  'git.webhook',
] as const;

/** Resource types (entityType): the part of an action before its first dot, and sessions. */
export const AUDIT_RESOURCES: readonly string[] = [
  ...new Set(AUDIT_ACTIONS.map((a) => (a.startsWith('log') ? 'session' : a.split('.')[0]))),
].sort();

/** Whether an entry's text (resource, description, details, address, user, action) contains q, ignoring case. */
export function matchesText(e: AuditEntry, q: string): boolean {
  const s = q.trim().toLowerCase();
  if (!s) return true;
  return [e.username, e.action, e.entityType, e.entityId, e.entityName, e.description, e.details, e.ipAddress].some((v) =>
    v?.toLowerCase().includes(s),
  );
}

/** The most rows one export collects (the server's own export stops there too). */
export const MAX_EXPORT = 100_000;

/**
 * Every entry the filter selects, page by page (1000 at a time, the server's
 * largest page), reporting progress; stops at MAX_EXPORT.
 */
export async function collectAll(
  list: (f: AuditFilter, signal?: AbortSignal) => Promise<AuditPage>,
  filter: AuditFilter,
  onprogress: (done: number, total: number) => void = () => {},
  signal?: AbortSignal,
): Promise<AuditEntry[]> {
  const out: AuditEntry[] = [];
  let total = Infinity;
  while (out.length < Math.min(total, MAX_EXPORT)) {
    const limit = Math.min(1000, MAX_EXPORT - out.length);
    const page = await list({ ...filter, limit, offset: out.length }, signal);
    total = page.total;
    out.push(...page.entries);
    onprogress(out.length, Math.min(total, MAX_EXPORT));
    if (page.entries.length < limit) break;
  }
  return out;
}
