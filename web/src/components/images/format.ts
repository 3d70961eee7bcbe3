// Display helpers of the image screens: sizes, ages, ids, image references.

/** 1234567 → "1.2 MB" (decimal units, as the engine's CLI shows sizes). */
export function formatBytes(n: number | null | undefined): string {
  if (n === null || n === undefined || !Number.isFinite(n) || n < 0) return '—';
  if (n < 1000) return `${n} B`;
  const units = ['kB', 'MB', 'GB', 'TB', 'PB'];
  let v = n / 1000;
  let i = 0;
  while (v >= 1000 && i < units.length - 1) {
    v /= 1000;
    i++;
  }
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[i]}`;
}

/** Age of a Unix-seconds time: "3 days ago". */
export function formatAge(unixSeconds: number | null | undefined, now = Date.now()): string {
  if (!unixSeconds || unixSeconds <= 0) return '—';
  const s = Math.max(0, Math.round(now / 1000 - unixSeconds));
  const steps: [number, string][] = [
    [60, 'second'],
    [60, 'minute'],
    [24, 'hour'],
    [30, 'day'],
    [12, 'month'],
    [Infinity, 'year'],
  ];
  let v = s;
  for (const [size, unit] of steps) {
    if (v < size) {
      if (unit === 'second') return 'just now';
      return `${v} ${unit}${v === 1 ? '' : 's'} ago`;
    }
    v = Math.floor(v / size);
  }
  return '—';
}

/** Full local date and time of Unix seconds (for title attributes). */
export function formatDate(unixSeconds: number | null | undefined): string {
  if (!unixSeconds || unixSeconds <= 0) return '';
  return new Date(unixSeconds * 1000).toLocaleString();
}

export function shortImageId(id: string): string {
  return id.replace(/^sha256:/, '').slice(0, 12);
}

/** Splits "host:5000/repo/name:tag" into repository and tag (digest references keep the digest as tag). */
export function splitRef(ref: string): { repo: string; tag: string } {
  const at = ref.indexOf('@');
  if (at >= 0) return { repo: ref.slice(0, at), tag: ref.slice(at + 1) };
  const i = ref.lastIndexOf(':');
  if (i >= 0 && !ref.slice(i + 1).includes('/')) return { repo: ref.slice(0, i), tag: ref.slice(i + 1) };
  return { repo: ref, tag: 'latest' };
}

const hubHosts = new Set(['docker.io', 'index.docker.io', 'registry-1.docker.io', 'registry.hub.docker.com']);

/** The host[:port] of a registry URL ("https://reg.example:5000/v2" → "reg.example:5000"). */
export function registryHost(url: string): string {
  let u = url.trim();
  const i = u.indexOf('://');
  if (i >= 0) u = u.slice(i + 3);
  return u.split('/')[0].toLowerCase();
}

export function isDockerHub(host: string): boolean {
  return hubHosts.has(host.toLowerCase());
}

/** Whether a reference starts with a registry host (a first segment with "." or ":", or localhost). */
export function hasHost(ref: string): boolean {
  const slash = ref.indexOf('/');
  if (slash < 0) return false;
  const first = ref.slice(0, slash);
  return /[.:]/.test(first) || first === 'localhost';
}

/** The reference a pull asks for: ref as typed, prefixed with the chosen registry's host when it has none. */
export function pullReference(ref: string, registryUrl?: string): string {
  const r = ref.trim();
  if (!r || !registryUrl) return r;
  const host = registryHost(registryUrl);
  if (!host || isDockerHub(host) || hasHost(r)) return r;
  return `${host}/${r}`;
}

/** The name an image gets in a registry when pushed (the server's rule): its host replaced by the registry's. */
export function pushTarget(source: string, registryUrl: string): string {
  let name = source.trim();
  if (hasHost(name) && name.split('/')[0] !== 'localhost') name = name.slice(name.indexOf('/') + 1);
  if (!name.includes('@')) {
    const i = name.lastIndexOf(':');
    if (i < 0 || name.slice(i + 1).includes('/')) name += ':latest';
  }
  const host = registryHost(registryUrl);
  if (!host || isDockerHub(host)) return name;
  return `${host}/${name}`;
}
