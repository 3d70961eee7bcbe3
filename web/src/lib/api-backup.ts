// The backups console's calls and shapes (issue 24): destinations (restic
// repositories), configurations, snapshots and restores under /api/backup/*.
// The typed client (client.ts) does not have these paths until the server's
// OpenAPI document is regenerated with the backup routes, so they go through
// request() and stream(); the answers are read tolerantly (the reference's
// field names and Berth's), and a type lists only what the console reads.
import { buildUrl, request } from './api';
import { describeCron } from './cron';
import { dataOf, stream, type SSEvent } from './sse';

const seg = encodeURIComponent;

// ---------------------------------------------------------------- destinations

/** Repository types, as the server derives them from the repository string. */
export type RepoType = 'local' | 'sftp' | 'rest' | 's3';

export const repoTypes: readonly { id: RepoType; label: string }[] = [
  { id: 'local', label: 'Local path on a host' },
  { id: 'sftp', label: 'SFTP' },
  { id: 'rest', label: 'restic REST server' },
  { id: 's3', label: 'S3' },
];

/** The outcome of a destination's last test (none: never tested). */
export interface DestinationTest {
  status: 'success' | 'needs_init' | 'failed' | string;
  message?: string;
  at?: string;
}

export interface Destination {
  id: number;
  name: string;
  type: RepoType | string;
  /** The repository string without secrets. */
  repository: string;
  hostPath?: string;
  environmentId?: number | null;
  flags?: string;
  policies?: string;
  /** Only on a single destination read by a backups:manage caller. */
  envVars?: Record<string, string>;
  /** The names of its extra environment (always answered). */
  envVarNames?: string[];
  hasPassword?: boolean;
  hasSshKey?: boolean;
  sshKnownHosts?: string;
  lastTest?: DestinationTest | null;
}

/** A destination as listed, whatever names the server used for its test outcome. */
export function normalizeDestination(raw: Record<string, unknown>): Destination {
  const d = raw as unknown as Destination & Record<string, unknown>;
  let lastTest: DestinationTest | null = null;
  const lt = raw.lastTest as Record<string, unknown> | null | undefined;
  if (lt && typeof lt === 'object' && (lt.status || lt.Status)) {
    lastTest = {
      status: String(lt.status ?? lt.Status),
      message: (lt.message ?? lt.error ?? lt.Message) as string | undefined,
      at: (lt.at ?? lt.testedAt ?? lt.At) as string | undefined,
    };
  } else if (typeof raw.lastTestStatus === 'string' && raw.lastTestStatus) {
    lastTest = {
      status: raw.lastTestStatus,
      message: (raw.lastTestMessage ?? raw.lastTestError) as string | undefined,
      at: (raw.lastTestAt ?? raw.lastTestedAt) as string | undefined,
    };
  }
  return { ...d, type: (d.type as string) || repoTypeOf(String(d.repository ?? '')), lastTest };
}

/** The type of a restic repository string ("/srv/restic" is a local path). */
export function repoTypeOf(repository: string): RepoType {
  if (repository.startsWith('sftp:')) return 'sftp';
  if (repository.startsWith('rest:')) return 'rest';
  if (repository.startsWith('s3:')) return 's3';
  return 'local';
}

/** A destination's test state in words: untested, ok, needs init or failing (with why). */
export function testState(t: DestinationTest | null | undefined): { state: 'untested' | 'ok' | 'needs-init' | 'failing'; label: string; why?: string } {
  if (!t) return { state: 'untested', label: 'not tested' };
  if (t.status === 'success' || t.status === 'ok') return { state: 'ok', label: 'ok' };
  if (t.status === 'needs_init') return { state: 'needs-init', label: 'not initialized', why: t.message || 'The repository is not initialized yet: use Init.' };
  return { state: 'failing', label: 'failing', why: t.message || 'The last test failed.' };
}

/** What the server reads as "keep the stored secret" in a destination's envVars. */
export const SECRET_MASK = '********';

/** The fields of the destination dialog, per repository type. */
export interface DestinationFields {
  name: string;
  type: RepoType;
  /** local: the path on the host; the environment whose host it is. */
  hostPath: string;
  environmentId: number | null;
  /** sftp: user@host:/path, the private key and known_hosts lines. */
  sftpTarget: string;
  sshKey: string;
  sshKnownHosts: string;
  /** rest: the server's URL, user and password. */
  restUrl: string;
  restUser: string;
  restPassword: string;
  /** s3: endpoint, bucket, path, keys, region. */
  s3Endpoint: string;
  s3Bucket: string;
  s3Path: string;
  s3AccessKey: string;
  s3SecretKey: string;
  s3Region: string;
  /** The repository password (empty on edit: unchanged). */
  password: string;
  flags: string;
}

export function emptyDestinationFields(): DestinationFields {
  return {
    name: '',
    type: 'local',
    hostPath: '',
    environmentId: null,
    sftpTarget: '',
    sshKey: '',
    sshKnownHosts: '',
    restUrl: '',
    restUser: '',
    restPassword: '',
    s3Endpoint: '',
    s3Bucket: '',
    s3Path: '',
    s3AccessKey: '',
    s3SecretKey: '',
    s3Region: '',
    password: '',
    flags: '',
  };
}

