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
}

export function getRegistry(id: number): Promise<Registry> {
  return request('GET', `/api/registries/${id}`);
}

export function registryCatalog(registry: number, opts: { n?: number; last?: string | null } = {}): Promise<CatalogPage> {
  return request('GET', '/api/registry/catalog', { query: { registry, n: opts.n, last: opts.last } });
}

export function searchRegistry(registry: number, q: string): Promise<{ repositories: RegistryRepository[] }> {
  return request('GET', '/api/registry/search', { query: { registry, q } });
}

export function registryTags(registry: number, repository: string): Promise<{ repository: string; tags: RegistryTag[] }> {
  return request('GET', '/api/registry/tags', { query: { registry, repository } });
}

/** Deletes the image a tag names (by its digest: every tag of that image goes). */
export function deleteRegistryImage(
  registry: number,
  repository: string,
  tag: string,
): Promise<{ success: boolean; digest: string }> {
  return request('DELETE', '/api/registry/image', { query: { registry, repository, tag } });
}

export function setDefaultRegistry(id: number): Promise<Registry> {
  return request('POST', `/api/registries/${id}/default`);
}
