// The "New container" form as data: its fields, their validation (messages by
// field id) and the POST /api/containers body it becomes.

/** The POST /api/containers body (and POST …/update's) as this form sends it; the server's field names. */
export interface CreateContainerBody {
  name?: string;
  image: string;
  command?: string[];
  entrypoint?: string[];
  workingDir?: string;
  user?: string;
  hostname?: string;
  ports?: { containerPort: string; hostPort: string; protocol: string; hostIp?: string }[];
  env?: string[];
  labels?: Record<string, string>;
  /** Binds: "source:destination[:ro]". */
  volumes?: string[];
  networkMode?: string;
  networkAliases?: string[];
  restartPolicy?: string;
  memory?: number;
  memoryReservation?: number;
  /** Memory plus swap (an in-place change of the memory limit sets it too). */
  memorySwap?: number;
  nanoCpus?: number;
  pidsLimit?: number;
  capAdd?: string[];
  capDrop?: string[];
  privileged?: boolean;
  devices?: { hostPath: string; containerPath: string; permissions: string }[];
  dns?: string[];
  dnsSearch?: string[];
  dnsOptions?: string[];
  healthcheck?: { test: string[]; interval?: number; timeout?: number; retries?: number; startPeriod?: number } | null;
  logDriver?: string;
  logOptions?: Record<string, string>;
  init?: boolean;
  readonlyRootfs?: boolean;
  tty?: boolean;
  startAfterCreate?: boolean;
}

/** Pull policy of a create: pull when the engine lacks the image, always, or never. */
export type PullPolicy = 'missing' | 'always' | 'never';

export interface DeviceRow {
  host: string;
  container: string;
  permissions: string;
}

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
  // Advanced (docker run's other options).
  pullPolicy: PullPolicy;
  entrypoint: string;
  workingDir: string;
  user: string;
  hostname: string;
  networkAliases: string;
  memoryReservation: string;
  pidsLimit: string;
  /** Capabilities, separated by spaces or commas (CAP_ optional). */
  capAdd: string;
  capDrop: string;
  privileged: boolean;
  devices: DeviceRow[];
  /** Separated by spaces or commas. */
  dns: string;
  dnsSearch: string;
  dnsOptions: string;
  /** 'image' keeps the image's health check; 'none' turns it off; 'custom' uses the fields below. */
  healthMode: 'image' | 'none' | 'custom';
  healthTest: string;
  /** Seconds. */
  healthInterval: string;
  healthTimeout: string;
  healthStartPeriod: string;
  healthRetries: string;
  logDriver: string;
  logOptions: KeyValueRow[];
  init: boolean;
  readonlyRootfs: boolean;
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
    pullPolicy: 'missing',
    entrypoint: '',
    workingDir: '',
    user: '',
    hostname: '',
    networkAliases: '',
    memoryReservation: '',
    pidsLimit: '',
    capAdd: '',
    capDrop: '',
    privileged: false,
    devices: [],
    dns: '',
    dnsSearch: '',
    dnsOptions: '',
    healthMode: 'image',
    healthTest: '',
    healthInterval: '',
    healthTimeout: '',
    healthStartPeriod: '',
    healthRetries: '',
    logDriver: '',
    logOptions: [],
    init: false,
    readonlyRootfs: false,
  };
}

/** Words of a list typed with spaces or commas. */
export function words(s: string): string[] {
  return s
    .split(/[\s,]+/)
    .map((w) => w.trim())
    .filter(Boolean);
}

/** A capability as the engine names it: upper case, CAP_ prefix. */
export function capName(s: string): string {
  const u = s.trim().toUpperCase();
  return u === 'ALL' || u.startsWith('CAP_') ? u : `CAP_${u}`;
}