/** The dialog's fields of a saved destination (secrets empty: kept unless typed again). */
export function fieldsOf(d: Destination): DestinationFields {
  const f = emptyDestinationFields();
  f.name = d.name;
  f.flags = d.flags ?? '';
  f.environmentId = d.environmentId ?? null;
  f.sshKnownHosts = d.sshKnownHosts ?? '';
  const env = d.envVars ?? {};
  const type = repoTypeOf(d.repository);
  f.type = type;
  if (type === 'local') {
    f.hostPath = d.hostPath || d.repository.replace(/^local:/, '');
  } else if (type === 'sftp') {
    f.sftpTarget = d.repository.slice('sftp:'.length);
  } else if (type === 'rest') {
    f.restUrl = d.repository.slice('rest:'.length);
    f.restUser = env.RESTIC_REST_USERNAME ?? '';
  } else {
    const rest = d.repository.slice('s3:'.length);
    const m = /^(https?:\/\/[^/]+|[^/]+)\/([^/]+)\/?(.*)$/.exec(rest);
    if (m) {
      f.s3Endpoint = m[1];
      f.s3Bucket = m[2];
      f.s3Path = m[3];
    } else {
      f.s3Endpoint = rest;
    }
    f.s3AccessKey = env.AWS_ACCESS_KEY_ID ?? '';
    f.s3Region = env.AWS_DEFAULT_REGION ?? '';
  }
  return f;
}

/** What is wrong with the dialog's fields for its type ('' when nothing). */
export function destinationProblem(f: DestinationFields, creating: boolean): string {
  if (!f.name.trim()) return 'A name is needed.';
  if (creating && !f.password) return 'A repository password is needed: restic encrypts the repository with it.';
  switch (f.type) {
    case 'local':
      if (!f.hostPath.startsWith('/')) return 'The path on the host must be absolute (start with /).';
      if (f.environmentId === null) return 'Choose the environment whose host holds the path.';
      return '';
    case 'sftp':
      if (!/^[^@\s/]+@[^:\s]+:.+$/.test(f.sftpTarget.trim()) && !/^\/\/[^@\s/]+@[^/\s]+\/.+$/.test(f.sftpTarget.trim()))
        return 'SFTP needs user@host:/path.';
      if (creating && !f.sshKey.trim()) return 'SFTP needs the private SSH key that logs in.';
      return '';
    case 'rest':
      if (!/^https?:\/\/[^/\s]+/.test(f.restUrl.trim())) return 'The REST server URL must start with http:// or https://.';
      if (/^https?:\/\/[^/\s]*@/.test(f.restUrl.trim())) return 'Put the user and password in their fields, not in the URL.';
      return '';
    case 's3':
      if (!f.s3Endpoint.trim() || !f.s3Bucket.trim()) return 'S3 needs an endpoint and a bucket.';
      if (creating && (!f.s3AccessKey.trim() || !f.s3SecretKey)) return 'S3 needs an access key and its secret.';
      return '';
  }
  return '';
}

/**
 * Where the fields' repository is, as the server tells hosts apart for its
 * stored secrets: a local one's environment, else the scheme, host and port
 * restic connects to. The stored password and credentials are sent only
 * there: a form moved elsewhere must have them typed again.
 */
export function endpointOf(f: DestinationFields): string {
  const urlEndpoint = (raw: string, scheme: string): string => {
    const t = raw.trim();
    try {
      const u = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(t) ? t : `${scheme}://${t}`);
      const port = u.port || (u.protocol === 'http:' ? '80' : u.protocol === 'https:' ? '443' : '');
      return `${u.protocol}//${u.hostname.toLowerCase()}:${port}`;
    } catch {
      return t.toLowerCase();
    }
  };
  switch (f.type) {
    case 'local':
      return `local:${f.environmentId ?? ''}`;
    case 'sftp': {
      const t = f.sftpTarget.trim();
      const url = /^\/\/[^@\s/]+@([^/\s]+)/.exec(t);
      if (url) {
        const [host, port] = url[1].split(':');
        return `sftp:${host.toLowerCase()}:${port || '22'}`;
      }
      const m = /^[^@\s/]+@([^:\s]+):/.exec(t);
      return `sftp:${(m ? m[1] : t).toLowerCase()}:22`;
    }
    case 'rest':
      return `rest:${urlEndpoint(f.restUrl, 'http')}`;
    case 's3':
      return `s3:${urlEndpoint(f.s3Endpoint, 'https')}`;
  }
  return '';
}

/** Whether an edited form points to another host than the saved destination (see endpointOf). */
export function movedHost(saved: Destination, f: DestinationFields): boolean {
  return endpointOf(fieldsOf(saved)) !== endpointOf(f);
}

/**
 * What the form of a destination moved to another host still lacks: the
 * stored secrets are not sent there, so each one is typed again ('' when
 * complete).
 */
export function movedSecretsProblem(saved: Destination, f: DestinationFields): string {
  const missing: string[] = [];
  if (saved.hasPassword !== false && !f.password) missing.push('the repository password');
  const names = saved.envVarNames ?? Object.keys(saved.envVars ?? {});
  if (f.type === 'sftp' && saved.hasSshKey && !f.sshKey.trim()) missing.push('the private SSH key');
  if (f.type === 'rest' && names.includes('RESTIC_REST_PASSWORD') && !f.restPassword) missing.push('the REST password');
  if (f.type === 's3' && names.includes('AWS_SECRET_ACCESS_KEY') && !f.s3SecretKey) missing.push('the S3 secret key');
  if (missing.length === 0) return '';
  return `The repository is on another host now: enter ${missing.join(', ')} again (stored secrets are sent only to the host they were saved for).`;
}

