// The "New container" form as data: its fields, their validation (messages by
// field id) and the POST /api/containers body it becomes.
import type { CreateContainerBody } from '../../lib/api-containers';

export interface PortRow {
  host: string;
  container: string;
  protocol: 'tcp' | 'udp';
}
export interface KeyValueRow {
  key: string;
  value: string;
}
export interface VolumeRow {
  source: string;
  target: string;
  readOnly: boolean;
}

export interface CreateForm {
  name: string;
  image: string;
  command: string;
  ports: PortRow[];
  env: KeyValueRow[];
  volumes: VolumeRow[];
  /** '' = the engine's default (bridge). */
  network: string;
  restartPolicy: 'no' | 'always' | 'unless-stopped' | 'on-failure';
  /** Maximum retries of on-failure ('' = unlimited). */
  restartRetries: string;
  memory: string;
  memoryUnit: 'MiB' | 'GiB';
  /** Number of CPUs, e.g. 0.5. */
  cpus: string;
  labels: KeyValueRow[];
  tty: boolean;
  startAfterCreate: boolean;
}

export function emptyForm(): CreateForm {
  return {
    name: '',
    image: '',
    command: '',
    ports: [],
    env: [],
    volumes: [],
    network: '',
    restartPolicy: 'no',
    restartRetries: '',
    memory: '',
    memoryUnit: 'MiB',
    cpus: '',
    labels: [],
    tty: false,
    startAfterCreate: true,
  };
}

/**
 * Splits a command line into arguments as a POSIX shell would for words:
 * white space separates, single quotes keep everything, double quotes keep
 * all but \" and \\, a backslash outside quotes escapes the next character.
 * Throws on an unclosed quote.
 */
export function splitCommand(line: string): string[] {
  const out: string[] = [];
  let cur = '';
  let has = false;
  let quote: '' | "'" | '"' = '';
  for (let i = 0; i < line.length; i++) {
    const ch = line[i];
    if (quote === "'") {
      if (ch === "'") quote = '';
      else cur += ch;
    } else if (quote === '"') {
      if (ch === '"') quote = '';
      else if (ch === '\\' && (line[i + 1] === '"' || line[i + 1] === '\\' || line[i + 1] === '$' || line[i + 1] === '`')) cur += line[++i];
      else cur += ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      has = true;
    } else if (ch === '\\' && i + 1 < line.length) {
      cur += line[++i];
      has = true;
    } else if (/\s/.test(ch)) {
      if (has || cur) out.push(cur);
      cur = '';
      has = false;
    } else {
      cur += ch;
      has = true;
    }
  }
  if (quote) throw new Error(`Unclosed ${quote === '"' ? 'double' : 'single'} quote`);
  if (has || cur) out.push(cur);
  return out;
}

const NAME = /^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/;
const ENV_KEY = /^[^=\s]+$/;

function port(v: string): number | null {
  if (!/^\d+$/.test(v.trim())) return null;
  const n = Number(v.trim());
  return n >= 1 && n <= 65535 ? n : null;
}

const blank = (s: string) => s.trim() === '';

