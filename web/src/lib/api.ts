// The API's error type (ApiError), the hooks the data layer and the app set
// (401, changes), request() for what the typed client of client.ts does not
// cover, and shapes the console reads (interface spec and COMPAT.md; clients
// ignore unknown fields, so a type lists only what the console reads).

/** An error answer of the API: the server's `error` message and the HTTP status. */
export class ApiError extends Error {
  readonly status: number;
  readonly details?: string;
  readonly body: unknown;

  constructor(status: number, message: string, body?: unknown, details?: string) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.body = body;
    this.details = details;
  }
}

type UnauthorizedHandler = (err: ApiError) => void;
let unauthorizedHandler: UnauthorizedHandler | null = null;

/** Sets what happens when a call answers 401 (the app sends the user to /login). */
export function onUnauthorized(fn: UnauthorizedHandler | null): void {
  unauthorizedHandler = fn;
}

let mutatedHandler: (() => void) | null = null;

/**
 * Sets what happens after a request that may have changed something (any
 * method but GET and HEAD) came back: the data layer marks its cached reads
 * stale, so a list never shows what a change just removed.
 */
export function onMutated(fn: (() => void) | null): void {
  mutatedHandler = fn;
}

/** Reports a finished change (api.ts, client.ts and sse.ts call it). */
export function reportMutated(method: string): void {
  if (method !== 'GET' && method !== 'HEAD') mutatedHandler?.();
}

/** Reports a 401 to the app (also used by the typed client of client.ts). */
export function reportUnauthorized(err: ApiError): void {
  unauthorizedHandler?.(err);
}

export type Query = Record<string, string | number | boolean | undefined | null>;

export interface RequestOptions {
  query?: Query;
  body?: unknown;
  headers?: Record<string, string>;
  /** false for calls whose 401 is an answer to show, not an expired session (login, setup). */
  redirectOn401?: boolean;
  signal?: AbortSignal;
}

export function buildUrl(path: string, query?: Query): string {
  if (!query) return path;
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v !== undefined && v !== null && v !== '') qs.set(k, String(v));
  }
  const s = qs.toString();
  return s ? `${path}?${s}` : path;
}

export async function request<T>(method: string, path: string, opts: RequestOptions = {}): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json', ...opts.headers };
  let body: string | undefined;
  if (opts.body !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(opts.body);
  }
  let res: Response;
  try {
    res = await fetch(buildUrl(path, opts.query), {
      method,
      headers,
      body,
      credentials: 'same-origin',
      signal: opts.signal,
    });
  } catch (e) {
    if (e instanceof DOMException && e.name === 'AbortError') throw e;
    throw new ApiError(0, 'Cannot reach the Berth server');
  }
  reportMutated(method);
  const text = await res.text();
  let data: unknown = undefined;
  if (text) {
    try {
      data = JSON.parse(text);
    } catch {
      data = text;
    }
  }
  if (!res.ok) {
    const err = toApiError(res.status, res.statusText, data);
    if (res.status === 401 && opts.redirectOn401 !== false) reportUnauthorized(err);
    throw err;
  }
  return data as T;
}

export function toApiError(status: number, statusText: string, data: unknown): ApiError {
  if (data && typeof data === 'object') {
    const o = data as Record<string, unknown>;
    const msg = typeof o.error === 'string' && o.error ? o.error : typeof o.message === 'string' ? o.message : '';
    const details = typeof o.details === 'string' ? o.details : undefined;
    if (msg) return new ApiError(status, msg, data, details);
  } else if (typeof data === 'string' && data.trim() && data.length < 300) {
    return new ApiError(status, data.trim(), data);
  }
  return new ApiError(status, statusText || `Request failed (${status})`, data);
}

// ---------------------------------------------------------------- auth

export interface SessionUser {
  id: number;
  username: string;
  email?: string;
  displayName?: string;
  isAdmin: boolean;
  provider?: 'local' | 'oidc' | 'ldap' | string;
  permissions?: Record<string, string[]>;
  /** In GET /api/auth/session, non-admins: the permissions per environment id they can reach. */
  environmentPermissions?: Record<string, Record<string, string[]>>;
  /** In GET /api/auth/session: whether sign-ins need a TOTP code. */
  mfaEnabled?: boolean;
}

export interface Session {
  authenticated: boolean;
  authEnabled: boolean;
  /** true while no user exists: the first admin is created with the setup token. */
  setupRequired?: boolean;
  user?: SessionUser;
}

export interface AuthProvider {
  id: string; // "local" | "ldap:<id>" | "oidc:<id>"
  name: string;
  type: 'local' | 'ldap' | 'oidc' | string;
  initiateUrl?: string;
}

// ---------------------------------------------------------------- environments

export interface Environment {
  id: number;
  name: string;
  connectionType: string;
  host?: string;
  port?: number;
  protocol?: string;
  socketPath?: string;
  icon?: string;
  labels?: string[];
}


// ---------------------------------------------------------------- containers

export interface ContainerPort {
  IP?: string;
  PrivatePort: number;
  PublicPort?: number;
  Type: string;
}

export interface ContainerSummary {
  id: string;
  name: string;
  image: string;
  state: string;
  status: string;
  created?: number;
  ports?: ContainerPort[];
  health?: string;
  restartCount?: number;
  exitCode?: number;
  labels?: Record<string, string>;
  command?: string;
}

export interface ContainerInspect {
  Id: string;
  Name: string;
  Created?: string;
  Path?: string;
  Args?: string[];
  Image?: string;
  RestartCount?: number;
  State?: {
    Status?: string;
    Running?: boolean;
    Paused?: boolean;
    Restarting?: boolean;
    ExitCode?: number;
    StartedAt?: string;
    FinishedAt?: string;
    Health?: { Status?: string };
  };
  Config?: {
    Hostname?: string;
    Image?: string;
    Cmd?: string[] | null;
    Labels?: Record<string, string> | null;
  };
  HostConfig?: { RestartPolicy?: { Name?: string } };
  NetworkSettings?: {
    IPAddress?: string;
    Ports?: Record<string, { HostIp?: string; HostPort?: string }[] | null> | null;
    Networks?: Record<string, { IPAddress?: string }> | null;
  };
  Mounts?: { Type?: string; Source?: string; Destination?: string; Name?: string; RW?: boolean }[] | null;
}

export type ContainerAction = 'start' | 'stop' | 'restart';

// ---------------------------------------------------------------- dashboard

/** Per-environment dashboard figures; every part but id and name may be missing. */
export interface DashboardStats {
  id: number;
  name: string;
  host?: string;
  online?: boolean;
  error?: string;
  connectionType?: string;
  containers?: Partial<{
    total: number;
    running: number;
    stopped: number;
    paused: number;
    restarting: number;
    unhealthy: number;
    pendingUpdates: number;
  }>;
  images?: Partial<{ total: number; totalSize: number }>;
  volumes?: Partial<{ total: number; totalSize: number }>;
  networks?: Partial<{ total: number }>;
  stacks?: Partial<{ total: number; running: number; partial: number; stopped: number }>;
  metrics?: Partial<{ cpuPercent: number; memoryPercent: number; memoryUsed: number; memoryTotal: number }>;
}

