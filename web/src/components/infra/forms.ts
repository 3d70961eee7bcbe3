// Pure parts of the create and edit forms of volumes, networks and
// environments: key=value lists, client-side checks that mirror the server's
// (the server stays the judge and its message is shown as is) and the request
// bodies built from the form values.
import type { EnvironmentDetail, EnvironmentRequest, NetworkCreate, VolumeCreate } from '../../lib/api-infra';

/** Field name → message. Empty when the form may be sent. */
export type Errors = Record<string, string>;

/**
 * Parses "KEY=value" lines (blank lines and lines starting with # ignored).
 * A line without "=" or with an empty key, or a repeated key, is an error.
 */
export function parseKeyValues(text: string): { values: Record<string, string>; error?: string } {
  const values: Record<string, string> = {};
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (!line || line.startsWith('#')) continue;
    const eq = line.indexOf('=');
    const key = eq < 0 ? line : line.slice(0, eq).trim();
    if (eq < 0 || !key) return { values, error: `Line ${i + 1}: use key=value` };
    if (key in values) return { values, error: `Line ${i + 1}: “${key}” is given twice` };
    values[key] = line.slice(eq + 1).trim();
  }
  return { values };
}

/** The inverse of parseKeyValues (for showing labels and options). */
export function formatKeyValues(values: Record<string, string> | null | undefined): string {
  return Object.entries(values ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join('\n');
}

/** Names of volumes and networks: the engine's [a-zA-Z0-9][a-zA-Z0-9_.-]*. */
export const namePattern = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

// ---------------------------------------------------------------- volumes

export interface VolumeForm {
  name: string;
  driver: string;
  driverOpts: string;
  labels: string;
}

export function emptyVolumeForm(): VolumeForm {
  return { name: '', driver: 'local', driverOpts: '', labels: '' };
}

export function validateVolume(f: VolumeForm): Errors {
  const e: Errors = {};
  const name = f.name.trim();
  if (!name) e.name = 'Volume name is required';
  else if (name.length < 2 || name.length > 255 || !namePattern.test(name))
    e.name = 'Use 2 to 255 letters, digits, “_”, “.” or “-”, starting with a letter or digit';
  const opts = parseKeyValues(f.driverOpts);
  if (opts.error) e.driverOpts = opts.error;
  else if ((f.driver.trim() || 'local') === 'local' && Object.keys(opts.values).length) {
    const bad = Object.keys(opts.values).find((k) => !['type', 'device', 'o'].includes(k));
    if (bad) e.driverOpts = `The local driver accepts type, device and o, not “${bad}”`;
    else if (!opts.values.device) e.driverOpts = 'The local driver needs the device option when options are given';
  }
  const labels = parseKeyValues(f.labels);
  if (labels.error) e.labels = labels.error;
  return e;
}

export function volumeRequest(f: VolumeForm): VolumeCreate {
  return {
    name: f.name.trim(),
    driver: f.driver.trim() || 'local',
    driverOpts: parseKeyValues(f.driverOpts).values,
    labels: parseKeyValues(f.labels).values,
  };
}

// ---------------------------------------------------------------- networks

export interface NetworkForm {
  name: string;
  driver: string;
  subnet: string;
  gateway: string;
  internal: boolean;
  attachable: boolean;
  labels: string;
}

export function emptyNetworkForm(): NetworkForm {
  return { name: '', driver: 'bridge', subnet: '', gateway: '', internal: false, attachable: false, labels: '' };
}

const ipv4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const ipv6 = /^[0-9A-Fa-f:]*:[0-9A-Fa-f:.]*$/;

export function isIP(s: string): boolean {
  return ipv4.test(s) || (ipv6.test(s) && s.split('::').length <= 2);
}

export function isCIDR(s: string): boolean {
  const slash = s.lastIndexOf('/');
  if (slash < 0) return false;
  const addr = s.slice(0, slash);
  const bits = s.slice(slash + 1);
  if (!/^\d{1,3}$/.test(bits)) return false;
  const n = Number(bits);
  return ipv4.test(addr) ? n <= 32 : isIP(addr) && n <= 128;
}

export function validateNetwork(f: NetworkForm): Errors {
  const e: Errors = {};
  const name = f.name.trim();
  if (!name) e.name = 'Network name is required';
  else if (name.length > 255 || !namePattern.test(name))
    e.name = 'Use letters, digits, “_”, “.” or “-”, starting with a letter or digit';
  const subnet = f.subnet.trim();
  const gateway = f.gateway.trim();
  if (subnet && !isCIDR(subnet)) e.subnet = 'Use CIDR notation such as 172.30.0.0/16';
  if (gateway) {
    if (!subnet) e.gateway = 'A gateway needs a subnet';
    else if (!isIP(gateway)) e.gateway = 'Use an IP address such as 172.30.0.1';
  }
  const labels = parseKeyValues(f.labels);
  if (labels.error) e.labels = labels.error;
  return e;
}

export function networkRequest(f: NetworkForm): NetworkCreate {
  const req: NetworkCreate = {
    name: f.name.trim(),
    driver: f.driver.trim() || 'bridge',
    internal: f.internal,
    attachable: f.attachable,
    labels: parseKeyValues(f.labels).values,
  };
  const subnet = f.subnet.trim();
  if (subnet) req.ipam = { config: [{ subnet, ...(f.gateway.trim() ? { gateway: f.gateway.trim() } : {}) }] };
  return req;
}

/** The subnets of a network ("172.18.0.0/16, fd00::/64"), or "". */
export function subnetsOf(ipam: { config?: { subnet?: string }[] | null } | null | undefined): string {
  return (ipam?.config ?? [])
    .map((c) => c.subnet)
    .filter(Boolean)
    .join(', ');
}

// ---------------------------------------------------------------- environments

/** The connection types this console edits (all of the server's). */
export const editableTypes = ['socket', 'direct', 'agent-standard', 'agent-edge', 'hawser-standard', 'hawser-edge'] as const;

/** Hawser, the agent of the application Berth replaces: accepted for compatibility. */
export function isHawserType(t: string | undefined): boolean {
  return t === 'hawser-standard' || t === 'hawser-edge';
}

export function isEditableType(t: string): boolean {
  return (editableTypes as readonly string[]).includes(t);
}

export interface EnvironmentForm {
  name: string;
  connectionType: string;
  socketPath: string;
  host: string;
  port: string;
  protocol: string;
  tlsCa: string;
  tlsCert: string;
  /** A new key to store ("" = none given). */
  tlsKey: string;
  /** Edit only: the stored key is to be removed. */
  clearTlsKey: boolean;
  tlsSkipVerify: boolean;
  /** agent-standard: a new token to store ("" = none given: the stored one is kept). */
  agentToken: string;
  /** One label a line (or comma-separated). */
  labels: string;
  publicIp: string;
}

export function emptyEnvironmentForm(): EnvironmentForm {
  return {
    name: '',
    connectionType: 'socket',
    socketPath: '/var/run/docker.sock',
    host: '',
    port: '2375',
    protocol: 'http',
    tlsCa: '',
    tlsCert: '',
    tlsKey: '',
    clearTlsKey: false,
    tlsSkipVerify: false,
    agentToken: '',
    labels: '',
    publicIp: '',
  };
}

export function environmentForm(e: EnvironmentDetail): EnvironmentForm {
  return {
    name: e.name ?? '',
    connectionType: e.connectionType || 'socket',
    socketPath: e.socketPath || '/var/run/docker.sock',
    host: e.host ?? '',
    port: String(e.port || 2375),
    protocol: e.protocol || 'http',
    tlsCa: e.tlsCa ?? '',
    tlsCert: e.tlsCert ?? '',
    tlsKey: '',
    clearTlsKey: false,
    tlsSkipVerify: !!e.tlsSkipVerify,
    agentToken: '',
    labels: (e.labels ?? []).join('\n'),
    publicIp: e.publicIp ?? '',
  };
}

/** Labels from one-a-line or comma-separated text: trimmed, without empties and repeats. */
export function parseLabels(text: string): string[] {
  const out: string[] = [];
  for (const l of text.split(/[\n,]/)) {
    const v = l.trim();
    if (v && !out.includes(v)) out.push(v);
  }
  return out;
}

/** Whether the key the form would leave stored is present ("hasStored": the saved environment has one). */
export function keyPresent(f: EnvironmentForm, hasStored: boolean): boolean {
  return f.tlsKey.trim() !== '' || (hasStored && !f.clearTlsKey);
}

/** Whether the form's connection speaks TLS (direct over https; a standard agent always). */
export function usesTls(f: EnvironmentForm): boolean {
  return (
    ((f.connectionType === 'direct' || f.connectionType === 'hawser-standard') && f.protocol === 'https') ||
    f.connectionType === 'agent-standard'
  );
}

/**
 * Checks the form. hasStoredKey / hasStoredToken: the saved environment has a
 * client key / an agent token, which are kept unless replaced.
 */
export function validateEnvironment(f: EnvironmentForm, hasStoredKey = false, hasStoredToken = false): Errors {
  const e: Errors = {};
  const name = f.name.trim();
  if (!name) e.name = 'Environment name is required';
  else if (name.length > 100) e.name = 'At most 100 characters';
  if (f.connectionType === 'socket') {
    if (!f.socketPath.trim().startsWith('/')) e.socketPath = 'Socket path must be absolute (start with /)';
  } else if (f.connectionType === 'direct' || f.connectionType === 'agent-standard' || f.connectionType === 'hawser-standard') {
    const standard = f.connectionType === 'agent-standard';
    if (!f.host.trim())
      e.host =
        f.connectionType === 'direct' ? 'Host is required for a direct connection' : `Host is required for a standard agent`;
    else if (/[\s/]/.test(f.host.trim()) || f.host.includes('://'))
      e.host = 'Give the host name or address only (no scheme, port or path)';
    const port = Number(f.port);
    if (!/^\d+$/.test(f.port.trim()) || port < 1 || port > 65535) e.port = 'Port must be between 1 and 65535';
    if (f.connectionType === 'hawser-standard' && /\s/.test(f.agentToken.trim())) e.agentToken = 'A token has no spaces';
    if (standard) {
      if (!f.agentToken.trim() && !hasStoredToken) e.agentToken = 'The agent token is required: the one given to the agent with --token';
      else if (/\s/.test(f.agentToken.trim())) e.agentToken = 'A token has no spaces';
      if (!f.tlsCa.trim() && !f.tlsSkipVerify) e.tlsCa = "Paste the agent's certificate, or skip verification";
    }
    if (usesTls(f)) {
      const cert = f.tlsCert.trim() !== '';
      const key = keyPresent(f, hasStoredKey);
      if (cert && !key) e.tlsKey = 'A client certificate needs its private key';
      if (!cert && key) e.tlsCert = 'A private key needs its client certificate';
      for (const [field, pem, kind] of [
        ['tlsCa', f.tlsCa, 'CERTIFICATE'],
        ['tlsCert', f.tlsCert, 'CERTIFICATE'],
        ['tlsKey', f.tlsKey, 'PRIVATE KEY'],
      ] as const) {
        if (pem.trim() && !e[field] && !isPem(pem, kind)) e[field] = `Not a PEM ${kind.toLowerCase()} (-----BEGIN …${kind}-----)`;
      }
    }
  }
  if (parseLabels(f.labels).length > 10) e.labels = 'At most 10 labels';
  return e;
}

/** Whether text holds a PEM block whose type ends with kind ("RSA PRIVATE KEY" ends with "PRIVATE KEY"). */
export function isPem(text: string, kind: string): boolean {
  const m = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]+?-----END \1-----/.exec(text);
  return !!m && m[1].endsWith(kind);
}

