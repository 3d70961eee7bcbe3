// API calls of the registry browser: a configured registry's repositories
// (catalog pages and search), the tags of a repository, deleting a tag's
// image, and making a registry the default. The server speaks to the
// registry with the registry's stored credentials.
import { request } from './api';
import type { Registry } from './api-images';

export interface RegistryRepository {
  name: string;
}

/** One page of a registry's catalog; nextLast asks for the following page. */
export interface CatalogPage {
  repositories: RegistryRepository[];
  pagination: { pageSize: number; hasMore: boolean; nextLast: string | null };
}

/** A tag; digest, size and created are there when the server could read them. */
export interface RegistryTag {
  name: string;
  digest?: string;
  mediaType?: string;
  /** Bytes of the configuration and layers, compressed (none for a multi-platform index). */
  size?: number;
  /** RFC 3339. */
  created?: string;
  /** RFC 3339: created, or Docker Hub's last push. */
  lastUpdated?: string;
}

export function getRegistry(id: number): Promise<Registry> {
  return request('GET', `/api/registries/${id}`);
}

export function registryCatalog(registry: number, opts: { n?: number; last?: string | null } = {}): Promise<CatalogPage> {
  return request('GET', '/api/registry/catalog', { query: { registry, n: opts.n, last: opts.last } });
}

/** A search result, in Docker Hub's search shape (a registry knows only the name). */
export interface SearchResult {
  name: string;
  description: string;
  star_count: number;
  is_official: boolean;
  is_automated: boolean;
}

/** The most results a search may ask for. */
export const maxSearchResults = 500;

/** Repositories whose names contain term (registry undefined: Docker Hub's). */
export function searchRegistry(registry: number | undefined, term: string, limit = maxSearchResults): Promise<SearchResult[]> {
  return request('GET', '/api/registry/search', { query: { registry, term, limit } });
}

/** A page of a repository's tags; a registry's come all in one page unless pageSize is sent. */
export interface TagPage {
  repository: string;
  tags: RegistryTag[];
  total: number;
  page: number;
  pageSize: number;
  hasNext: boolean;
  hasPrev: boolean;
}

export function registryTags(
  registry: number | undefined,
  image: string,
  opts: { page?: number; pageSize?: number } = {},
): Promise<TagPage> {
  return request('GET', '/api/registry/tags', { query: { registry, image, page: opts.page, pageSize: opts.pageSize } });
}

/** Deletes the image a tag names (by its digest: every tag of that image goes). */
export function deleteRegistryImage(
  registry: number,
  repository: string,
  tag: string,
): Promise<{ success: boolean; digest: string; message: string }> {
  return request('DELETE', '/api/registry/image', { query: { registry, image: repository, tag } });
}

export function setDefaultRegistry(id: number): Promise<Registry> {
  return request('POST', `/api/registries/${id}/default`);
}
