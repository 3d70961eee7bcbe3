// Types of the registry browser's answers: a configured registry's
// repositories (catalog pages and search) and the tags of a repository. The
// screen reads them through the data layer; the server speaks to the
// registry with the registry's stored credentials.

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

/** A search result, in Docker Hub's search shape (a registry knows only the name). */
export interface SearchResult {
  name: string;
  description: string;
  star_count: number;
  is_official: boolean;
  is_automated: boolean;
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
