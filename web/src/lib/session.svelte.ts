// Cross-page state: who is signed in, the environments and the selected one.
import { QueryObserver } from '@tanstack/svelte-query';
import type * as api from './api';
import { client, unwrap } from './client';
import { queryClient } from './query';

/** The query key of the environment list (the data layer keeps it fresh). */
export const ENVIRONMENTS_KEY = ['environments'] as const;

/** What GET /api/environments/{id}/status says of the selected environment. */
export interface EnvHealth {
  envId: number;
  state: 'online' | 'offline' | 'busy';
  reason?: string;
  lastReachable?: string | null;
}

export const ENV_KEY = 'berth.env';

/** Who is signed in (a 401 here is an answer: nobody). */
const readSession = async () => (await unwrap(client.GET('/api/auth/session'), { redirectOn401: false })) as api.Session;
/** The environments the caller may reach. */
const readEnvironments = async () => ((await unwrap(client.GET('/api/environments'))) ?? []) as api.Environment[];

class SessionStore {
  session: api.Session | null = $state(null);
  environments: api.Environment[] = $state([]);
  envId: number | null = $state(null);
  envError: string | null = $state(null);
  /** Set by an explicit sign-out, so the login page does not offer to come back. */
  signedOut = $state(false);
  /** The selected environment's engine state (EnvironmentBanner keeps it current). */
  envHealth: EnvHealth | null = $state(null);

  /**
   * Whether work can be sent to environment env now: false while its engine
   * is known to be offline (a create is refused before the request, with the
   * banner's reason, instead of failing with a 500).
   */
  usable(env: number | null = this.envId): boolean {
    return env !== null && !(this.envHealth?.envId === env && this.envHealth.state === 'offline');
  }

  /** The selected environment is known to be offline: its lists are not "empty". */
  get envOffline(): boolean {
    return this.envId !== null && !this.usable(this.envId);
  }

  get signedIn(): boolean {
    return !!this.session && (this.session.authenticated || !this.session.authEnabled);
  }

  /** Whether the caller is an administrator (everyone is while authentication is off). */
  get isAdmin(): boolean {
    return !!this.session && (!this.session.authEnabled || !!this.session.user?.isAdmin);
  }

  /**
   * Whether the signed-in user may do `perm` ("<resource>:<action>", e.g.
   * "containers:stop") on environment `env` (the selected one by default;
   * null for what is not bound to an environment). The console's one
   * permission check: every screen shows and enables a control only when this
   * allows it, so a Viewer sees no New, Stop or Remove. The server still
   * decides; this only spares users buttons that would answer 403.
   */
  can(perm: string, env: number | null = this.envId): boolean {
    return allows(this.session, perm, env);
  }

  get currentEnvironment(): api.Environment | undefined {
    return this.environments.find((e) => e.id === this.envId);
  }

  async refresh(): Promise<api.Session> {
    const s = await readSession();
    this.session = s;
    if (s.authenticated) this.signedOut = false;
    return s;
  }

  /** After a 401 elsewhere: the session is gone. */
  expire(): void {
    if (this.session) this.session = { ...this.session, authenticated: false, user: undefined };
  }

  /** Reads the environment list now (after a change to it). */
  async loadEnvironments(): Promise<void> {
    try {
      const list = await queryClient.fetchQuery({ queryKey: ENVIRONMENTS_KEY, queryFn: readEnvironments, staleTime: 0 });
      this.applyEnvironments(list);
    } catch (e) {
      this.environments = [];
      this.envError = e instanceof Error ? e.message : String(e);
      this.pickEnvironment();
    }
  }

  /**
   * Keeps the environment list current while signed in: a failed read is
   * retried with back-off (one refused request never leaves every screen on
   * an error), refreshed on focus and every minute, every 5 s while failing.
   * Returns the function that stops it.
   */
  watchEnvironments(): () => void {
    const obs = new QueryObserver(queryClient, {
      queryKey: ENVIRONMENTS_KEY,
      queryFn: readEnvironments,
      refetchInterval: (q) => (q.state.status === 'error' ? 5_000 : 60_000),
    });
    return obs.subscribe((r) => {
      if (r.status === 'success') this.applyEnvironments(r.data);
      else if (r.status === 'error' && !r.isFetching) {
        this.envError = r.error instanceof Error ? r.error.message : String(r.error);
        if (this.environments.length === 0) this.pickEnvironment();
      }
    });
  }

  private applyEnvironments(list: api.Environment[] | null | undefined): void {
    this.environments = Array.isArray(list) ? list : [];
    this.envError = null;
    this.pickEnvironment();
  }

  private pickEnvironment(): void {
    let stored: number | null = null;
    try {
      const v = Number(localStorage.getItem(ENV_KEY));
      stored = Number.isInteger(v) && v > 0 ? v : null;
    } catch {
      stored = null;
    }
    const pick = [this.envId, stored].find((id) => id !== null && this.environments.some((e) => e.id === id));
    this.envId = pick ?? this.environments[0]?.id ?? null;
  }

  /**
   * Asked before the selected environment changes (a screen with unsaved
   * changes sets it). It answers false to keep the current one for now and
   * calls proceed once the user agrees to leave.
   */
  envGuard: ((proceed: () => void) => boolean) | null = null;

  /** Selects environment id unless the guard holds it back; whether it changed now. */
  selectEnvironment(id: number): boolean {
    if (id === this.envId) return true;
    if (this.envGuard && !this.envGuard(() => this.#setEnvironment(id))) return false;
    this.#setEnvironment(id);
    return true;
  }

  #setEnvironment(id: number): void {
    this.envId = id;
    try {
      localStorage.setItem(ENV_KEY, String(id));
    } catch {
      // not persisted
    }
  }

  async signOut(): Promise<void> {
    try {
      await unwrap(client.POST('/api/auth/logout'), { redirectOn401: false });
    } finally {
      this.signedOut = true;
      this.session = this.session ? { ...this.session, authenticated: false, user: undefined } : null;
      this.environments = [];
    }
  }
}

export const session = new SessionStore();

/** The rule of SessionStore.can, for a given session. */
export function allows(s: api.Session | null | undefined, perm: string, env: number | null): boolean {
  if (!s) return false;
  if (!s.authEnabled) return true;
  const u = s.user;
  if (!u) return false;
  if (u.isAdmin) return true;
  const [resource, action] = perm.split(':');
  const grants = env !== null && u.environmentPermissions ? u.environmentPermissions[String(env)] : u.permissions;
  const actions = grants?.[resource];
  return !!actions && actions.some((a) => a === action || a === '*');
}

/** The message of an error for display. */
export function messageOf(e: unknown): string {
  if (e instanceof Error) return e.message;
  return String(e);
}