/** Messages by field id ("image", "ports.0.container", "env.1.key", …); empty when the form is valid. */
export function validate(f: CreateForm): Record<string, string> {
  const e: Record<string, string> = {};
  if (blank(f.image)) e.image = 'Image is required.';
  else if (/\s/.test(f.image.trim())) e.image = 'An image reference has no spaces.';
  const name = f.name.trim().replace(/^\//, '');
  if (name && !NAME.test(name)) e.name = "Use letters, digits, '_', '.' and '-', starting with a letter or digit.";
  try {
    splitCommand(f.command);
  } catch (err) {
    e.command = `${(err as Error).message}.`;
  }

  const published = new Map<string, number>();
  f.ports.forEach((p, i) => {
    if (blank(p.host) && blank(p.container)) return;
    if (blank(p.container)) e[`ports.${i}.container`] = 'Container port is required.';
    else if (port(p.container) === null) e[`ports.${i}.container`] = 'A port is a number from 1 to 65535.';
    if (!blank(p.host)) {
      if (port(p.host) === null) e[`ports.${i}.host`] = 'A port is a number from 1 to 65535.';
      else {
        const key = `${port(p.host)}/${p.protocol}`;
        if (published.has(key)) e[`ports.${i}.host`] = `Host port ${key} is already used by row ${published.get(key)! + 1}.`;
        else published.set(key, i);
      }
    }
  });

  const pairs = (rows: KeyValueRow[], field: 'env' | 'labels', what: string) => {
    const seen = new Map<string, number>();
    rows.forEach((r, i) => {
      const key = r.key.trim();
      if (!key && r.value === '') return;
      if (!key) e[`${field}.${i}.key`] = `${what} name is required.`;
      else if (field === 'env' && !ENV_KEY.test(key)) e[`${field}.${i}.key`] = 'A variable name has no spaces and no "=".';
      else if (seen.has(key)) e[`${field}.${i}.key`] = `${key} is already set in row ${seen.get(key)! + 1}.`;
      else seen.set(key, i);
    });
  };
  pairs(f.env, 'env', 'Variable');
  pairs(f.labels, 'labels', 'Label');

  const targets = new Map<string, number>();
  f.volumes.forEach((v, i) => {
    if (blank(v.source) && blank(v.target)) return;
    const src = v.source.trim();
    const dst = v.target.trim();
    if (!src) e[`volumes.${i}.source`] = 'A volume name or a host path is required.';
    else if (!src.startsWith('/') && !NAME.test(src)) e[`volumes.${i}.source`] = 'Give a volume name or an absolute host path.';
    if (!dst) e[`volumes.${i}.target`] = 'A path in the container is required.';
    else if (!dst.startsWith('/')) e[`volumes.${i}.target`] = 'The path in the container is absolute (starts with /).';
    else if (targets.has(dst)) e[`volumes.${i}.target`] = `${dst} is already mounted by row ${targets.get(dst)! + 1}.`;
    else targets.set(dst, i);
    if (src.includes(':') || dst.includes(':')) e[`volumes.${i}.${src.includes(':') ? 'source' : 'target'}`] = 'Paths cannot contain ":".';
  });

  if (f.restartPolicy === 'on-failure' && !blank(f.restartRetries) && !/^\d+$/.test(f.restartRetries.trim()))
    e.restartRetries = 'Retries is a whole number (empty for no limit).';
  if (!blank(f.memory)) {
    const m = Number(f.memory);
    if (!Number.isFinite(m) || m <= 0) e.memory = 'Memory limit is a positive number.';
    else if (m * (f.memoryUnit === 'GiB' ? 1024 : 1) < 6) e.memory = 'The engine needs at least 6 MiB.';
  }
  if (!blank(f.cpus)) {
    const c = Number(f.cpus);
    if (!Number.isFinite(c) || c <= 0) e.cpus = 'CPU limit is a positive number, e.g. 0.5.';
    else if (Math.round(c * 1e9) < 1e7) e.cpus = 'The smallest CPU limit is 0.01.';
  }
  return e;
}

/** The request body of a valid form. */
export function toBody(f: CreateForm): CreateContainerBody {
  const body: CreateContainerBody = { image: f.image.trim(), startAfterCreate: f.startAfterCreate };
  const name = f.name.trim().replace(/^\//, '');
  if (name) body.name = name;
  const cmd = splitCommand(f.command);
  if (cmd.length) body.command = cmd;
  const ports = f.ports
    .filter((p) => !blank(p.container))
    .map((p) => ({ containerPort: p.container.trim(), hostPort: p.host.trim(), protocol: p.protocol }));
  if (ports.length) body.ports = ports;
  const env = f.env.filter((r) => r.key.trim()).map((r) => `${r.key.trim()}=${r.value}`);
  if (env.length) body.env = env;
  const labels = f.labels.filter((r) => r.key.trim());
  if (labels.length) body.labels = Object.fromEntries(labels.map((r) => [r.key.trim(), r.value]));
  const volumes = f.volumes
    .filter((v) => !blank(v.source) && !blank(v.target))
    .map((v) => `${v.source.trim()}:${v.target.trim()}${v.readOnly ? ':ro' : ''}`);
  if (volumes.length) body.volumes = volumes;
  if (f.network) body.networkMode = f.network;
  if (f.restartPolicy !== 'no') {
    body.restartPolicy =
      f.restartPolicy === 'on-failure' && !blank(f.restartRetries) && Number(f.restartRetries) > 0
        ? `on-failure:${Number(f.restartRetries)}`
        : f.restartPolicy;
  }
  if (!blank(f.memory)) body.memory = Math.round(Number(f.memory) * 1024 ** (f.memoryUnit === 'GiB' ? 3 : 2));
  if (!blank(f.cpus)) body.nanoCpus = Math.round(Number(f.cpus) * 1e9);
  if (f.tty) body.tty = true;
  return body;
}

/** Splits "KEY=VALUE" typed or pasted into a name field; null when there is no "=". */
export function splitPair(s: string): { key: string; value: string } | null {
  const at = s.indexOf('=');
  if (at <= 0) return null;
  return { key: s.slice(0, at).trim(), value: s.slice(at + 1) };
}
