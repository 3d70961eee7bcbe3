// The permission matrix of a role: resources (rows) × actions (columns) as the
// server's catalog defines them. Pure functions over a Permissions map; the
// matrix component only renders them.
import { PERMISSION_CATALOG, type Permissions } from '../../lib/api-admin';

export type Catalog = readonly { resource: string; actions: readonly string[] }[];

/** Every action of the catalog, in order of first appearance: the matrix's columns. */
export function matrixColumns(catalog: Catalog = PERMISSION_CATALOG): string[] {
  const out: string[] = [];
  for (const r of catalog) for (const a of r.actions) if (!out.includes(a)) out.push(a);
  return out;
}

/** Whether the catalog knows the action for the resource (a cell exists). */
export function applies(resource: string, action: string, catalog: Catalog = PERMISSION_CATALOG): boolean {
  return !!catalog.find((r) => r.resource === resource)?.actions.includes(action);
}

/** Whether p grants resource:action ("*" grants every action, as the server reads it). */
export function granted(p: Permissions, resource: string, action: string): boolean {
  const list = p[resource] ?? [];
  return list.includes(action) || list.includes('*');
}

/**
 * p in canonical form: only the catalog's resources and actions, in catalog
 * order, "*" expanded, no empty lists. What the console sends to the server.
 */
export function normalize(p: Permissions, catalog: Catalog = PERMISSION_CATALOG): Permissions {
  const out: Permissions = {};
  for (const r of catalog) {
    const actions = r.actions.filter((a) => granted(p, r.resource, a));
    if (actions.length) out[r.resource] = [...actions];
  }
  return out;
}

/** p with resource:action set to on. */
export function setCell(p: Permissions, resource: string, action: string, on: boolean, catalog: Catalog = PERMISSION_CATALOG): Permissions {
  if (!applies(resource, action, catalog)) return normalize(p, catalog);
  const next = normalize(p, catalog);
  const list = new Set(next[resource] ?? []);
  if (on) list.add(action);
  else list.delete(action);
  next[resource] = [...list];
  return normalize(next, catalog);
}

/** p with every action of a resource set to on. */
export function setRow(p: Permissions, resource: string, on: boolean, catalog: Catalog = PERMISSION_CATALOG): Permissions {
  const r = catalog.find((x) => x.resource === resource);
  const next = normalize(p, catalog);
  if (r) next[r.resource] = on ? [...r.actions] : [];
  return normalize(next, catalog);
}

/** p with an action set to on for every resource that has it. */
export function setColumn(p: Permissions, action: string, on: boolean, catalog: Catalog = PERMISSION_CATALOG): Permissions {
  let next = normalize(p, catalog);
  for (const r of catalog) if (r.actions.includes(action)) next = setCell(next, r.resource, action, on, catalog);
  return next;
}

/** all: every action of the row (or column) is granted; some: at least one. */
export function rowState(p: Permissions, resource: string, catalog: Catalog = PERMISSION_CATALOG): 'all' | 'some' | 'none' {
  const r = catalog.find((x) => x.resource === resource);
  if (!r) return 'none';
  const n = r.actions.filter((a) => granted(p, resource, a)).length;
  return n === 0 ? 'none' : n === r.actions.length ? 'all' : 'some';
}

export function columnState(p: Permissions, action: string, catalog: Catalog = PERMISSION_CATALOG): 'all' | 'some' | 'none' {
  const rows = catalog.filter((r) => r.actions.includes(action));
  const n = rows.filter((r) => granted(p, r.resource, action)).length;
  return n === 0 ? 'none' : n === rows.length ? 'all' : 'some';
}

/** How many permissions p grants (catalog pairs). */
export function countGranted(p: Permissions, catalog: Catalog = PERMISSION_CATALOG): number {
  return Object.values(normalize(p, catalog)).reduce((n, a) => n + a.length, 0);
}

/** The number of pairs of the catalog. */
export function catalogSize(catalog: Catalog = PERMISSION_CATALOG): number {
  return catalog.reduce((n, r) => n + r.actions.length, 0);
}

/** "audit_logs" → "Audit logs". */
export function resourceLabel(resource: string): string {
  const s = resource.replaceAll('_', ' ');
  return s.charAt(0).toUpperCase() + s.slice(1);
}