/**
 * The body of create, update or test. TLS material is sent for https and
 * standard agents only (and cleared when an edited environment moves to
 * another type); the key and a standard agent's token only when a new one was
 * given, or "" to remove the stored one. An edge environment sends no
 * connection fields: its agent dials in.
 */
export function environmentRequest(f: EnvironmentForm, mode: 'create' | 'update' | 'test'): EnvironmentRequest {
  const req: EnvironmentRequest = {
    name: f.name.trim(),
    connectionType: f.connectionType,
    labels: parseLabels(f.labels),
    publicIp: f.publicIp.trim(),
  };
  if (f.connectionType === 'socket') {
    req.socketPath = f.socketPath.trim();
  } else {
    if (f.connectionType !== 'agent-edge' && f.connectionType !== 'hawser-edge') {
      req.host = f.host.trim();
      req.port = Number(f.port);
    }
    // A standard agent always speaks TLS; its protocol field is not used.
    if (f.connectionType === 'direct' || f.connectionType === 'hawser-standard') req.protocol = f.protocol;
  }
  if (f.connectionType === 'agent-standard' || f.connectionType === 'hawser-standard') {
    if (f.agentToken.trim()) req.agentToken = f.agentToken.trim();
  } else if (mode === 'update') {
    req.agentToken = ''; // a standard agent's token is not kept for another type (an edge token is apart)
  }
  if (usesTls(f)) {
    req.tlsCa = f.tlsCa.trim() ? f.tlsCa : '';
    req.tlsCert = f.tlsCert.trim() ? f.tlsCert : '';
    req.tlsSkipVerify = f.tlsSkipVerify;
    if (f.tlsKey.trim()) req.tlsKey = f.tlsKey;
    else if (mode === 'update' && f.clearTlsKey) req.tlsKey = '';
  } else if (mode === 'update') {
    req.tlsCa = '';
    req.tlsCert = '';
    req.tlsKey = '';
    req.tlsSkipVerify = false;
  }
  return req;
}

/** "unix:///var/run/docker.sock", "https://10.0.0.5:2376", a standard agent's "agent.lan:2376". */
export function environmentAddress(e: {
  connectionType: string;
  socketPath?: string;
  host?: string;
  port?: number;
  protocol?: string;
}): string {
  if (e.connectionType === 'socket') return `unix://${e.socketPath || '/var/run/docker.sock'}`;
  if (e.connectionType === 'agent-edge') return 'edge agent (connects in)';
  if (e.connectionType === 'hawser-edge') return 'Hawser edge agent (connects in)';
  if (!e.host) return '—';
  if (e.connectionType === 'agent-standard') return `${e.host}:${e.port || 2376}`;
  return `${e.protocol || 'http'}://${e.host}${e.port ? `:${e.port}` : ''}`;
}

export const typeLabels: Record<string, string> = {
  socket: 'Local socket',
  direct: 'Direct (TCP)',
  'agent-standard': 'Agent (standard)',
  'agent-edge': 'Agent (edge)',
  'hawser-standard': 'Hawser (standard, compatibility)',
  'hawser-edge': 'Hawser (edge, compatibility)',
};
