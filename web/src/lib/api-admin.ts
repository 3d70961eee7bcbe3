// Types of the administration screens: users, roles, API tokens, the audit
// log, authentication settings, LDAP and OIDC configurations, the scanner
// choice and the license; the screens read and change them through the data
// layer's typed client. Shapes follow the handlers in server/internal/api
// (users.go, auth.go, audit.go, ldap.go, oidc.go, license.go, scan.go) and
// COMPAT.md; every type lists what the console reads.

// ---------------------------------------------------------------- users

/** A user as GET /api/users answers it (never the password hash). */
export interface AdminUser {
  id: number;
  username: string;
  email: string;
  displayName: string;
  mfaEnabled?: boolean;
  isAdmin: boolean;
  isActive: boolean;
  /** "local", "oidc:<name>", "ldap:<name>". */
  authProvider: string;
  lastLogin: string | null;
  createdAt: string;
  updatedAt?: string;
}

/** One role of a user: on one environment, or on all (environmentId null). */
export interface RoleAssignment {
  id: number;
  roleId: number;
  roleName: string;
  environmentId: number | null;
  /** "manual", or "ldap:<id>" / "oidc:<id>" for roles a directory mapping gave. */
  source: string;
  createdAt?: string;
}

// ---------------------------------------------------------------- roles

/** Resource → actions allowed on it. */
export type Permissions = Record<string, string[]>;

export interface Role {
  id: number;
  name: string;
  description: string;
  permissions: Permissions;
  /** null: every environment. */
  environmentIds: number[] | null;
  /** Built-in roles (Admin, Operator, Viewer) cannot be changed or deleted. */
  isSystem: boolean;
  createdAt?: string;
  updatedAt?: string;
}


/**
 * Every resource and its actions, in the order the console shows them. The
 * server's catalog (auth.Catalog in server/internal/auth/permissions.go, also
 * listed in COMPAT.md); no endpoint serves it, and the server refuses a role
 * naming anything else.
 */
export const PERMISSION_CATALOG: readonly { resource: string; actions: readonly string[] }[] = [
  { resource: 'containers', actions: ['view', 'create', 'start', 'stop', 'restart', 'remove', 'exec', 'logs', 'inspect', 'edit'] },
  { resource: 'images', actions: ['view', 'pull', 'push', 'remove', 'build', 'inspect'] },
  { resource: 'volumes', actions: ['view', 'create', 'remove', 'inspect'] },
  { resource: 'networks', actions: ['view', 'create', 'remove', 'inspect', 'connect', 'disconnect'] },
  { resource: 'stacks', actions: ['view', 'create', 'start', 'stop', 'remove', 'edit'] },
  { resource: 'environments', actions: ['view', 'create', 'edit', 'delete'] },
  { resource: 'registries', actions: ['view', 'create', 'edit', 'delete'] },
  { resource: 'notifications', actions: ['view', 'create', 'edit', 'delete'] },
  { resource: 'git', actions: ['view', 'create', 'edit', 'delete'] },
  { resource: 'settings', actions: ['view', 'edit'] },
  { resource: 'users', actions: ['view', 'create', 'edit', 'delete'] },
  { resource: 'schedules', actions: ['view', 'edit', 'run'] },
  { resource: 'audit_logs', actions: ['view'] },
  { resource: 'activity', actions: ['view'] },
  { resource: 'license', actions: ['manage'] },
  { resource: 'backups', actions: ['view', 'manage'] },
];

// ---------------------------------------------------------------- API tokens

/** An API token as listed: never the token itself. */
export interface ApiToken {
  id: number;
  userId: number;
  name: string;
  /** The first characters of the token ("bth_" and six more), to recognise it. */
  tokenPrefix: string;
  expiresAt: string | null;
  lastUsed: string | null;
  createdAt: string;
}

/** The answer of creating a token: the only time the token is shown. */
export interface NewApiToken extends ApiToken {
  token: string;
}

// ---------------------------------------------------------------- audit log

