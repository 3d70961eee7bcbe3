// The service graph of a compose file: its services, the networks and
// volumes they use, and depends_on edges, read from the parsed YAML (the
// `yaml` package), laid out in columns by dependency depth for the SVG view.
import { parse } from 'yaml';

export interface GraphService {
  name: string;
  image: string;
  dependsOn: string[];
  networks: string[];
  volumes: string[];
}

export interface ComposeGraph {
  services: GraphService[];
  networks: string[];
  volumes: string[];
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => !!v && typeof v === 'object' && !Array.isArray(v);
const names = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : isObj(v) ? Object.keys(v) : [];

/** The graph of a compose text; an error message when it is not a compose file that can be read. */
export function composeGraph(text: string): ComposeGraph | { error: string } {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (e) {
    return { error: e instanceof Error ? e.message.split('\n')[0] : String(e) };
  }
  if (!isObj(doc) || !isObj(doc.services)) return { error: 'The compose file has no services.' };
  const named = new Set(Object.keys(isObj(doc.volumes) ? doc.volumes : {}));
  const networks = new Set(Object.keys(isObj(doc.networks) ? doc.networks : {}));
  const volumes = new Set(named);
  const services: GraphService[] = Object.entries(doc.services).map(([name, raw]) => {
    const s = isObj(raw) ? raw : {};
    const nets = names(s.networks);
    if (nets.length === 0 && typeof s.network_mode !== 'string') nets.push('default');
    nets.forEach((n) => networks.add(n));
    const vols: string[] = [];
    for (const v of Array.isArray(s.volumes) ? s.volumes : []) {
      const src = typeof v === 'string' ? v.split(':')[0] : isObj(v) && typeof v.source === 'string' && v.type !== 'bind' ? v.source : '';
      // Named volumes only: a bind mount (a path) is not a node of the graph.
      if (src && !src.startsWith('/') && !src.startsWith('.') && !src.startsWith('~') && !src.startsWith('$')) {
        vols.push(src);
        volumes.add(src);
      }
    }
    return { name, image: typeof s.image === 'string' ? s.image : '', dependsOn: names(s.depends_on), networks: nets, volumes: vols };
  });
  return { services, networks: [...networks], volumes: [...volumes] };
}

/** Dependency depth of each service: 0 for one depending on nothing, else 1 + the deepest dependency (cycles cut). */
export function depths(services: GraphService[]): Map<string, number> {
  const by = new Map(services.map((s) => [s.name, s]));
  const out = new Map<string, number>();
  const visit = (name: string, stack: Set<string>): number => {
    const known = out.get(name);
    if (known !== undefined) return known;
    const s = by.get(name);
    if (!s || stack.has(name)) return 0;
    stack.add(name);
    const d = s.dependsOn.filter((x) => by.has(x)).reduce((m, x) => Math.max(m, visit(x, stack) + 1), 0);
    stack.delete(name);
    out.set(name, d);
    return d;
  };
  services.forEach((s) => visit(s.name, new Set()));
  return out;
}

export interface NodeBox {
  id: string;
  kind: 'service' | 'network' | 'volume';
  name: string;
  x: number;
  y: number;
  label: string;
}

export interface Edge {
  from: string;
  to: string;
  kind: 'depends_on' | 'network' | 'volume';
}

export const NODE_W = 150;
export const NODE_H = 40;
const GAP_X = 60;
const GAP_Y = 18;

/** Nodes in columns: services by dependency depth (dependencies on the left), then networks, then volumes. */
export function layout(g: ComposeGraph): { nodes: NodeBox[]; edges: Edge[]; width: number; height: number } {
  const d = depths(g.services);
  const cols: NodeBox[][] = [];
  const put = (col: number, n: Omit<NodeBox, 'x' | 'y'>) => {
    (cols[col] ??= []).push({ ...n, x: 0, y: 0 });
  };
  for (const s of g.services) {
    const parts = [`Service ${s.name}`];
    if (s.image) parts.push(`image ${s.image}`);
    if (s.dependsOn.length) parts.push(`depends on ${s.dependsOn.join(', ')}`);
    if (s.networks.length) parts.push(`networks ${s.networks.join(', ')}`);
    if (s.volumes.length) parts.push(`volumes ${s.volumes.join(', ')}`);
    put(d.get(s.name) ?? 0, { id: `s:${s.name}`, kind: 'service', name: s.name, label: parts.join('; ') });
  }
  const base = cols.length;
  const users = (pick: (s: GraphService) => string[], n: string) => g.services.filter((s) => pick(s).includes(n)).map((s) => s.name);
  for (const n of g.networks) {
    const u = users((s) => s.networks, n);
    put(base, { id: `n:${n}`, kind: 'network', name: n, label: `Network ${n}${u.length ? `; used by ${u.join(', ')}` : ''}` });
  }
  for (const v of g.volumes) {
    const u = users((s) => s.volumes, v);
    put(base + (g.networks.length ? 1 : 0), { id: `v:${v}`, kind: 'volume', name: v, label: `Volume ${v}${u.length ? `; used by ${u.join(', ')}` : ''}` });
  }
  const dense = cols.filter((c) => c && c.length);
  let height = 0;
  dense.forEach((col, i) => {
    col.forEach((n, j) => {
      n.x = i * (NODE_W + GAP_X);
      n.y = j * (NODE_H + GAP_Y);
    });
    height = Math.max(height, col.length * (NODE_H + GAP_Y) - GAP_Y);
  });
  const edges: Edge[] = [];
  for (const s of g.services) {
    for (const t of s.dependsOn) if (g.services.some((x) => x.name === t)) edges.push({ from: `s:${s.name}`, to: `s:${t}`, kind: 'depends_on' });
    for (const n of s.networks) edges.push({ from: `s:${s.name}`, to: `n:${n}`, kind: 'network' });
    for (const v of s.volumes) edges.push({ from: `s:${s.name}`, to: `v:${v}`, kind: 'volume' });
  }
  return { nodes: dense.flat(), edges, width: Math.max(NODE_W, dense.length * (NODE_W + GAP_X) - GAP_X), height: Math.max(NODE_H, height) };
}