/** The body of POST/PUT /api/backup/destinations of the dialog's fields. */
export function destinationBody(f: DestinationFields, creating: boolean): Record<string, unknown> {
  const body: Record<string, unknown> = { name: f.name.trim(), flags: f.flags.trim() };
  const env: Record<string, string> = {};
  switch (f.type) {
    case 'local':
      // The repository string of a local repository is its path on the host.
      body.repository = f.hostPath.trim();
      body.environmentId = f.environmentId;
      break;
    case 'sftp':
      body.repository = `sftp:${f.sftpTarget.trim()}`;
      if (f.sshKey.trim()) body.sshKey = f.sshKey.endsWith('\n') ? f.sshKey : `${f.sshKey}\n`;
      body.sshKnownHosts = f.sshKnownHosts.trim();
      break;
    case 'rest':
      body.repository = `rest:${f.restUrl.trim()}`;
      if (f.restUser.trim()) env.RESTIC_REST_USERNAME = f.restUser.trim();
      if (f.restPassword) env.RESTIC_REST_PASSWORD = f.restPassword;
      else if (!creating) env.RESTIC_REST_PASSWORD = SECRET_MASK;
      break;
    case 's3': {
      const endpoint = f.s3Endpoint.trim().replace(/\/+$/, '');
      const p = f.s3Path.trim().replace(/^\/+|\/+$/g, '');
      body.repository = `s3:${endpoint}/${f.s3Bucket.trim()}${p ? `/${p}` : ''}`;
      if (f.s3AccessKey.trim()) env.AWS_ACCESS_KEY_ID = f.s3AccessKey.trim();
      if (f.s3SecretKey) env.AWS_SECRET_ACCESS_KEY = f.s3SecretKey;
      else if (!creating) env.AWS_SECRET_ACCESS_KEY = SECRET_MASK;
      if (f.s3Region.trim()) env.AWS_DEFAULT_REGION = f.s3Region.trim();
      break;
    }
  }
  // The whole set of variables is sent (REST and S3); a secret not typed
  // again goes as the mask, which the server reads as "keep the stored one".
  if (Object.keys(env).length > 0) body.envVars = env;
  if (f.password) body.password = f.password;
  return body;
}

export async function listDestinations(): Promise<Destination[]> {
  const res = await request<unknown>('GET', '/api/backup/destinations');
  return (Array.isArray(res) ? res : []).map((d) => normalizeDestination(d as Record<string, unknown>));
}

export async function getDestination(id: number): Promise<Destination> {
  return normalizeDestination(await request<Record<string, unknown>>('GET', `/api/backup/destinations/${id}`));
}

export async function saveDestination(id: number | null, body: Record<string, unknown>): Promise<Destination> {
  const res = await request<Record<string, unknown>>(id === null ? 'POST' : 'PUT', id === null ? '/api/backup/destinations' : `/api/backup/destinations/${id}`, { body });
  return normalizeDestination(res ?? {});
}

export const deleteDestination = (id: number) => request<unknown>('DELETE', `/api/backup/destinations/${id}`);

/** A test's answer: { success, status, error }. */
export interface TestAnswer {
  success: boolean;
  status?: string;
  error?: string;
  message?: string;
}

export const testDestination = (id: number) => request<TestAnswer>('POST', `/api/backup/destinations/${id}/test`);

/**
 * Tests a repository without saving anything: the settings of a form not
 * saved yet (the body of destinationBody), or a saved destination as saved
 * ({ destinationId }).
 */
export const testRepository = (body: Record<string, unknown>) => request<TestAnswer>('POST', '/api/backup/destinations/test', { body });

/** A test's answer in words: whether it opens, and if not why. */
export function testAnswerWords(a: TestAnswer | null | undefined): { ok: boolean; text: string } {
  if (!a) return { ok: false, text: 'The test gave no answer.' };
  if (a.success) return { ok: true, text: `Connection ok: ${a.message || 'the repository opens'}.` };
  const why = a.error || a.message || '';
  if (a.status === 'needs_init' || (a as { needsInit?: boolean }).needsInit)
    return { ok: true, text: `Reachable, not initialized yet${why ? ` (${why})` : ''}: it is initialized when the destination is added, or with Init.` };
  return { ok: false, text: why || 'The test failed.' };
}
export const initDestination = (id: number) => request<TestAnswer>('POST', `/api/backup/destinations/${id}/init`);

export const maintenanceTasks = ['unlock', 'check', 'prune', 'stats', 'repair-index', 'repair-snapshots'] as const;
export type MaintenanceTask = (typeof maintenanceTasks)[number];

/** The maintenance of the destinations tab: a task, or verify (check reading part of the data). */
export type Maintenance = MaintenanceTask | 'verify';

/** What each maintenance does, in words (the menu and the dialog say it). */
export const maintenanceWords: Record<Maintenance, string> = {
  unlock: 'Unlock: remove stale locks left by an interrupted restic',
  check: 'Check: the repository structure is consistent',
  prune: 'Prune: delete data no snapshot references any more',
  stats: 'Stats: size, files and snapshots',
  'repair-index': 'Repair index: rebuild the index from the pack files',
  'repair-snapshots': 'Repair snapshots: rewrite snapshots that reference missing data',
  verify: 'Verify: check reading part of the stored data',
};

/** Tasks that change the repository: confirmed first. */
export const riskyMaintenance: readonly Maintenance[] = ['prune', 'repair-index', 'repair-snapshots'];

/** Whether a verify's data subset is one restic takes ("5%", "1/10"; empty reads no data). */
export function validDataSubset(v: string): boolean {
  const t = v.trim();
  return t === '' || /^([0-9]{1,3}(\.[0-9]{1,2})?%|[0-9]{1,4}\/[0-9]{1,4})$/.test(t);
}

/**
 * Runs a maintenance task or a verify on a destination, following its
 * progress (restic's lines) to the final result ({success, task, stats?,
 * output, error?}, kept as the state's result).
 */
export function runMaintenance(
  id: number,
  what: Maintenance,
  onState: (s: RunState) => void,
  opts: { dataSubset?: string; signal?: AbortSignal; onJob?: (jobId: string) => void } = {},
): Promise<RunState> {
  if (what === 'verify') return follow('POST', `/api/backup/destinations/${id}/verify`, { dataSubset: opts.dataSubset ?? '5%' }, onState, opts.signal, opts.onJob);
  return follow('POST', `/api/backup/destinations/${id}/task`, { task: what }, onState, opts.signal, opts.onJob);
}

