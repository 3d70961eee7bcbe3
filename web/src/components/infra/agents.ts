// Pure parts of the agent environments' screens: the state an agent is in
// (from the environment's stored facts and the live status), its last error
// in a few words, relative times, and a token for a standard agent.
import type { AgentInstall, AgentStatus, EnvironmentDetail } from '../../lib/api-infra';

export const agentTypes: readonly string[] = ['agent-standard', 'agent-edge'];

export function isAgentType(t: string | undefined): boolean {
  return agentTypes.includes(t ?? '');
}

export type AgentStateKind =
  | 'connected'
  | 'no-token' // edge: no token issued yet
  | 'waiting' // edge: a token issued, no agent ever connected with it
  | 'disconnected' // edge: an agent was connected, none is now
  | 'unchecked' // standard: Berth has not dialled the agent yet
  | 'unreachable'; // standard: the last attempt failed

export interface AgentState {
  kind: AgentStateKind;
  /** Badge text. */
  label: string;
  /** Badge colour: ok, warn, bad or '' (neutral). */
  tone: 'ok' | 'warn' | 'bad' | '';
  /** One sentence for the status panel. */
  text: string;
}

/** The live status of env: the one polled when given, else the one the environment carried. */
export function statusOf(env: EnvironmentDetail, live?: AgentStatus | null): AgentStatus {
  return live ?? env.agentStatus ?? { connected: !!env.agentConnected };
}

/** Which of the states of an agent environment's agent holds. */
export function agentState(env: EnvironmentDetail, live?: AgentStatus | null): AgentState {
  const st = statusOf(env, live);
  if (st.connected) {
    return {
      kind: 'connected',
      label: 'Connected',
      tone: 'ok',
      text: env.connectionType === 'agent-edge' ? 'The agent holds its connection to Berth.' : 'The agent answered Berth.',
    };
  }
  if (env.connectionType === 'agent-edge') {
    if (!env.hasAgentToken)
      return { kind: 'no-token', label: 'No token yet', tone: '', text: 'Generate the install lines and run one of them on the host.' };
    if (!env.agentLastSeen && !st.lastSeen && !env.agentId)
      return {
        kind: 'waiting',
        label: 'Waiting for the agent',
        tone: 'warn',
        text: 'A token is issued; no agent has connected with it yet.',
      };
    return { kind: 'disconnected', label: 'Disconnected', tone: 'bad', text: 'No agent is connected now.' };
  }
  if (st.lastError)
    return { kind: 'unreachable', label: 'Unreachable', tone: 'bad', text: 'Berth could not reach the agent the last time it tried.' };
  return { kind: 'unchecked', label: 'Not contacted yet', tone: '', text: 'Berth dials the agent when the environment is used: test the connection.' };
}

/** A few words naming the kind of the agent's last error. */
export function lastErrorTitle(msg: string): string {
  if (/presented the token/i.test(msg)) return 'A second agent was refused';
  if (/rotated/i.test(msg)) return 'Token rotated';
  if (/heartbeat/i.test(msg)) return 'No heartbeat';
  if (/refused berth's token|token/i.test(msg)) return 'Token refused';
  return 'Last error';
}

/** When the agent was last seen: the live connection's time, else the stored one, else the later of both. */
export function lastSeenOf(env: EnvironmentDetail, live?: AgentStatus | null): string | null {
  const a = statusOf(env, live).lastSeen ?? null;
  const b = env.agentLastSeen ?? null;
  if (!a || !b) return a ?? b;
  return Date.parse(a) >= Date.parse(b) ? a : b;
}

/** The agent's facts: the live connection's, else the stored ones. */
export function agentFacts(env: EnvironmentDetail, live?: AgentStatus | null) {
  const st = statusOf(env, live);
  const caps = st.agentCapabilities?.length ? st.agentCapabilities : (env.agentCapabilities ?? []);
  return {
    id: st.agentId || env.agentId || null,
    name: st.agentName || env.agentName || null,
    version: st.agentVersion || env.agentVersion || null,
    capabilities: caps,
  };
}

/** "just now", "12 s ago", "5 min ago", "3 h ago", "2 days ago" (or "in …" for a time ahead). */
export function relativeTime(iso: string | null | undefined, now: number = Date.now()): string {
  if (!iso) return '';
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return '';
  const diff = Math.round((now - t) / 1000);
  const abs = Math.abs(diff);
  if (abs < 3) return 'just now';
  let text: string;
  if (abs < 60) text = `${abs} s`;
  else if (abs < 3600) text = `${Math.floor(abs / 60)} min`;
  else if (abs < 86400) text = `${Math.floor(abs / 3600)} h`;
  else {
    const d = Math.floor(abs / 86400);
    text = `${d} day${d === 1 ? '' : 's'}`;
  }
  return diff >= 0 ? `${text} ago` : `in ${text}`;
}

/** The full local time of an ISO time, for a title. */
export function localTime(iso: string | null | undefined): string {
  if (!iso) return '';
  const t = new Date(iso);
  return Number.isNaN(t.getTime()) ? '' : t.toLocaleString();
}

/** A random token for a standard agent: 48 hex digits. */
export function randomToken(): string {
  const b = new Uint8Array(24);
  crypto.getRandomValues(b);
  return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
}

// The install lines of a new edge environment, handed from the create form
// to the environment's page (which is mounted anew): taken once, kept in
// memory only.
export interface InstallHandOver {
  envId: number;
  install?: AgentInstall;
  /** Why the token could not be issued. */
  error?: string;
}

let pending: InstallHandOver | null = null;

export function handOverInstall(p: InstallHandOver | null): void {
  pending = p;
}

export function takeInstall(envId: number): InstallHandOver | null {
  const p = pending?.envId === envId ? pending : null;
  pending = null;
  return p;
}