export interface AuditEntry {
  id: number;
  timestamp: string;
  userId: number | null;
  username: string;
  environmentId: number | null;
  action: string;
  entityType: string;
  entityId: string;
  entityName: string;
  description: string;
  details: string;
  ipAddress: string;
}

/**
 * The filters of GET /api/audit: username exact, action exact or a prefix
 * with a trailing "*", entityType exact, since (inclusive) and until
 * (exclusive) as RFC 3339 times; limit at most 1000 (default 100).
 */
export interface AuditFilter {
  userId?: number;
  username?: string;
  environmentId?: number;
  action?: string;
  entityType?: string;
  since?: string;
  until?: string;
  limit?: number;
  offset?: number;
}

export interface AuditPage {
  entries: AuditEntry[];
  total: number;
  limit: number;
  offset: number;
}

// ---------------------------------------------------------------- authentication settings

export interface AuthSettings {
  authEnabled: boolean;
  /** "local", "ldap", "ldap:<id>" or "oidc:<id>". */
  defaultProvider: string;
  /** Seconds, 60 to 31536000. */
  sessionTimeout: number;
}

// ---------------------------------------------------------------- LDAP (enterprise)

/** The mask the API answers for a stored secret; sent back it keeps the secret. */
export const SECRET_MASK = '********';

export interface LdapConfig {
  id: number;
  name: string;
  enabled: boolean;
  serverUrl: string;
  bindDn: string;
  /** SECRET_MASK when a password is stored, else "". */
  bindPassword: string;
  baseDn: string;
  userFilter: string;
  usernameAttribute: string;
  emailAttribute: string;
  displayNameAttribute: string;
  groupBaseDn: string;
  groupFilter: string;
  adminGroup: string;
  roleMappings: { groupDn: string; roleId: number }[];
  tlsEnabled: boolean;
  tlsCa: string;
  createdAt?: string;
}

/**
 * The body of create and PATCH. bindPassword: absent keeps the stored one,
 * "" clears it, any other string replaces it.
 */
export type LdapConfigInput = Partial<Omit<LdapConfig, 'id' | 'createdAt'>>;

/** {success, userCount}, or {success: false, error} when the directory cannot be used. */
export interface LdapTestResult {
  success: boolean;
  userCount?: number;
  error?: string;
}

// ---------------------------------------------------------------- OIDC

export interface OidcProvider {
  id: number;
  name: string;
  enabled: boolean;
  issuerUrl: string;
  clientId: string;
  /** SECRET_MASK when a secret is stored. */
  clientSecret: string;
  redirectUri: string;
  scopes: string;
  usernameClaim: string;
  emailClaim: string;
  displayNameClaim: string;
  adminClaim: string;
  adminValue: string;
  roleMappingsClaim: string;
  roleMappings: { claimValue: string; roleId: number }[];
  createdAt?: string;
}

/** The body of create and PATCH; clientSecret follows the rule of LdapConfigInput.bindPassword. */
export type OidcProviderInput = Partial<Omit<OidcProvider, 'id' | 'createdAt'>>;

/** The path every OIDC provider must redirect to (register it at the provider). */
export const OIDC_CALLBACK_PATH = '/api/auth/oidc/callback';

/** {success, issuer, endpoints} when the discovery document was fetched, else {success: false, error, details}. */
export interface OidcTestResult {
  success: boolean;
  issuer?: string;
  endpoints?: { authorization?: string; token?: string; userinfo?: string };
  error?: string;
  details?: string;
}

// ---------------------------------------------------------------- scanner setting

/** none, scanner_a (Grype), scanner_b (Trivy) or both. */
export type ScannerChoice = 'none' | 'scanner_a' | 'scanner_b' | 'both';

// ---------------------------------------------------------------- license

export interface LicenseDoc {
  id: string;
  customer: string;
  edition: string;
  issuedAt: string;
  expiresAt?: string | null;
}

export interface LicenseState {
  edition: 'community' | 'enterprise' | string;
  license: LicenseDoc | null;
  /** An installed license that has expired. */
  expired?: boolean;
}