/**
 * Stops a running job (a maintenance task: restic is interrupted and
 * releases its lock); its stream then ends with a result that says
 * cancelled.
 */
export const cancelJob = (jobId: string) => request<{ cancelled: boolean }>('DELETE', `/api/jobs/${encodeURIComponent(jobId)}`);

/** A stats answer's figures (null when it has none). */
export function statsOf(res: Record<string, unknown> | null | undefined): { totalSize: number; totalFileCount: number; snapshotsCount: number } | null {
  const st = res?.stats as Record<string, unknown> | undefined;
  if (!st || typeof st !== 'object') return null;
  return { totalSize: Number(st.totalSize ?? 0), totalFileCount: Number(st.totalFileCount ?? 0), snapshotsCount: Number(st.snapshotsCount ?? 0) };
}

/** A maintenance task's answer as lines to show (its output, its figures, its error). */
export function taskOutput(res: Record<string, unknown> | null | undefined): string {
  if (!res) return '';
  const lines: string[] = [];
  if (res.cancelled === true) lines.push('Stopped.');
  else if (res.success === false) lines.push(`Failed: ${String(res.error ?? res.message ?? 'no reason given')}`);
  for (const k of ['output', 'message', 'log']) {
    const v = res[k];
    if (typeof v === 'string' && v.trim()) lines.push(v.trimEnd());
    else if (Array.isArray(v)) lines.push(v.map(String).join('\n'));
  }
  const stats = (res.stats ?? res) as Record<string, unknown>;
  if (typeof stats.totalSize === 'number') lines.push(`Total size: ${bytes(stats.totalSize)}`);
  if (typeof stats.totalFileCount === 'number') lines.push(`Files: ${stats.totalFileCount}`);
  if (typeof stats.snapshotsCount === 'number') lines.push(`Snapshots: ${stats.snapshotsCount}`);
  if (lines.length === 0 && res.success !== false) lines.push('Done.');
  return lines.join('\n');
}

export const rotateKey = (id: number, currentPassword: string, newPassword: string) =>
  request<{ success: boolean }>('POST', `/api/backup/destinations/${id}/rotate-key`, { body: { currentPassword, newPassword } });

export const backupInstance = () => request<{ instanceId: string }>('GET', '/api/backup/instance');

// ---------------------------------------------------------------- configurations

export interface Retention {
  keepLast?: number;
  keepDaily?: number;
  keepWeekly?: number;
  keepMonthly?: number;
  keepYearly?: number;
}

export interface BackupConfig {
  id: number;
  name: string;
  /** berth: Berth itself (its database, settings, stacks directory; admin only). */
  type: 'container' | 'stack' | 'berth' | string;
  targetName: string;
  environmentId: number;
  destinationId: number;
  enabled: boolean;
  allVolumes: boolean;
  selectedVolumes: string[];
  /** Host paths backed up besides the volumes. */
  paths: string[];
  /** restic --exclude patterns. */
  excludes: string[];
  /** A stack's service (or container) its hooks run in. */
  hookService: string;
  /** The type's options (berth: includeGit), kept whole on save. */
  options: Record<string, unknown>;
  includeStackDir: boolean;
  stopBeforeBackup: boolean;
  schedule: string;
  retention: Retention;
  preHook: string;
  postHook: string;
  lastRun?: { status: string; message?: string; at?: string } | null;
  /** A backup of it is running now (on any replica's schedule or by hand). */
  running: boolean;
}

/** A configuration as the server answered it, under the names the console uses. */
export function normalizeConfig(raw: Record<string, unknown>): BackupConfig {
  const lr = raw.lastRun as Record<string, unknown> | null | undefined;
  let lastRun: BackupConfig['lastRun'] = null;
  if (lr && typeof lr === 'object' && lr.status) lastRun = { status: String(lr.status), message: lr.message as string, at: (lr.at ?? lr.finishedAt ?? lr.startedAt) as string };
  else if (typeof raw.lastRunStatus === 'string' && raw.lastRunStatus)
    lastRun = { status: raw.lastRunStatus, message: raw.lastRunMessage as string, at: raw.lastRunAt as string };
  const vols = (raw.selectedVolumes ?? raw.volumes) as unknown;
  return {
    id: Number(raw.id),
    name: String(raw.name ?? ''),
    type: String(raw.type ?? 'container'),
    // Berth itself has no target of its own: named so in the lists.
    targetName: String(raw.targetName || (raw.type === 'berth' ? 'Berth' : '')),
    environmentId: Number(raw.environmentId ?? 0),
    destinationId: Number(raw.destinationId ?? 0),
    enabled: raw.enabled !== false,
    allVolumes: raw.allVolumes !== false,
    selectedVolumes: Array.isArray(vols) ? vols.map(String) : [],
    paths: Array.isArray(raw.paths) ? raw.paths.map(String) : [],
    excludes: Array.isArray(raw.excludes) ? raw.excludes.map(String) : [],
    hookService: String(raw.hookService ?? raw.hookContainer ?? ''),
    options: raw.options && typeof raw.options === 'object' && !Array.isArray(raw.options) ? (raw.options as Record<string, unknown>) : {},
    includeStackDir: !!raw.includeStackDir,
    stopBeforeBackup: !!(raw.stopBeforeBackup ?? raw.stopDuringBackup),
    schedule: String(raw.schedule ?? ''),
    retention: (raw.retention as Retention) ?? {},
    preHook: String(raw.preHook ?? ''),
    postHook: String(raw.postHook ?? ''),
    lastRun,
    running: raw.running === true,
  };
}

