// The shapes the infrastructure screens read (volumes, networks, environments
// and their agents, security settings, live container figures, engine
// events) — their requests go through the data layer and the typed client —
// and the one call that is a stream, not a read: the engine events the
// dashboard follows. Shapes from the handlers in server/internal/api
// (volumes.go, networks.go, environments.go, events.go, containers.go) and
// COMPAT.md. Every type lists only what the console reads.
import { stream, dataOf, type SSEvent } from './sse';

// ---------------------------------------------------------------- volumes

export interface VolumeUser {
  containerId: string;
  containerName: string;
}

export interface Volume {
  name: string;
  driver: string;
  mountpoint?: string;
  scope?: string;
  createdAt?: string;
  created?: string;
  labels?: Record<string, string> | null;
  options?: Record<string, string> | null;
  usedBy?: VolumeUser[] | null;
  /** Not sent by Berth today; read when an engine or a later version gives it. */
  size?: number;
  UsageData?: { Size?: number; RefCount?: number } | null;
}

export interface VolumeCreate {
  name: string;
  driver?: string;
  driverOpts?: Record<string, string>;
  labels?: Record<string, string>;
}

// ---------------------------------------------------------------- networks

export interface NetworkEndpoint {
  name: string;
  ipv4Address?: string;
  ipv6Address?: string;
}

/** A network of the list (Berth's shape: camelCase). */
export interface Network {
  id: string;
  name: string;
  driver: string;
  scope?: string;
  internal?: boolean;
  attachable?: boolean;
  ipam?: { driver?: string; config?: { subnet?: string; gateway?: string; ipRange?: string }[] | null } | null;
  containers?: Record<string, NetworkEndpoint> | null;
  labels?: Record<string, string> | null;
  options?: Record<string, string> | null;
  createdAt?: string;
}

/** The engine's own inspection document of a network (Docker's shape: PascalCase). */
export interface NetworkInspect {
  Id: string;
  Name: string;
  Driver?: string;
  Scope?: string;
  Created?: string;
  Internal?: boolean;
  Attachable?: boolean;
  EnableIPv6?: boolean;
  IPAM?: { Driver?: string; Config?: { Subnet?: string; Gateway?: string; IPRange?: string }[] | null } | null;
  Containers?: Record<string, { Name?: string; IPv4Address?: string; IPv6Address?: string; MacAddress?: string }> | null;
  Labels?: Record<string, string> | null;
  Options?: Record<string, string> | null;
}

export interface NetworkCreate {
  name: string;
  driver?: string;
  internal?: boolean;
  attachable?: boolean;
  labels?: Record<string, string>;
  options?: Record<string, string>;
  ipam?: { driver?: string; config: { subnet?: string; gateway?: string; ipRange?: string }[] };
}

/** The networks every engine creates itself; the server refuses to remove them. */
export const builtInNetworks: readonly string[] = ['bridge', 'host', 'none'];

// ---------------------------------------------------------------- environments

/** An environment as GET /api/environments/{id} answers it (secrets only as has* flags). */
export interface EnvironmentDetail {
  id: number;
  name: string;
  connectionType: string;
  host?: string;
  port?: number;
  protocol?: string;
  socketPath?: string;
  tlsCa?: string;
  tlsCert?: string;
  tlsSkipVerify?: boolean;
  hasTlsKey?: boolean;
  hasAgentToken?: boolean;
  /** Stored facts of the agent, from its last hello (edge) or test (standard). */
  agentLastSeen?: string | null;
  agentId?: string | null;
  agentName?: string | null;
  agentVersion?: string | null;
  agentCapabilities?: string[] | null;
  /** Agent environments only: the live state of the agent. */
  agentConnected?: boolean;
  agentStatus?: AgentStatus | null;
  icon?: string;
  labels?: string[] | null;
  publicIp?: string | null;
  createdAt?: string;
  updatedAt?: string;
}

/**
 * The body of create, update and test. On update an absent field keeps its
 * value; tlsKey absent keeps the stored key, "" clears it, any other string
 * replaces it (the server's secretField rule).
 */
