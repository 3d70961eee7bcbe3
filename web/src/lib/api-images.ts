// API calls of the Images and Registries screens: images, pull/push/tag/remove,
// history, prune, vulnerability scans and registries. Shapes follow the
// interface spec (Images, Scan result) and COMPAT.md (registries, jobs); the
// types list only what the console reads.
import { request } from './api';

// ---------------------------------------------------------------- images

/** An image list item (spec "Image"; camelCase twins are ignored). */
export interface ImageSummary {
  Id: string;
  RepoTags?: string[] | null;
  RepoDigests?: string[] | null;
  /** Unix seconds. */
  Created?: number;
  Size?: number;
  SharedSize?: number;
  Labels?: Record<string, string> | null;
  /** Containers using the image; -1 when the engine did not count them. */
  Containers?: number;
}

export interface HistoryItem {
  Id: string;
  Created?: number;
  CreatedBy?: string;
  Tags?: string[] | null;
  Size?: number;
  Comment?: string;
}

export interface JobStarted {
  jobId: string;
}

export interface RemovedImage {
  untagged?: string;
  deleted?: string;
}

export interface PruneResult {
  success: boolean;
  deleted?: RemovedImage[] | null;
  spaceReclaimed?: number;
}

/** The part of a container list item the image list uses (which image it runs). */
export interface ContainerImageRef {
  id: string;
  image?: string;
  imageId?: string;
}

const enc = encodeURIComponent;

// Long operations answer {jobId} at once unless the client asks for JSON only
// (then they wait and answer the final payload), so these calls accept any type.
const asJob = { Accept: '*/*' };

export function listImages(env: number): Promise<ImageSummary[]> {
  return request('GET', '/api/images', { query: { env } });
}

/** Containers of env (all states), to count the containers of each image. */
export function listContainerImages(env: number): Promise<ContainerImageRef[]> {
  return request('GET', '/api/containers', { query: { env, all: true } });
}

/** Starts a pull job; its events are read with followJob. */
export function pullImage(env: number, image: string, scanAfterPull: boolean): Promise<JobStarted> {
  return request('POST', '/api/images/pull', { query: { env }, body: { image, scanAfterPull }, headers: asJob });
}

export interface PushRequest {
  imageId: string;
  registryId: number;
  /** The tag pushed from (also for the audit log). */
  imageName?: string;
  /** Another name to push as: `name:tag` or `repository/name:tag`. */
  newTag?: string;
}

export function pushImage(env: number, req: PushRequest): Promise<JobStarted> {
  return request('POST', '/api/images/push', { query: { env }, body: req, headers: asJob });
}

export function tagImage(env: number, id: string, repo: string, tag: string): Promise<{ success: boolean; tag: string }> {
  return request('POST', `/api/images/${enc(id)}/tag`, { query: { env }, body: { repo, tag } });
}

/** Removes an image by id, or one of its names (which only untags it while others remain). */
export function removeImage(env: number, id: string, force = false): Promise<{ success: boolean; removed?: RemovedImage[] | null }> {
  return request('DELETE', `/api/images/${enc(id)}`, { query: { env, force } });
}

/** The part of the engine's image inspection the console shows. */
export interface ImageInspect {
  Id: string;
  Architecture?: string;
  Os?: string;
  Variant?: string;
  Author?: string;
  Config?: {
    Cmd?: string[] | null;
    Entrypoint?: string[] | null;
    Env?: string[] | null;
    ExposedPorts?: Record<string, unknown> | null;
    WorkingDir?: string;
    User?: string;
    Volumes?: Record<string, unknown> | null;
  } | null;
  RootFS?: { Layers?: string[] | null } | null;
}

export function inspectImage(env: number, id: string): Promise<ImageInspect> {
  return request('GET', `/api/images/${enc(id)}`, { query: { env } });
}

export function imageHistory(env: number, id: string): Promise<HistoryItem[]> {
  return request('GET', `/api/images/${enc(id)}/history`, { query: { env } });
}

/** Removes dangling images, or with all every image no container uses. */
export function pruneImages(env: number, all: boolean): Promise<PruneResult> {
  return request('POST', '/api/prune/images', { query: { env }, body: { dangling: !all } });
}

// ---------------------------------------------------------------- scans

export type Severity = 'critical' | 'high' | 'medium' | 'low' | 'negligible' | 'unknown';
export type ScannerName = 'scanner_a' | 'scanner_b';

export interface Vulnerability {
  id: string;
  severity: Severity | string;
  package: string;
  version: string;
  fixedVersion?: string;
  description?: string;
  urls?: string[] | null;
}

export type SeveritySummary = Record<Severity, number>;

export interface ScanResult {
  imageId: string;
  imageName: string;
  scanner: ScannerName | string;
  scannedAt: string;
  /** Milliseconds. */
  scanDuration?: number;
  summary?: Partial<SeveritySummary>;
  vulnerabilities?: Vulnerability[] | null;
}

/** Starts a scan job; without scanner the environment's setting decides (both when it is none). */
export function scanImage(env: number, imageName: string, scanner?: ScannerName | ''): Promise<JobStarted> {
  return request('POST', '/api/images/scan', {
    query: { env },
    body: scanner ? { imageName, scanner } : { imageName },
    headers: asJob,
  });
}

/** The newest stored result of an image (id or name), of one scanner or any; never scans. */
export function scanResult(
  env: number,
  image: string,
  scanner?: ScannerName,
  signal?: AbortSignal,
): Promise<{ found: boolean; result?: ScanResult }> {
  return request('GET', '/api/images/scan', { query: { env, image, scanner }, signal });
}

export interface ScannerSetting {
  /** none, scanner_a, scanner_b or both. */
  scanner: string;
  available?: Record<string, string>;
}

export function scannerSetting(env: number): Promise<ScannerSetting> {
  return request('GET', '/api/settings/scanner', { query: { env } });
}

// ---------------------------------------------------------------- registries

/** A registry as the API answers it: never the password, hasCredentials instead. */
export interface Registry {
  id: number;
  name: string;
  url: string;
  username?: string;
  isDefault?: boolean;
  hasCredentials?: boolean;
  createdAt?: string;
  updatedAt?: string;
}

/**
 * Create/update body. password: absent keeps the stored one, "" clears it, any
 * other text replaces it (the API's rule for secrets).
 */
export interface RegistryInput {
  name: string;
  url: string;
  username?: string;
  password?: string;
  isDefault?: boolean;
}

export function listRegistries(): Promise<Registry[]> {
  return request('GET', '/api/registries');
}

export function createRegistry(r: RegistryInput): Promise<Registry> {
  return request('POST', '/api/registries', { body: r });
}

export function updateRegistry(id: number, r: RegistryInput): Promise<Registry> {
  return request('PUT', `/api/registries/${id}`, { body: r });
}

/** Tests a saved registry ({id}) or unsaved settings, from env's engine. */
export function testRegistry(
  env: number,
  target: { id: number } | { url: string; username?: string; password?: string },
): Promise<{ success: boolean; error?: string }> {
  return request('POST', '/api/registries/test', { query: { env }, body: target });
}