/** A retention policy in words ("last 3, 7 daily, 4 weekly"; none: everything is kept). */
export function retentionWords(r: Retention | null | undefined): string {
  if (!r) return 'keeps every snapshot';
  const parts: string[] = [];
  if (r.keepLast) parts.push(`last ${r.keepLast}`);
  if (r.keepDaily) parts.push(`${r.keepDaily} daily`);
  if (r.keepWeekly) parts.push(`${r.keepWeekly} weekly`);
  if (r.keepMonthly) parts.push(`${r.keepMonthly} monthly`);
  if (r.keepYearly) parts.push(`${r.keepYearly} yearly`);
  return parts.length ? `keeps ${parts.join(', ')}` : 'keeps every snapshot';
}

/** A configuration's schedule in words (none: manual runs only; disabled says so). */
export function scheduleWords(c: Pick<BackupConfig, 'schedule' | 'enabled'>): string {
  if (!c.schedule.trim()) return 'manual only';
  const words = describeCron(c.schedule);
  return c.enabled ? words : `${words} (disabled)`;
}

/** The fields of the configuration dialog. */
export type ConfigType = 'container' | 'stack' | 'berth';

export interface ConfigFields {
  type: ConfigType;
  targetName: string;
  environmentId: number | null;
  destinationId: number | null;
  enabled: boolean;
  allVolumes: boolean;
  /** Volume names, one a line or comma-separated, when not all. */
  volumes: string;
  /** Extra host paths, one a line. */
  paths: string;
  /** Exclude patterns, one a line. */
  excludes: string;
  includeStackDir: boolean;
  stopBeforeBackup: boolean;
  schedule: string;
  keepLast: string;
  keepDaily: string;
  keepWeekly: string;
  keepMonthly: string;
  preHook: string;
  postHook: string;
  /** A stack's service the hooks run in. */
  hookService: string;
  /** berth: also back up the git checkouts of stacks. */
  includeGit: boolean;
  /** The saved options, sent back with includeGit set. */
  options: Record<string, unknown>;
}

export function configFieldsOf(c: BackupConfig | null, preset: Partial<ConfigFields> = {}): ConfigFields {
  const n = (v: number | undefined) => (v ? String(v) : '');
  if (!c)
    return {
      type: 'container',
      targetName: '',
      environmentId: null,
      destinationId: null,
      enabled: true,
      allVolumes: true,
      volumes: '',
      paths: '',
      excludes: '',
      includeStackDir: true,
      stopBeforeBackup: false,
      schedule: '',
      keepLast: '',
      keepDaily: '7',
      keepWeekly: '4',
      keepMonthly: '',
      preHook: '',
      postHook: '',
      hookService: '',
      includeGit: false,
      options: {},
      ...preset,
    };
  return {
    type: c.type === 'stack' || c.type === 'berth' ? c.type : 'container',
    targetName: c.targetName,
    environmentId: c.environmentId,
    destinationId: c.destinationId,
    enabled: c.enabled,
    allVolumes: c.allVolumes,
    volumes: c.selectedVolumes.join('\n'),
    paths: c.paths.join('\n'),
    excludes: c.excludes.join('\n'),
    includeStackDir: c.includeStackDir,
    stopBeforeBackup: c.stopBeforeBackup,
    schedule: c.schedule,
    keepLast: n(c.retention.keepLast),
    keepDaily: n(c.retention.keepDaily),
    keepWeekly: n(c.retention.keepWeekly),
    keepMonthly: n(c.retention.keepMonthly),
    preHook: c.preHook,
    postHook: c.postHook,
    hookService: c.hookService,
    includeGit: c.options.includeGit === true,
    options: c.options,
  };
}

function keep(v: string): number | null {
  const t = v.trim();
  if (!t) return 0;
  return /^\d+$/.test(t) ? Number(t) : null;
}

/** What is wrong with the configuration dialog's fields ('' when nothing). */
export function configProblem(f: ConfigFields): string {
  const berth = f.type === 'berth';
  if (!berth && !f.targetName.trim()) return `Name the ${f.type} to back up.`;
  if (f.environmentId === null) return 'Choose the environment.';
  if (f.destinationId === null) return 'Choose a destination (add one under Destinations first).';
  if (!berth) {
    const paths = lines(f.paths);
    if (!f.allVolumes && splitList(f.volumes).length === 0 && paths.length === 0 && !(f.type === 'stack' && f.includeStackDir))
      return 'Name at least one volume or path, or back up all the volumes.';
    const bad = paths.find((p) => !validHostPath(p));
    if (bad !== undefined) return `Extra path "${bad}" must be an absolute, clean host path other than / (one a line).`;
    if (f.type === 'stack' && (f.preHook.trim() || f.postHook.trim()) && !f.hookService.trim())
      return "A stack's hooks need the service whose container runs them.";
  }
  for (const [label, v] of [
    ['Keep last', f.keepLast],
    ['Keep daily', f.keepDaily],
    ['Keep weekly', f.keepWeekly],
    ['Keep monthly', f.keepMonthly],
  ] as const)
    if (keep(v) === null) return `${label} must be a whole number (empty: no such rule).`;
  if (f.schedule.trim() && f.schedule.trim().split(/\s+/).length !== 5) return 'The schedule is a cron expression of five fields (minute hour day month weekday).';
  return '';
}

/** The non-empty lines of a text (patterns and paths may hold commas). */
export function lines(s: string): string[] {
  return s
    .split('\n')
    .map((x) => x.trim())
    .filter(Boolean);
}

/** An absolute, clean host path other than / (what the server takes as an extra path). */
export function validHostPath(p: string): boolean {
  if (!p.startsWith('/') || p === '/' || p.endsWith('/')) return false;
  return !p
    .slice(1)
    .split('/')
    .some((seg) => seg === '' || seg === '.' || seg === '..');
}

export function splitList(s: string): string[] {
  return s
    .split(/[\n,]/)
    .map((x) => x.trim())
    .filter(Boolean);
}

