// The image list grouped by repository: one row per name (repository:tag) of an
// image, the tags of a repository together, untagged (dangling) images under
// "<none>".
import type { ContainerImageRef, ImageSummary, ScanResult } from '../../lib/api-images';
import { shortImageId, splitRef } from './format';

export const NONE = '<none>';

export interface ImageRow {
  /** Unique in the list: the name, or the id for an untagged image. */
  key: string;
  image: ImageSummary;
  repo: string;
  tag: string;
  /** What actions address: repository:tag, or the image id when it has no tag. */
  ref: string;
  /** No tag at all (what a dangling prune removes). */
  dangling: boolean;
  /** Containers using the image, or null when unknown. */
  inUse: number | null;
}

/** Scan status of an image: its newest result, null (never scanned), 'loading', or 'error'. */
export type ScanStatus = ScanResult | null | 'loading' | 'error';

export interface ImageGroup {
  repo: string;
  rows: ImageRow[];
}

/** The names of an image, without the "<none>:<none>" placeholder. */
export function tagsOf(img: ImageSummary): string[] {
  return (img.RepoTags ?? []).filter((t) => t && t !== '<none>:<none>' && !t.startsWith('<none>'));
}

/** Counts the containers of each image id (for engines that do not count them in the image list). */
export function countContainers(containers: ContainerImageRef[] | null | undefined): Map<string, number> {
  const m = new Map<string, number>();
  for (const c of containers ?? []) {
    if (c.imageId) m.set(c.imageId, (m.get(c.imageId) ?? 0) + 1);
  }
  return m;
}

function inUseOf(img: ImageSummary, counts: Map<string, number> | null): number | null {
  if (typeof img.Containers === 'number' && img.Containers >= 0) return img.Containers;
  if (counts) return counts.get(img.Id) ?? 0;
  return null;
}

/** One row per name of every image (an untagged image is one <none> row). */
export function imageRows(list: ImageSummary[], counts: Map<string, number> | null = null): ImageRow[] {
  const rows: ImageRow[] = [];
  for (const img of list) {
    const inUse = inUseOf(img, counts);
    const tags = tagsOf(img);
    if (tags.length === 0) {
      const digest = (img.RepoDigests ?? []).find((d) => d && !d.startsWith('<none>'));
      const repo = digest ? digest.slice(0, digest.indexOf('@')) : NONE;
      rows.push({ key: img.Id, image: img, repo, tag: NONE, ref: img.Id, dangling: true, inUse });
      continue;
    }
    for (const t of tags) {
      const { repo, tag } = splitRef(t);
      rows.push({ key: t, image: img, repo, tag, ref: t, dangling: false, inUse });
    }
  }
  return rows;
}

/** Keeps the rows matching every word of the query (repository, tag, id, "dangling", "in use", "unused"). */
export function filterRows(rows: ImageRow[], query: string): ImageRow[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  if (!words.length) return rows;
  return rows.filter((r) => {
    const state = r.dangling ? 'dangling untagged' : '';
    const use = r.inUse === null ? '' : r.inUse > 0 ? 'in-use used' : 'unused';
    const hay = `${r.repo}:${r.tag} ${r.image.Id} ${shortImageId(r.image.Id)} ${state} ${use}`.toLowerCase();
    return words.every((w) => hay.includes(w));
  });
}

const collator = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });

/**
 * Groups rows by repository: repositories in name order with "<none>" last,
 * the newest image first inside a repository (then by tag).
 */
export function groupRows(rows: ImageRow[]): ImageGroup[] {
  const by = new Map<string, ImageRow[]>();
  for (const r of rows) {
    const g = by.get(r.repo);
    if (g) g.push(r);
    else by.set(r.repo, [r]);
  }
  const groups = [...by.entries()].map(([repo, rs]) => ({
    repo,
    rows: rs.sort((a, b) => (b.image.Created ?? 0) - (a.image.Created ?? 0) || collator.compare(a.tag, b.tag)),
  }));
  return groups.sort((a, b) => {
    if (a.repo === NONE) return b.repo === NONE ? 0 : 1;
    if (b.repo === NONE) return -1;
    return collator.compare(a.repo, b.repo);
  });
}

/** Total size of the distinct images of a list. */
export function totalSize(list: ImageSummary[]): number {
  return list.reduce((n, i) => n + (i.Size ?? 0), 0);
}

/** Finds an image by full or short id, or by one of its names ("busybox" means busybox:latest). */
export function findImage(list: ImageSummary[], key: string): ImageSummary | undefined {
  const k = key.trim();
  if (!k) return undefined;
  const bare = k.replace(/^sha256:/, '');
  return (
    list.find((i) => i.Id === k || i.Id === `sha256:${bare}`) ??
    list.find((i) => tagsOf(i).includes(k) || tagsOf(i).includes(`${k}:latest`)) ??
    (bare.length >= 6 && /^[0-9a-f]+$/.test(bare) ? list.find((i) => i.Id.replace(/^sha256:/, '').startsWith(bare)) : undefined)
  );
}