/** Joins arguments into one line that splitCommand splits back into them. */
export function joinCommand(args: string[]): string {
  return args
    .map((a) => (a !== '' && /^[A-Za-z0-9_@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`))
    .join(' ');
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

  const pairs = (rows: KeyValueRow[], field: 'env' | 'labels' | 'logOptions', what: string) => {
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
  try {
    splitCommand(f.entrypoint);
  } catch (err) {
    e.entrypoint = `${(err as Error).message}.`;
  }
  if (!blank(f.workingDir) && !f.workingDir.trim().startsWith('/')) e.workingDir = 'The working directory is an absolute path (starts with /).';
  if (/\s/.test(f.user.trim())) e.user = 'A user is a name or uid[:gid], without spaces.';
  if (!blank(f.hostname) && !/^[a-zA-Z0-9]([a-zA-Z0-9.-]{0,252})$/.test(f.hostname.trim()))
    e.hostname = 'A host name has letters, digits, "." and "-".';
  if (!blank(f.memoryReservation)) {
    const m = Number(f.memoryReservation);
    if (!Number.isFinite(m) || m <= 0) e.memoryReservation = 'Memory reservation is a positive number.';
  }
  if (!blank(f.pidsLimit) && !/^-?\d+$/.test(f.pidsLimit.trim())) e.pidsLimit = 'Process limit is a whole number (-1 for no limit).';
  const capOK = /^(CAP_)?[A-Z_]+$/i;
  for (const k of ['capAdd', 'capDrop'] as const) {
    const bad = words(f[k]).find((w) => !capOK.test(w));
    if (bad) e[k] = `“${bad}” is not a capability name (e.g. NET_ADMIN).`;
  }
  f.devices.forEach((d, i) => {
    if (blank(d.host) && blank(d.container)) return;
    if (!d.host.trim().startsWith('/')) e[`devices.${i}.host`] = 'A device is a host path such as /dev/fuse.';
    if (!blank(d.container) && !d.container.trim().startsWith('/')) e[`devices.${i}.container`] = 'The path in the container is absolute.';
    if (!/^[rwm]{0,3}$/.test(d.permissions.trim())) e[`devices.${i}.permissions`] = 'Permissions are letters of r, w and m.';
  });
  const ipOK = /^[0-9a-fA-F:.]+$/;
  const badDns = words(f.dns).find((w) => !ipOK.test(w));
  if (badDns) e.dns = `“${badDns}” is not an IP address.`;
  if (f.healthMode === 'custom') {
    if (blank(f.healthTest)) e.healthTest = 'The health check command is required.';
    else
      try {
        splitCommand(f.healthTest);
      } catch (err) {
        e.healthTest = `${(err as Error).message}.`;
      }
    for (const k of ['healthInterval', 'healthTimeout', 'healthStartPeriod'] as const) {
      if (blank(f[k])) continue;
      const n = Number(f[k]);
      if (!Number.isFinite(n) || n < 0.001) e[k] = 'A duration in seconds, at least 0.001 (1 ms).';
    }
    if (!blank(f.healthRetries) && !/^\d+$/.test(f.healthRetries.trim())) e.healthRetries = 'Retries is a whole number.';
  }
  if (!blank(f.logDriver) && !/^[a-z0-9][a-z0-9_.:/-]*$/i.test(f.logDriver.trim())) e.logDriver = 'A log driver is a name such as json-file or local.';
  pairs(f.logOptions, 'logOptions', 'Option');
  return e;
}

/**
 * The request body of a valid form. complete (an edit) also sends what is
 * empty or off (no ports, no variables, no command or entrypoint,
 * privileged false, no limit …), so that the update, which keeps every
 * absent field, removes what the user removed. The image's health check is
 * kept when the form says "the image's".
 */
export function toBody(f: CreateForm, complete = false): CreateContainerBody {
  const body = createBody(f);
  if (!complete) return body;
  const b: CreateContainerBody = {
    command: [],
    entrypoint: [],
    hostname: '',
    pidsLimit: 0,
    logDriver: '',
    logOptions: {},
    ports: [],
    env: [],
    labels: {},
    volumes: [],
    networkAliases: [],
    restartPolicy: 'no',
    memory: 0,
    memoryReservation: 0,
    nanoCpus: 0,
    capAdd: [],
    capDrop: [],
    privileged: false,
    devices: [],
    dns: [],
    dnsSearch: [],
    dnsOptions: [],
    init: false,
    readonlyRootfs: false,
    tty: false,
    workingDir: '',
    user: '',
    ...body,
  };
  delete b.startAfterCreate;
  if (!b.networkMode) b.networkMode = 'bridge';
  return b;
}

/** The fields docker update changes on a container as it is (no recreate). */
const LIVE_FIELDS = new Set(['restartPolicy', 'memory', 'memoryReservation', 'nanoCpus', 'pidsLimit']);
/** Limits that docker update cannot take away (0 means "unchanged" to it). */
const LIVE_NONZERO = new Set(['memory', 'memoryReservation', 'nanoCpus']);

/** What saving an edit does: nothing, a change in place (docker update), or a recreate. */
export type EditPlan = 'none' | 'live' | 'recreate';

/**
 * The body of an edit: only the fields that differ between the form as it
 * was filled (before) and as it is (after), so that a field left alone
 * keeps what the container has (an image default stays the image's), and a
 * field cleared is sent empty. plan says whether the change can be made in
 * place (resources and restart policy only, no limit removed) or needs a
 * recreate.
 */
export function editBody(before: CreateForm, after: CreateForm): { body: CreateContainerBody; plan: EditPlan } {
  const was = toBody(before, true) as unknown as Record<string, unknown>;
  const now = toBody(after, true) as unknown as Record<string, unknown>;
  const body: Record<string, unknown> = {};
  for (const k of new Set([...Object.keys(was), ...Object.keys(now)])) {
    if (!(k in now)) continue;
    if (JSON.stringify(was[k]) !== JSON.stringify(now[k])) body[k] = now[k];
  }
  // Back to the image's health check: an empty test, the engine's "inherit"
  // (the update drops the container's own, be it a command or NONE).
  if ('healthcheck' in was && !('healthcheck' in now)) body.healthcheck = { test: [] };
  const keys = Object.keys(body);
  if (!keys.length) return { body: {} as CreateContainerBody, plan: 'none' };
  const live = keys.every((k) => LIVE_FIELDS.has(k) && !(LIVE_NONZERO.has(k) && !body[k]));
  if (live && body.pidsLimit === 0) body.pidsLimit = -1; // docker update's "no limit"
  // docker update refuses a memory limit above the swap limit in force: the
  // swap is set with it, as docker run sets it (twice the memory).
  if (live && typeof body.memory === 'number') body.memorySwap = body.memory * 2;
  return { body: body as unknown as CreateContainerBody, plan: live ? 'live' : 'recreate' };
}

const LIMIT_NAMES: Record<string, string> = { memory: 'memory limit', memoryReservation: 'memory reservation', nanoCpus: 'CPU limit' };

/**
 * The limits an edit takes away (by name, e.g. "memory limit"). docker update
 * cannot remove one: it takes 0 as "unchanged" and refuses -1, so such an
 * edit recreates the container.
 */
export function removedLimits(before: CreateForm, after: CreateForm): string[] {
  const was = toBody(before, true) as unknown as Record<string, unknown>;
  const now = toBody(after, true) as unknown as Record<string, unknown>;
  return Object.keys(LIMIT_NAMES)
    .filter((k) => was[k] && !now[k])
    .map((k) => LIMIT_NAMES[k]);
}

function createBody(f: CreateForm): CreateContainerBody {
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
  const ep = splitCommand(f.entrypoint);
  if (ep.length) body.entrypoint = ep;
  if (!blank(f.workingDir)) body.workingDir = f.workingDir.trim();
  if (!blank(f.user)) body.user = f.user.trim();
  if (!blank(f.hostname)) body.hostname = f.hostname.trim();
  const aliases = words(f.networkAliases);
  if (aliases.length) body.networkAliases = aliases;
  if (!blank(f.memoryReservation)) body.memoryReservation = Math.round(Number(f.memoryReservation) * 1024 ** 2);
  if (!blank(f.pidsLimit)) body.pidsLimit = Number(f.pidsLimit.trim());
  const add = words(f.capAdd).map(capName);
  if (add.length) body.capAdd = add;
  const drop = words(f.capDrop).map(capName);
  if (drop.length) body.capDrop = drop;
  if (f.privileged) body.privileged = true;
  const devices = f.devices
    .filter((d) => !blank(d.host))
    .map((d) => ({ hostPath: d.host.trim(), containerPath: d.container.trim() || d.host.trim(), permissions: d.permissions.trim() || 'rwm' }));
  if (devices.length) body.devices = devices;
  for (const k of ['dns', 'dnsSearch', 'dnsOptions'] as const) {
    const w = words(f[k]);
    if (w.length) body[k] = w;
  }
  if (f.healthMode === 'none') body.healthcheck = null;
  else if (f.healthMode === 'custom') {
    const ns = (v: string) => (blank(v) ? undefined : Math.round(Number(v) * 1e9));
    body.healthcheck = {
      test: ['CMD-SHELL', f.healthTest.trim()],
      interval: ns(f.healthInterval),
      timeout: ns(f.healthTimeout),
      startPeriod: ns(f.healthStartPeriod),
      retries: blank(f.healthRetries) ? undefined : Number(f.healthRetries),
    };
  }
  if (!blank(f.logDriver)) body.logDriver = f.logDriver.trim();
  const logOpts = f.logOptions.filter((r) => r.key.trim());
  if (logOpts.length) body.logOptions = Object.fromEntries(logOpts.map((r) => [r.key.trim(), r.value]));
  if (f.init) body.init = true;
  if (f.readonlyRootfs) body.readonlyRootfs = true;
  return body;
}

/** The fields of a container's inspection that fromInspect reads. */
export interface InspectDoc {
  Id?: string;
  Name?: string;
  Config?: {
    Image?: string;
    Cmd?: string[] | null;
    Entrypoint?: string[] | null;
    Env?: string[] | null;
    Labels?: Record<string, string> | null;
    WorkingDir?: string;
    User?: string;
    Hostname?: string;
    Tty?: boolean;
    Healthcheck?: { Test?: string[] | null; Interval?: number; Timeout?: number; StartPeriod?: number; Retries?: number } | null;
  };
  HostConfig?: {
    NetworkMode?: string;
    PortBindings?: Record<string, { HostIp?: string; HostPort?: string }[] | null> | null;
    RestartPolicy?: { Name?: string; MaximumRetryCount?: number };
    Memory?: number;
    MemoryReservation?: number;
    NanoCpus?: number;
    PidsLimit?: number | null;
    CapAdd?: string[] | null;
    CapDrop?: string[] | null;
    Privileged?: boolean;
    Devices?: { PathOnHost?: string; PathInContainer?: string; CgroupPermissions?: string }[] | null;
    Dns?: string[] | null;
    DnsSearch?: string[] | null;
    DnsOptions?: string[] | null;
    LogConfig?: { Type?: string; Config?: Record<string, string> | null };
    Init?: boolean | null;
    ReadonlyRootfs?: boolean;
  };
  Mounts?: { Type?: string; Name?: string; Source?: string; Destination?: string; RW?: boolean }[] | null;
  NetworkSettings?: { Networks?: Record<string, { Aliases?: string[] | null }> | null };
}

const secs = (ns?: number) => (ns ? String(ns / 1e9) : '');
const sameHealth = (h?: ImageDefaults['Healthcheck']) =>
  h ? [h.Test ?? [], h.Interval ?? 0, h.Timeout ?? 0, h.StartPeriod ?? 0, h.Retries ?? 0] : null;

/** The defaults a container takes from its image (the image's inspection's Config). */
export interface ImageDefaults {
  Env?: string[] | null;
  Labels?: Record<string, string> | null;
  Healthcheck?: { Test?: string[] | null; Interval?: number; Timeout?: number; StartPeriod?: number; Retries?: number } | null;
}

/**
 * A form holding a container's settings (Edit and Duplicate). Anonymous
 * volumes are not copied: the engine makes new ones. The variables and
 * labels equal to the image's own (image) are left out: the engine adds
 * them by itself, and copying them would freeze the image's defaults into
 * the container.
 */
export function fromInspect(doc: InspectDoc, image?: ImageDefaults | null): CreateForm {
  const f = emptyForm();
  const c = doc.Config ?? {};
  const h = doc.HostConfig ?? {};
  const imageEnv = new Set(image?.Env ?? []);
  const imageLabels = image?.Labels ?? {};
  f.name = (doc.Name ?? '').replace(/^\//, '');
  f.image = c.Image ?? '';
  f.command = joinCommand(c.Cmd ?? []);
  f.entrypoint = joinCommand(c.Entrypoint ?? []);
  f.env = (c.Env ?? [])
    .filter((v) => !imageEnv.has(v))
    .map((v) => {
      const p = splitPair(v);
      return p ?? { key: v, value: '' };
    });
  f.labels = Object.entries(c.Labels ?? {})
    .filter(([key, value]) => !(key in imageLabels && imageLabels[key] === value))
    .map(([key, value]) => ({ key, value }));
  f.workingDir = c.WorkingDir ?? '';
  f.user = c.User ?? '';
  // The engine names a container's host after its short id unless told otherwise.
  f.hostname = c.Hostname && !(doc.Id ?? '').startsWith(c.Hostname) ? c.Hostname : '';
  f.tty = !!c.Tty;
  f.ports = Object.entries(h.PortBindings ?? {}).flatMap(([key, binds]) => {
    const [container, proto] = key.split('/');
    const protocol = proto === 'udp' ? 'udp' : 'tcp';
    return (binds?.length ? binds : [{ HostPort: '' }]).map((b) => ({ host: b.HostPort ?? '', container, protocol }) as PortRow);
  });
  f.volumes = (doc.Mounts ?? []).flatMap((m) => {
    const src = m.Type === 'volume' ? (m.Name ?? '') : m.Type === 'bind' ? (m.Source ?? '') : '';
    if (!src || !m.Destination || (m.Type === 'volume' && /^[0-9a-f]{64}$/.test(src))) return [];
    return [{ source: src, target: m.Destination, readOnly: m.RW === false }];
  });
  const net = h.NetworkMode ?? '';
  f.network = net === 'default' || net === 'bridge' ? '' : net;
  const rp = h.RestartPolicy?.Name ?? '';
  f.restartPolicy = rp === 'always' || rp === 'unless-stopped' || rp === 'on-failure' ? rp : 'no';
  f.restartRetries = rp === 'on-failure' && h.RestartPolicy?.MaximumRetryCount ? String(h.RestartPolicy.MaximumRetryCount) : '';
  if (h.Memory) {
    const mib = h.Memory / 1024 ** 2;
    if (mib >= 1024 && Number.isInteger(mib / 1024)) {
      f.memory = String(mib / 1024);
      f.memoryUnit = 'GiB';
    } else f.memory = String(Math.round(mib * 100) / 100);
  }
  if (h.MemoryReservation) f.memoryReservation = String(Math.round((h.MemoryReservation / 1024 ** 2) * 100) / 100);
  if (h.NanoCpus) f.cpus = String(h.NanoCpus / 1e9);
  if (h.PidsLimit && h.PidsLimit > 0) f.pidsLimit = String(h.PidsLimit);
  const plain = (caps?: string[] | null) => (caps ?? []).map((x) => x.replace(/^CAP_/, '')).join(' ');
  f.capAdd = plain(h.CapAdd);
  f.capDrop = plain(h.CapDrop);
  f.privileged = !!h.Privileged;
  f.devices = (h.Devices ?? []).map((d) => ({ host: d.PathOnHost ?? '', container: d.PathInContainer ?? '', permissions: d.CgroupPermissions ?? '' }));
  f.dns = (h.Dns ?? []).join(' ');
  f.dnsSearch = (h.DnsSearch ?? []).join(' ');
  f.dnsOptions = (h.DnsOptions ?? []).join(' ');
  const hc = c.Healthcheck;
  // The engine copies the image's health check into the container's
  // configuration: that one is shown as "the image's", not as a command.
  const imageHc = image?.Healthcheck;
  const fromImage = !!imageHc?.Test?.length && JSON.stringify(sameHealth(hc)) === JSON.stringify(sameHealth(imageHc));
  if (hc?.Test?.length && !fromImage) {
    if (hc.Test[0] === 'NONE') f.healthMode = 'none';
    else {
      f.healthMode = 'custom';
      f.healthTest = hc.Test[0] === 'CMD-SHELL' ? hc.Test.slice(1).join(' ') : joinCommand(hc.Test.slice(1));
      f.healthInterval = secs(hc.Interval);
      f.healthTimeout = secs(hc.Timeout);
      f.healthStartPeriod = secs(hc.StartPeriod);
      f.healthRetries = hc.Retries ? String(hc.Retries) : '';
    }
  }
  const lc = h.LogConfig;
  if (lc?.Type && lc.Type !== 'json-file') f.logDriver = lc.Type;
  f.logOptions = Object.entries(lc?.Config ?? {}).map(([key, value]) => ({ key, value }));
  if (f.logOptions.length && !f.logDriver) f.logDriver = lc?.Type ?? '';
  const primary = doc.NetworkSettings?.Networks?.[net === 'default' ? 'bridge' : net];
  const short = (doc.Id ?? '').slice(0, 12);
  f.networkAliases = (primary?.Aliases ?? []).filter((a) => a !== short && a !== f.name).join(' ');
  f.init = !!h.Init;
  f.readonlyRootfs = !!h.ReadonlyRootfs;
  return f;
}

/** A reference as the engine lists it in RepoTags: docker.io/library/ dropped, :latest added. */
export function normalizeRef(ref: string): string {
  let r = ref.trim();
  if (r.includes('@')) return r;
  r = r.replace(/^(docker\.io|index\.docker\.io|registry-1\.docker\.io)\//, '').replace(/^library\//, '');
  const slash = r.lastIndexOf('/');
  if (!r.slice(slash + 1).includes(':')) r += ':latest';
  return r;
}

/** Whether an image of the engine (its RepoTags, RepoDigests and id) is the reference. */
export function imageMatches(img: { Id?: string; RepoTags?: string[] | null; RepoDigests?: string[] | null }, ref: string): boolean {
  const want = normalizeRef(ref);
  if ((img.RepoTags ?? []).some((t) => normalizeRef(t) === want)) return true;
  if (want.includes('@')) return (img.RepoDigests ?? []).some((d) => normalizeRef(d) === want) || img.Id === want;
  const id = ref.trim().replace(/^sha256:/, '');
  return /^[0-9a-f]{12,64}$/.test(id) && !!img.Id?.replace(/^sha256:/, '').startsWith(id);
}

/** Splits "KEY=VALUE" typed or pasted into a name field; null when there is no "=". */
export function splitPair(s: string): { key: string; value: string } | null {
  const at = s.indexOf('=');
  if (at <= 0) return null;
  return { key: s.slice(0, at).trim(), value: s.slice(at + 1) };
}