/** The body of POST/PUT /api/backup/configs (the reference's names, Berth's extras). */
export function configBody(f: ConfigFields): Record<string, unknown> {
  const retention: Retention = {};
  const put = (k: keyof Retention, v: string) => {
    const n = keep(v);
    if (n) retention[k] = n;
  };
  put('keepLast', f.keepLast);
  put('keepDaily', f.keepDaily);
  put('keepWeekly', f.keepWeekly);
  put('keepMonthly', f.keepMonthly);
  if (f.type === 'berth')
    // Berth itself: no target, volumes, paths, stop or hooks (the server refuses them).
    return {
      type: 'berth',
      environmentId: f.environmentId,
      destinationId: f.destinationId,
      enabled: f.enabled,
      schedule: f.schedule.trim(),
      retention,
      options: { ...f.options, includeGit: f.includeGit },
    };
  return {
    type: f.type,
    targetName: f.targetName.trim(),
    environmentId: f.environmentId,
    destinationId: f.destinationId,
    enabled: f.enabled,
    allVolumes: f.allVolumes,
    selectedVolumes: f.allVolumes ? [] : splitList(f.volumes),
    paths: lines(f.paths),
    excludes: lines(f.excludes),
    includeStackDir: f.type === 'stack' ? f.includeStackDir : false,
    stopBeforeBackup: f.stopBeforeBackup,
    schedule: f.schedule.trim(),
    retention,
    preHook: f.preHook.trim(),
    postHook: f.postHook.trim(),
    hookService: f.type === 'stack' ? f.hookService.trim() : '',
  };
}

export async function listConfigs(filter: { type?: string; target?: string; env?: number } = {}): Promise<BackupConfig[]> {
  const res = await request<unknown>('GET', '/api/backup/configs', { query: filter });
  return (Array.isArray(res) ? res : []).map((c) => normalizeConfig(c as Record<string, unknown>));
}

export async function saveConfig(id: number | null, body: Record<string, unknown>): Promise<BackupConfig> {
  const res = await request<Record<string, unknown>>(id === null ? 'POST' : 'PUT', id === null ? '/api/backup/configs' : `/api/backup/configs/${id}`, { body });
  return normalizeConfig(res ?? {});
}

export const deleteConfig = (id: number) => request<unknown>('DELETE', `/api/backup/configs/${id}`);
export const stopConfig = (id: number) => request<{ success: boolean; stopped?: boolean }>('POST', `/api/backup/configs/${id}/stop`);

/** Where a stack's directory is captured from (GET /api/backup/stack-path). */
export interface StackPath {
  kind: 'candidate' | 'tar' | 'unknown' | string;
  hostPath?: string;
  composeFile?: string;
  reason?: string;
}

export const stackPath = (target: string, env: number) => request<StackPath>('GET', '/api/backup/stack-path', { query: { target, env } });

/** A stack-path answer in words for the configuration dialog. */
export function stackPathWords(p: StackPath | null | undefined): string {
  if (!p) return '';
  if (p.kind === 'candidate' && p.hostPath) return `The stack's directory is read from ${p.hostPath} on the environment's host.`;
  if (p.kind === 'tar') return `${p.reason || "The stack's directory is not on this environment's host"}: its files${p.composeFile ? ` (${p.composeFile})` : ''} are backed up from Berth's copy.`;
  return p.reason ? `The stack's directory cannot be backed up: ${p.reason}.` : "Where the stack's directory is could not be told.";
}

// ---------------------------------------------------------------- runs and restores (SSE)

/** What a run or restore's stream said so far. */
export interface RunState {
  running: boolean;
  /** 0..1 when restic reported it. */
  percent: number | null;
  filesDone?: number;
  totalFiles?: number;
  bytesDone?: number;
  totalBytes?: number;
  currentFile?: string;
  lines: string[];
  /** The final status: success, warning, skipped, error or stopped. */
  status: string | null;
  error: string | null;
  snapshotId?: string;
  /** The final event's data (a maintenance task's {success, stats, output…}). */
  result?: Record<string, unknown>;
}

export function newRunState(): RunState {
  return { running: true, percent: null, lines: [], status: null, error: null };
}

/**
 * The state after one event of a backup's or restore's stream: restic's
 * progress (percentDone…), lines of output, and the final result (its
 * status and error). Unknown events are kept as lines when they carry a
 * message.
 */
export function applyRunEvent(s: RunState, e: SSEvent): RunState {
  const d = dataOf<Record<string, unknown>>(e);
  const next: RunState = { ...s, lines: s.lines };
  const line = (t: string) => (next.lines = [...next.lines, t].slice(-200));
  if (!d || typeof d !== 'object') {
    if (e.data.trim()) line(e.data.trim());
    return next;
  }
  // Berth's progress events are {phase, message?, progress?: restic's status line}.
  const p = (d.progress && typeof d.progress === 'object' ? d.progress : d) as Record<string, unknown>;
  const pct = (p.percentDone ?? p.percent) as number | undefined;
  if (typeof pct === 'number') next.percent = pct > 1 ? pct / 100 : pct;
  if (typeof p.filesDone === 'number') next.filesDone = p.filesDone;
  if (typeof p.totalFiles === 'number') next.totalFiles = p.totalFiles;
  if (typeof p.bytesDone === 'number') next.bytesDone = p.bytesDone;
  if (typeof p.totalBytes === 'number') next.totalBytes = p.totalBytes;
  if (typeof p.currentFile === 'string') next.currentFile = p.currentFile;
  const final = e.event === 'result' || e.event === 'done' || e.event === 'error';
  const msg = (d.message ?? (p !== d ? p.message : undefined) ?? d.line) as string | undefined;
  if (!final && typeof msg === 'string' && msg.trim()) line(typeof d.phase === 'string' && d.phase ? `${d.phase}: ${msg.trim()}` : msg.trim());
  else if (final && typeof msg === 'string' && msg.trim() && d.status !== 'error' && d.status !== 'failed') line(msg.trim());
  if (final) {
    next.running = false;
    next.result = d;
    // A stopped maintenance task's result says cancelled (not a failure).
    let status = typeof d.status === 'string' ? d.status : d.cancelled === true ? 'stopped' : d.success === false || e.event === 'error' ? 'error' : 'success';
    if (status === 'complete') status = 'success';
    if (status === 'failed') status = 'error';
    next.status = status;
    const err = (d.error ?? (status === 'error' ? d.message : undefined)) as string | undefined;
    next.error = status === 'error' || status === 'warning' ? err || (status === 'error' ? 'Failed.' : null) : null;
    const snap = (d.snapshotId ?? (d.summary as Record<string, unknown> | undefined)?.snapshotId) as string | undefined;
    if (snap) next.snapshotId = snap;
    if (status === 'success' || status === 'warning') next.percent = 1;
  }
  return next;
}