export interface EnvironmentRequest {
  name?: string;
  connectionType?: string;
  host?: string;
  port?: number;
  protocol?: string;
  socketPath?: string;
  tlsCa?: string;
  tlsCert?: string;
  tlsKey?: string;
  tlsSkipVerify?: boolean;
  /** agent-standard: the token configured on the agent (same rule as tlsKey on update). */
  agentToken?: string;
  labels?: string[];
  publicIp?: string;
}

/**
 * The live state of an agent environment's agent (GET
 * /api/environments/{id}/agent-status; server/internal/agents/status.go).
 * For an edge agent the facts come from the live connection and are null
 * while none is held; lastError says why an agent was last refused or lost.
 */
export interface AgentStatus {
  connected: boolean;
  connectedSince?: string | null;
  lastSeen?: string | null;
  remoteAddress?: string | null;
  lastError?: string | null;
  lastErrorAt?: string | null;
  agentId?: string | null;
  agentName?: string | null;
  agentVersion?: string | null;
  agentCapabilities?: string[] | null;
}

/** A new edge token and the lines that install an agent with it: shown once. */
export interface AgentInstall {
  token: string;
  command: string;
  dockerRun: string;
  serverUrl: string;
}

export interface ConnectionTest {
  success: boolean;
  info?: {
    serverVersion?: string;
    apiVersion?: string;
    containers?: number;
    images?: number;
    name?: string;
    /** Agent environments: the agent that answered. */
    agent?: { id?: string; name?: string; version?: string; capabilities?: string[] | null } | null;
  };
  error?: string;
}

/** A Hawser edge agent's new token (POST /api/hawser/tokens): shown once. */
export interface HawserToken {
  token: string;
  tokenId: number;
  message: string;
  serverUrl: string;
  command: string;
}

/** A Hawser token as listed (GET /api/hawser/tokens): its prefix, never the token. */
export interface HawserTokenInfo {
  id: number;
  tokenPrefix: string;
  name: string;
  environmentId: number;
  isActive: boolean;
  lastUsed: string | null;
  createdAt: string;
  expiresAt: string | null;
}

// ---------------------------------------------------------------- security settings

/**
 * What non-administrators may ask of an environment's host (GET|PUT
 * /api/environments/{id}/security; server/internal/policy). berthHost: the
 * engine runs on Berth's own host, where Berth's data directory is never
 * bound by non-administrators whatever the settings.
 */
export interface EnvironmentSecurity {
  allowBindMounts: boolean;
  /** With bind mounts allowed: when not empty, only under these host directories. */
  allowedBindPaths: string[];
  allowPrivileged: boolean;
  allowHostNetwork: boolean;
  allowHostPID: boolean;
  allowHostIPC: boolean;
  allowDevices: boolean;
  allowCapAdd: boolean;
  allowSecurityOpt: boolean;
  berthHost?: boolean;
}

// ---------------------------------------------------------------- live figures and events

/** One running container's sample within a pass over all of them. */
export interface ContainerStat {
  id: string;
  name: string;
  cpuPercent?: number;
  memoryUsage?: number;
  memoryLimit?: number;
  memoryPercent?: number;
}

/** An engine event as the API relays it: named "<type>-<action>", data {id, name}. */
export interface EngineEvent {
  event: string;
  id?: string;
  name?: string;
  /** The engine's time of the event, Unix seconds. */
  time?: number;
}

/**
 * Follows the engine events of env until the server ends the stream (resolves)
 * or signal aborts (rejects with AbortError). `connected` and `error` events of
 * the relay itself are passed to onStatus, the engine's events to onEvent.
 */
export function followEvents(
  env: number,
  onEvent: (e: EngineEvent) => void,
  onStatus: (s: { connected: boolean; error?: string }) => void,
  signal?: AbortSignal,
): Promise<void> {
  return stream(
    'GET',
    '/api/events',
    (e: SSEvent) => {
      const d = dataOf<Record<string, unknown>>(e) ?? {};
      if (e.event === 'connected') onStatus({ connected: true });
      else if (e.event === 'error') onStatus({ connected: false, error: String(d.error ?? 'Environment is offline') });
      else
        onEvent({
          event: e.event,
          id: typeof d.id === 'string' ? d.id : undefined,
          name: typeof d.name === 'string' ? d.name : undefined,
          time: typeof d.time === 'number' && d.time > 0 ? d.time : undefined,
        });
    },
    { query: { env }, signal },
  );
}
