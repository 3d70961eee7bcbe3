// App templates (Portainer-format lists from sources plus Berth's built-in
// ones), their sources, config sets and environment labels.
import { runStreamed, type DeployResult, type OnLine } from './api-stacks';
import type { CreateForm } from '../components/containers/create-form';

/** 1 container, 2 swarm stack, 3 compose stack. */
export type TemplateType = 1 | 2 | 3;

export interface TemplateOption {
  text: string;
  value: string;
  default?: boolean;
}

export interface TemplateEnvField {
  name: string;
  label?: string;
  description?: string;
  default?: string;
  preset?: boolean;
  select?: TemplateOption[];
}

export interface AppTemplate {
  id: string;
  sourceId: string;
  sourceName: string;
  type: TemplateType;
  title: string;
  description: string;
  categories: string[];
  platform?: string;
  logo?: string;
  /** Where Berth serves the logo (absent: Berth has none; the console shows a placeholder). */
  logoUrl?: string;
  /** Berth is fetching the logo now: the list, read again shortly, may have its logoUrl. */
  logoPending?: boolean;
  image?: string;
  name?: string;
  env: TemplateEnvField[];
  ports: string[];
  note?: string;
  repository?: { url: string; stackfile: string };
  compose?: string;
  administratorOnly: boolean;
}

export interface TemplateSource {
  id: number;
  name: string;
  url: string;
  enabled: boolean;
  lastError: string | null;
  lastFetchedAt: string | null;
  templateCount: number;
}

export interface DeployTemplateBody {
  templateId: string;
  stackName: string;
  environmentId: number;
  env: Record<string, string>;
}

/** Renders a template into a stack and deploys it, streaming compose's output. */
export function deployTemplate(body: DeployTemplateBody, onLine: OnLine, signal?: AbortSignal): Promise<DeployResult> {
  return runStreamed('POST', '/api/templates/deploy', { query: { env: body.environmentId }, body, signal }, onLine);
}

/** The initial value of a template variable: its select's default option, else its default. */
export function initialValue(f: TemplateEnvField): string {
  return f.select?.find((o) => o.default)?.value ?? f.default ?? f.select?.[0]?.value ?? '';
}

/** Every category of the templates, sorted, without duplicates (case-insensitive). */
export function categoriesOf(list: AppTemplate[]): string[] {
  const seen = new Map<string, string>();
  for (const t of list) for (const c of t.categories) if (!seen.has(c.toLowerCase())) seen.set(c.toLowerCase(), c);
  return [...seen.values()].sort((a, b) => a.localeCompare(b));
}

export interface ConfigSetVar {
  key: string;
  value: string;
  isSecret: boolean;
}

export interface ConfigSetPort {
  containerPort: string;
  hostPort?: string;
  hostIp?: string;
  protocol?: string;
}

export interface ConfigSetLabel {
  key: string;
  value: string;
}

/** A volume of a config set: a host path or a volume name, mounted at containerPath with mode (rw, ro, …). */
export interface ConfigSetVolume {
  hostPath: string;
  containerPath: string;
  mode: string;
}

export interface ConfigSet {
  id: number;
  name: string;
  description: string;
  envVars: ConfigSetVar[];
  labels: ConfigSetLabel[];
  ports: ConfigSetPort[];
  volumes: ConfigSetVolume[];
  networkMode: string;
  restartPolicy: string;
  createdAt?: string;
  updatedAt?: string;
}

/**
 * What the server answers in place of a secret variable's value; sent back
 * unchanged in an update, it keeps the stored value.
 */
export const SECRET_MASK = '***';

/** The body of POST and PUT /api/config-sets. */
export type ConfigSetBody = Omit<ConfigSet, 'id' | 'createdAt' | 'updatedAt'>;

/** An environment label: the environments carrying it, its colour, and its id when it is defined (null: only carried). */
export interface LabelUse {
  label: string;
  environments: { envId: number; envName: string }[];
  count: number;
  color: string | null;
  id: number | null;
}

/**
 * Adds a config set to the container create form: variables, labels, ports
 * and volumes the form does not have yet are appended; the network and the
 * restart policy are taken when the form still has its defaults. Secret
 * variables come back masked, so they are not copied: their names are
 * returned for the user to fill in.
 */
export function applyConfigSet(form: CreateForm, set: ConfigSet): { form: CreateForm; skippedSecrets: string[] } {
  const skippedSecrets: string[] = [];
  const env = [...form.env];
  for (const v of set.envVars) {
    if (v.isSecret) {
      skippedSecrets.push(v.key);
      if (!env.some((r) => r.key === v.key)) env.push({ key: v.key, value: '' });
      continue;
    }
    if (!env.some((r) => r.key === v.key)) env.push({ key: v.key, value: v.value });
  }
  const labels = [...form.labels];
  for (const { key, value } of set.labels ?? []) {
    if (!labels.some((r) => r.key === key)) labels.push({ key, value });
  }
  const ports = [...form.ports];
  for (const p of set.ports) {
    const protocol = p.protocol === 'udp' ? 'udp' : 'tcp';
    if (!ports.some((r) => r.container === p.containerPort && r.protocol === protocol)) {
      ports.push({ host: p.hostPort ?? '', container: p.containerPort, protocol });
    }
  }
  const volumes = [...form.volumes];
  for (const v of set.volumes ?? []) {
    const target = v.containerPath;
    if (!target || volumes.some((r) => r.target === target)) continue;
    volumes.push({ source: v.hostPath, target, readOnly: v.mode.split(',').includes('ro') });
  }
  const restart = ['no', 'always', 'unless-stopped', 'on-failure'].includes(set.restartPolicy)
    ? (set.restartPolicy as CreateForm['restartPolicy'])
    : null;
  return {
    form: {
      ...form,
      env,
      labels,
      ports,
      volumes,
      network: form.network || set.networkMode || '',
      restartPolicy: form.restartPolicy === 'no' && restart ? restart : form.restartPolicy,
    },
    skippedSecrets,
  };
}