/** Runs a configuration now, calling onState with each step until the stream ends. */
export async function runConfig(id: number, onState: (s: RunState) => void, signal?: AbortSignal): Promise<RunState> {
  return follow('POST', `/api/backup/configs/${id}/run`, undefined, onState, signal);
}

async function follow(method: string, path: string, body: unknown, onState: (s: RunState) => void, signal?: AbortSignal, onJob?: (jobId: string) => void): Promise<RunState> {
  let s = newRunState();
  onState(s);
  await stream(method, path, (e) => {
    s = applyRunEvent(s, e);
    onState(s);
  }, { body, signal, onOpen: (res) => onJob?.(res.headers.get('X-Job-Id') ?? '') });
  if (s.running) {
    s = { ...s, running: false, status: s.status ?? 'error', error: s.error ?? 'The stream ended without a result.' };
    onState(s);
  }
  return s;
}

// ---------------------------------------------------------------- snapshots

export interface Snapshot {
  id: string;
  shortId: string;
  time: string;
  hostname: string;
  paths: string[];
  tags: string[];
  destinationId?: number;
  configId?: number;
  /** The server's word: made by this install (its berth:instance tag). */
  own?: boolean;
}

/** The snapshots of an answer that is a list, or { snapshots: [...] }. */
export function snapshotsOf(res: unknown): Snapshot[] {
  const list = Array.isArray(res) ? res : res && typeof res === 'object' && Array.isArray((res as { snapshots?: unknown }).snapshots) ? (res as { snapshots: unknown[] }).snapshots : [];
  return (list as Record<string, unknown>[])
    .map((r) => ({
      id: String(r.id ?? ''),
      shortId: String(r.shortId ?? r.short_id ?? String(r.id ?? '').slice(0, 8)),
      time: String(r.time ?? ''),
      hostname: String(r.hostname ?? r.host ?? ''),
      paths: Array.isArray(r.paths) ? r.paths.map(String) : [],
      tags: Array.isArray(r.tags) ? r.tags.map(String) : [],
      destinationId: r.destinationId === undefined ? undefined : Number(r.destinationId),
      configId: r.configId === undefined || r.configId === null ? undefined : Number(r.configId),
      own: typeof r.own === 'boolean' ? r.own : undefined,
    }))
    .sort((a, b) => b.time.localeCompare(a.time));
}

/** Whether a snapshot was made by this install (its host or berth:instance tag is the instance id). */
export function isOwn(s: Snapshot, instanceId: string | null | undefined): boolean {
  if (typeof s.own === 'boolean') return s.own;
  if (!instanceId) return false;
  return s.hostname === instanceId || s.tags.includes(`berth:instance=${instanceId}`);
}

/** The configuration id of a snapshot's berth:config tag. */
export function configOfSnapshot(s: Snapshot): number | null {
  if (s.configId) return s.configId;
  const t = s.tags.find((x) => x.startsWith('berth:config='));
  const n = t ? Number(t.slice('berth:config='.length)) : NaN;
  return Number.isInteger(n) && n > 0 ? n : null;
}

/** The environment a snapshot was made on, by its berth:env tag (null: none). */
export function envOfSnapshot(s: Snapshot): number | null {
  const t = s.tags.find((x) => x.startsWith('berth:env='));
  const n = t ? Number(t.slice('berth:env='.length)) : NaN;
  return Number.isInteger(n) && n > 0 ? n : null;
}

export async function listSnapshots(q: { configId?: number; destinationId?: number }): Promise<Snapshot[]> {
  return snapshotsOf(await request<unknown>('GET', '/api/backup/snapshots', { query: q }));
}

export interface SnapshotEntry {
  name: string;
  type: string;
  path: string;
  size: number;
  mtime?: string;
}

/** The entries of a browse answer, directories first. */
export function entriesOf(res: unknown): SnapshotEntry[] {
  const list = Array.isArray(res) ? res : res && typeof res === 'object' && Array.isArray((res as { entries?: unknown }).entries) ? (res as { entries: unknown[] }).entries : [];
  return (list as Record<string, unknown>[])
    .map((r) => ({ name: String(r.name ?? ''), type: String(r.type ?? 'file'), path: String(r.path ?? ''), size: Number(r.size ?? 0), mtime: r.mtime as string | undefined }))
    .sort((a, b) => Number(b.type === 'dir') - Number(a.type === 'dir') || a.name.localeCompare(b.name));
}

export async function browseSnapshot(id: string, destinationId: number, path: string): Promise<SnapshotEntry[]> {
  return entriesOf(await request<unknown>('GET', `/api/backup/snapshots/${seg(id)}/browse`, { query: { destinationId, path } }));
}

/** The address that downloads a file (or a directory as a tar) of a snapshot. */
export function dumpUrl(id: string, destinationId: number, path: string, dir = false): string {
  return buildUrl(`/api/backup/snapshots/${seg(id)}/dump`, { destinationId, path, type: dir ? 'dir' : undefined, download: 'true' });
}

