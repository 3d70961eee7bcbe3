// Types of the Images and Registries screens (images, history, prune, scan
// results, registries); the screens and the registry form read and change
// them through the data layer's typed client. Shapes follow the
// interface spec (Images, Scan result) and COMPAT.md (registries, jobs); the
// types list only what the console reads.

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

export interface PushRequest {
  imageId: string;
  registryId: number;
  /** The tag pushed from (also for the audit log). */
  imageName?: string;
  /** Another name to push as: `name:tag` or `repository/name:tag`. */
  newTag?: string;
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
