// Git API (COMPAT.md "Git"): credentials (secrets write-only), repositories,
// git stacks with their deploy/sync jobs and webhooks.
import { request } from './api';
import { runStreamed, type DeployResult, type OnLine, type StackVariable } from './api-stacks';
import { dataOf, followJob } from './sse';

export type AuthType = 'none' | 'password' | 'ssh';

export interface GitCredential {
  id: number;
  name: string;
  authType: AuthType | string;
  username: string;
  hasPassword: boolean;
  hasSshKey: boolean;
  createdAt?: string;
  updatedAt?: string;
}

/**
 * A credential as sent. On update, an absent password or sshPrivateKey keeps
 * the stored secret, "" clears it, any other value replaces it.
 */
export interface GitCredentialBody {
  name: string;
  authType: AuthType;
  username?: string;
  password?: string;
  sshPrivateKey?: string;
}

export interface GitRepository {
  id: number;
  name: string;
  url: string;
  branch: string;
  credentialId: number | null;
  webhookEnabled: boolean;
  hasWebhookSecret: boolean;
  webhookPath: string;
  lastSync: string | null;
  /** The last fetch of the branch: never, success or failed (as GET …/sync tells it). */
  syncStatus?: 'never' | 'success' | 'failed' | string;
  syncCommit?: string;
  syncError?: string;
  syncedAt?: string | null;
  createdAt?: string;
  updatedAt?: string;
}

/** A repository as sent; webhookSecret follows the credential secrets' rule. */
export interface GitRepositoryBody {
  name: string;
  url: string;
  branch?: string;
  credentialId?: number | null;
  webhookEnabled?: boolean;
  webhookSecret?: string;
}

export interface GitStack {
  id: number;
  stackName: string;
  environmentId: number;
  repositoryId: number;
  composePath: string;
  envFilePath: string;
  autoUpdate: boolean;
  autoUpdateCron: string;
  webhookEnabled: boolean;
  hasWebhookSecret: boolean;
  webhookPath: string;
  lastCommit: string;
  lastSync: string | null;
  lastSyncStatus: string;
  lastSyncError: string;
  createdAt?: string;
  updatedAt?: string;
  /** The first deploy's job (create with deployNow). */
  jobId?: string;
}

export interface GitStackBody {
  stackName?: string;
  environmentId?: number;
  repositoryId: number;
  composePath: string;
  envFilePath: string;
  autoUpdate: boolean;
  autoUpdateCron: string;
  webhookEnabled: boolean;
  /** Absent keeps the stored secret, "" removes it. */
  webhookSecret?: string;
  deployNow?: boolean;
  envVars?: StackVariable[];
}

/** The final payload of a git deploy or sync job. */
export interface GitDeployResult extends DeployResult {
  deployed?: boolean;
  commit?: string;
  message?: string;
}

const arr = <T>(v: T[] | null | undefined): T[] => (Array.isArray(v) ? v : []);

// ---------------------------------------------------------------- credentials

export async function listCredentials(): Promise<GitCredential[]> {
  return arr(await request<GitCredential[]>('GET', '/api/git/credentials'));
}

export function createCredential(body: GitCredentialBody): Promise<GitCredential> {
  return request('POST', '/api/git/credentials', { body });
}

// ---------------------------------------------------------------- repositories

export async function listRepositories(): Promise<GitRepository[]> {
  return arr(await request<GitRepository[]>('GET', '/api/git/repositories'));
}

export function createRepository(body: GitRepositoryBody): Promise<GitRepository> {
  return request('POST', '/api/git/repositories', { body });
}

// ---------------------------------------------------------------- git stacks

export function createGitStack(body: GitStackBody): Promise<GitStack> {
  return request('POST', '/api/git/stacks', { body });
}

/** Follows a git job to its end, handing each output line to onLine. */
export async function followGitJob(jobId: string, onLine: OnLine, signal?: AbortSignal): Promise<GitDeployResult> {
  let final: GitDeployResult | undefined;
  await followJob(
    jobId,
    (e) => {
      const d = dataOf<Record<string, unknown>>(e);
      if (d && 'success' in d) final = d as unknown as GitDeployResult;
      else if (d && typeof d.message === 'string') onLine(d.message);
    },
    signal,
  );
  if (!final) throw new Error('The job ended without a result');
  return final;
}

/** The absolute webhook URL of a path the API gives (webhookPath). */
export function webhookUrl(webhookPath: string, origin = location.origin): string {
  return origin + webhookPath;
}

/** A random webhook secret (hex, 32 bytes). */
export function newSecret(): string {
  const b = new Uint8Array(32);
  crypto.getRandomValues(b);
  return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
}

// ---------------------------------------------------------------- helpers (issue 15)

/** The outcome of a repository test (ls-remote); a repository that cannot be reached is success false. */
export interface RepositoryTest {
  success: boolean;
  branch: string;
  branchExists: boolean;
  branches?: string[];
  commit?: string;
  error?: string;
}

/** A repository to test without saving: a stored credential or an inline one. */
export interface RepositoryProbe {
  url: string;
  branch?: string;
  credentialId?: number | null;
  authType?: AuthType;
  username?: string;
  password?: string;
  sshPrivateKey?: string;
}

export interface GitEnvFiles {
  commit: string;
  composePath: string;
  envFilePath: string;
  files: string[];
  truncated: boolean;
}

/** Deploys a git stack, streaming its progress lines, and resolves with the final payload. */
export function deployGitStackStream(id: number, onLine: OnLine, signal?: AbortSignal): Promise<GitDeployResult> {
  return runStreamed('POST', `/api/git/stacks/${id}/deploy-stream`, { signal }, onLine) as Promise<GitDeployResult>;
}

export interface EnvPreview {
  commit: string;
  branch: string;
  composePath: string;
  envFilePath: string;
  variables: StackVariable[];
  composeVariables: { name: string; defaultValue?: string; required: boolean }[];
  missing: string[];
}
