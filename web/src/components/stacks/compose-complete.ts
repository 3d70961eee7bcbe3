// Completion of compose keys in the stack editor (@codemirror/autocomplete):
// where the cursor is on a mapping key, the keys the compose specification
// allows at that place — the top level, a service, and the common nested
// blocks (healthcheck, deploy, logging, build, …), a network and a volume.
// Pure: the path is found from indentation alone, so a half-written, invalid
// file still completes.
import type { Completion, CompletionContext, CompletionResult } from '@codemirror/autocomplete';

const TOP = ['services', 'networks', 'volumes', 'configs', 'secrets', 'name', 'include', 'x-'];

const SERVICE = [
  'image', 'build', 'command', 'entrypoint', 'environment', 'env_file', 'ports', 'expose', 'volumes', 'networks',
  'depends_on', 'restart', 'healthcheck', 'deploy', 'logging', 'labels', 'container_name', 'hostname', 'user',
  'working_dir', 'cap_add', 'cap_drop', 'privileged', 'devices', 'dns', 'extra_hosts', 'secrets', 'configs',
  'profiles', 'pull_policy', 'stop_grace_period', 'stop_signal', 'tmpfs', 'ulimits', 'network_mode', 'pid', 'ipc',
  'init', 'read_only', 'shm_size', 'stdin_open', 'tty', 'mem_limit', 'cpus', 'security_opt', 'sysctls', 'platform',
  'extends', 'links', 'external_links', 'domainname', 'mac_address', 'runtime', 'userns_mode',
];

const NESTED: Record<string, string[]> = {
  healthcheck: ['test', 'interval', 'timeout', 'retries', 'start_period', 'start_interval', 'disable'],
  deploy: ['replicas', 'resources', 'restart_policy', 'labels', 'mode', 'placement', 'update_config', 'rollback_config', 'endpoint_mode'],
  'deploy.resources': ['limits', 'reservations'],
  'deploy.resources.limits': ['cpus', 'memory', 'pids'],
  'deploy.resources.reservations': ['cpus', 'memory', 'devices'],
  'deploy.restart_policy': ['condition', 'delay', 'max_attempts', 'window'],
  'deploy.update_config': ['parallelism', 'delay', 'failure_action', 'monitor', 'max_failure_ratio', 'order'],
  'deploy.placement': ['constraints', 'preferences', 'max_replicas_per_node'],
  logging: ['driver', 'options'],
  'logging.options': ['max-size', 'max-file', 'tag', 'mode'],
  build: ['context', 'dockerfile', 'args', 'target', 'labels', 'cache_from', 'network', 'shm_size', 'ssh', 'secrets', 'platforms'],
  ulimits: ['nofile', 'nproc', 'memlock'],
};

const NETWORK = ['driver', 'driver_opts', 'external', 'name', 'internal', 'attachable', 'ipam', 'labels', 'enable_ipv6'];
const VOLUME = ['driver', 'driver_opts', 'external', 'name', 'labels'];
const CONFIG_SECRET = ['file', 'external', 'name', 'environment', 'content'];

/** The mapping keys enclosing line `lineNo` (0-based) whose text starts at column `indent`. */
export function composePath(lines: string[], lineNo: number, indent: number): string[] | null {
  const path: string[] = [];
  let want = indent;
  for (let i = lineNo - 1; i >= 0 && want > 0; i--) {
    const text = lines[i];
    const t = text.trim();
    if (t === '' || t.startsWith('#')) continue;
    const ind = text.length - text.trimStart().length;
    if (ind >= want) continue;
    if (t.startsWith('-')) return null; // inside a list item: not a place this completes
    const m = /^([^\s:#][^:#]*?)\s*:(\s|$)/.exec(t);
    if (!m) return null;
    path.unshift(m[1].replace(/^["']|["']$/g, ''));
    want = ind;
  }
  return path;
}

/** The keys allowed at a path of mapping keys (none when it is not a known place). */
export function keysAt(path: string[]): string[] {
  if (path.length === 0) return TOP;
  const [top, , ...rest] = path;
  if (path.length === 1) return [];
  if (top === 'services') {
    if (rest.length === 0) return SERVICE;
    return NESTED[rest.join('.')] ?? [];
  }
  if (rest.length > 0) return [];
  if (top === 'networks') return NETWORK;
  if (top === 'volumes') return VOLUME;
  if (top === 'configs' || top === 'secrets') return CONFIG_SECRET;
  return [];
}

/** Keys whose value is a block (the completion writes "key:" and a new indented line). */
const BLOCKS = new Set(['services', 'networks', 'volumes', 'configs', 'secrets', 'healthcheck', 'deploy', 'logging',
  'resources', 'limits', 'reservations', 'restart_policy', 'update_config', 'placement', 'options', 'labels',
  'environment', 'build', 'ulimits', 'driver_opts', 'ipam', 'args']);

/** The completion source of the compose editor. */
export function composeCompletions(ctx: CompletionContext): CompletionResult | null {
  const line = ctx.state.doc.lineAt(ctx.pos);
  const before = line.text.slice(0, ctx.pos - line.from);
  const m = /^(\s*)([A-Za-z_][\w.-]*)?$/.exec(before);
  if (!m) return null;
  const word = m[2] ?? '';
  if (!word && !ctx.explicit) return null;
  const lines = ctx.state.doc.toString().split('\n');
  const path = composePath(lines, line.number - 1, m[1].length);
  if (!path) return null;
  const keys = keysAt(path);
  if (!keys.length) return null;
  // A key already written in the same mapping is not offered again.
  const siblings = new Set<string>();
  for (let i = line.number - 2; i >= 0; i--) {
    const ind = lines[i].length - lines[i].trimStart().length;
    if (lines[i].trim() === '' || ind > m[1].length) continue;
    if (ind < m[1].length) break;
    const k = /^([^\s:#][^:#]*?)\s*:/.exec(lines[i].trim());
    if (k) siblings.add(k[1]);
  }
  for (let i = line.number; i < lines.length; i++) {
    const ind = lines[i].length - lines[i].trimStart().length;
    if (lines[i].trim() === '' || ind > m[1].length) continue;
    if (ind < m[1].length) break;
    const k = /^([^\s:#][^:#]*?)\s*:/.exec(lines[i].trim());
    if (k) siblings.add(k[1]);
  }
  const options: Completion[] = keys
    .filter((k) => !siblings.has(k))
    .map((k) => ({
      label: k,
      type: 'property',
      apply: k.endsWith('-') ? k : BLOCKS.has(k) ? `${k}:\n${m[1]}  ` : `${k}: `,
    }));
  return { from: ctx.pos - word.length, options, validFor: /^[\w.-]*$/ };
}
