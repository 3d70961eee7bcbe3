// The config set form's state and its conversions from and to the API's
// shape. A secret variable comes from the server masked: the form holds it
// with an empty value and sends the mask back, which keeps the stored value,
// unless the user types a new one.
import { SECRET_MASK, type ConfigSet, type ConfigSetBody, type ConfigSetVolume } from '../../lib/api-templates';

export interface VarRow {
  key: string;
  value: string;
  isSecret: boolean;
  /** The name under which the server holds a secret value for this row (stored secrets only). */
  storedSecret?: string;
}

export interface PairRow {
  key: string;
  value: string;
}

export type Protocol = 'tcp' | 'udp' | 'sctp';

export interface PortRow {
  hostIp: string;
  hostPort: string;
  containerPort: string;
  protocol: Protocol;
}

export interface VolumeRow {
  source: string;
  target: string;
  /** 'rw' (or '', the same), 'ro', or another mode the set was saved with. */
  mode: string;
}

export interface ConfigSetForm {
  name: string;
  description: string;
  env: VarRow[];
  labels: PairRow[];
  ports: PortRow[];
  volumes: VolumeRow[];
  networkMode: string;
  restartPolicy: string;
}

export const restartPolicies = ['no', 'always', 'on-failure', 'unless-stopped'] as const;

export function emptyConfigSetForm(): ConfigSetForm {
  return { name: '', description: '', env: [], labels: [], ports: [], volumes: [], networkMode: '', restartPolicy: '' };
}

/** The form's row of a volume the API answers (read-write shows as ''). */
export function volumeRow(v: ConfigSetVolume): VolumeRow {
  return { source: v.hostPath ?? '', target: v.containerPath ?? '', mode: v.mode === 'rw' ? '' : (v.mode ?? '') };
}

/** The API's volume of a form row. */
export function volumeOf(v: VolumeRow): ConfigSetVolume {
  return { hostPath: v.source.trim(), containerPath: v.target.trim(), mode: v.mode || 'rw' };
}

/** The form editing set: secret values are left empty (the server never sends them). */
export function formOf(set: ConfigSet): ConfigSetForm {
  return {
    name: set.name,
    description: set.description ?? '',
    env: (set.envVars ?? []).map((v) =>
      v.isSecret ? { key: v.key, value: '', isSecret: true, storedSecret: v.key } : { key: v.key, value: v.value, isSecret: false },
    ),
    labels: (set.labels ?? []).map(({ key, value }) => ({ key, value })),
    ports: (set.ports ?? []).map((p) => ({
      hostIp: p.hostIp ?? '',
      hostPort: p.hostPort ?? '',
      containerPort: p.containerPort,
      protocol: p.protocol === 'udp' || p.protocol === 'sctp' ? p.protocol : 'tcp',
    })),
    volumes: (set.volumes ?? []).map(volumeRow),
    networkMode: set.networkMode ?? '',
    restartPolicy: set.restartPolicy ?? '',
  };
}

/** Whether a stored secret's row is sent back as the mask (its value kept). */
export function keepsSecret(r: VarRow): boolean {
  return r.isSecret && !!r.storedSecret && r.value === '';
}

/**
 * The request body of f. Rows left entirely empty are dropped; a stored
 * secret left empty is sent as the mask, so the server keeps its value (and
 * refuses it, with a message, if it was renamed).
 */
export function bodyOf(f: ConfigSetForm): ConfigSetBody {
  return {
    name: f.name.trim(),
    description: f.description.trim(),
    envVars: f.env
      .filter((r) => r.key.trim() || r.value || keepsSecret(r))
      .map((r) => ({ key: r.key.trim(), value: keepsSecret(r) ? SECRET_MASK : r.value, isSecret: r.isSecret })),
    labels: f.labels.filter((l) => l.key.trim() || l.value).map((l) => ({ key: l.key.trim(), value: l.value })),
    ports: f.ports
      .filter((p) => p.containerPort.trim() || p.hostPort.trim() || p.hostIp.trim())
      .map((p) => {
        const out: ConfigSetBody['ports'][number] = { containerPort: p.containerPort.trim(), protocol: p.protocol };
        if (p.hostPort.trim()) out.hostPort = p.hostPort.trim();
        if (p.hostIp.trim()) out.hostIp = p.hostIp.trim();
        return out;
      }),
    volumes: f.volumes.filter((v) => v.source.trim() || v.target.trim()).map(volumeOf),
    networkMode: f.networkMode.trim(),
    restartPolicy: f.restartPolicy,
  };
}