/** The parent of a path inside a snapshot ("/" at the top). */
export function parentOf(p: string): string {
  const t = p.replace(/\/+$/, '');
  const i = t.lastIndexOf('/');
  return i <= 0 ? '/' : t.slice(0, i);
}

export interface SnapshotDiff {
  added: string[];
  removed: string[];
  modified: string[];
}

export function diffOf(res: unknown): SnapshotDiff {
  const o = (res && typeof res === 'object' ? res : {}) as Record<string, unknown>;
  const list = (v: unknown) => (Array.isArray(v) ? v.map((x) => (typeof x === 'string' ? x : String((x as { path?: string }).path ?? ''))) : []);
  return { added: list(o.added), removed: list(o.removed), modified: list(o.modified ?? o.changed) };
}

export async function diffSnapshots(destinationId: number, snapshotA: string, snapshotB: string): Promise<SnapshotDiff> {
  return diffOf(await request<unknown>('GET', '/api/backup/snapshots/diff', { query: { destinationId, snapshotA, snapshotB } }));
}

export const forgetSnapshot = (id: string, destinationId: number) =>
  request<unknown>('DELETE', `/api/backup/snapshots/${seg(id)}`, { query: { destinationId } });

// ---------------------------------------------------------------- restore

export interface RestoreRequest {
  destinationId: number;
  snapshotId: string;
  mode: 'in-place' | 'new-location';
  targetType?: string;
  targetName?: string;
  environmentId?: number;
  confirmOverwrite?: boolean;
  /** Only these snapshot volumes (absent: all of them). */
  volumes?: string[];
  /** New location: the volume each snapshot volume is written to (default: renamed after the new name). */
  volumeDestinations?: { source: string; target: string }[];
  /** New location: where the snapshot's host paths go. */
  targetPath?: string;
}

/** The volume a restore to a new name writes a snapshot volume to by default (the server's rule). */
export function renamedVolume(volume: string, origType: string | undefined, origName: string | undefined, name: string): string {
  if (origType === 'stack' && origName && volume.startsWith(`${origName}_`)) return `${name}_${volume.slice(origName.length + 1)}`;
  return `${name}_${volume}`;
}

/** One thing a restore writes: what of the snapshot, where, and whether it exists now. */
export interface PreviewTarget {
  what: string;
  /** The target now ('' when the server did not resolve it). */
  where: string;
  exists: boolean;
  /** volume or path. */
  note?: string;
  /** The names at its top level, and the files among them. */
  entries?: string[];
  files?: number;
}

export interface RestorePreview {
  targets: PreviewTarget[];
  volumes: string[];
  paths: string[];
  /** The container or stack the snapshot is of (its configuration's), when known. */
  targetType?: string;
  targetName?: string;
  /** The snapshot's files and bytes (0: not known). */
  files: number;
  size: number;
  raw: unknown;
}

/** A preview answer, whatever its exact names, as the rows the dialog shows. */
export function previewOf(res: unknown): RestorePreview {
  const o = (res && typeof res === 'object' ? res : {}) as Record<string, unknown>;
  const names = (v: unknown) => (Array.isArray(v) ? v.map((x) => (typeof x === 'string' ? x : String((x as Record<string, unknown>).name ?? (x as Record<string, unknown>).path ?? ''))) : []);
  // Berth answers items [{kind: volume|path, source, target?, exists?, entries, files, size}].
  const items = (Array.isArray(o.items) ? o.items : Array.isArray(o.targets) ? o.targets : []) as Record<string, unknown>[];
  const targets: PreviewTarget[] = items.map((t) => ({
    what: String(t.source ?? t.from ?? t.snapshotPath ?? t.volume ?? t.name ?? ''),
    where: String(t.target ?? t.to ?? t.destination ?? t.hostPath ?? ''),
    exists: !!(t.exists ?? t.overwrites),
    note: (t.kind ?? t.note ?? t.type) as string | undefined,
    entries: Array.isArray(t.entries) ? t.entries.map(String) : undefined,
    files: typeof t.files === 'number' ? t.files : undefined,
  }));
  const byKind = (k: string) => targets.filter((t) => t.note === k).map((t) => t.what);
  return {
    targets,
    volumes: Array.isArray(o.items) ? byKind('volume') : names(o.volumes),
    paths: Array.isArray(o.items) ? byKind('path') : names(o.paths ?? o.stackFiles),
    targetType: (o.targetType as string) || undefined,
    targetName: (o.targetName as string) || undefined,
    files: Number(o.files ?? 0),
    size: Number(o.size ?? 0),
    raw: res,
  };
}

export async function previewRestore(destinationId: number, snapshotId: string, targetEnvId?: number): Promise<RestorePreview> {
  return previewOf(await request<unknown>('POST', '/api/backup/restore/preview', { body: { destinationId, snapshotId, includeTargets: true, targetEnvId } }));
}

export function restore(req: RestoreRequest, onState: (s: RunState) => void, signal?: AbortSignal): Promise<RunState> {
  return follow('POST', '/api/backup/restore', req, onState, signal);
}

export const stopRestore = (snapshotId: string, environmentId?: number) =>
  request<{ success: boolean; stopped?: boolean }>('POST', '/api/backup/restore/stop', { body: { snapshotId, environmentId } });

/** Whether a new name for a restore is one Docker accepts for a volume, container or stack. */
export function validRestoreName(name: string): boolean {
  return /^[a-zA-Z0-9][a-zA-Z0-9_.-]*$/.test(name);
}

function bytes(n: number): string {
  const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  let v = n;
  while (v >= 1024 && i < u.length - 1) {
    v /= 1024;
    i++;
  }
  return `${i === 0 ? v : v.toFixed(1)} ${u[i]}`;
}
