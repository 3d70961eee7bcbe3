import { describe, expect, it } from 'vitest';
import { PERMISSION_CATALOG } from '../../lib/api-admin';
import {
  applies,
  catalogSize,
  columnState,
  countGranted,
  granted,
  matrixColumns,
  normalize,
  resourceLabel,
  rowState,
  setCell,
  setColumn,
  setRow,
} from './permissions';

const small = [
  { resource: 'containers', actions: ['view', 'start', 'logs'] },
  { resource: 'images', actions: ['view', 'pull'] },
  { resource: 'license', actions: ['manage'] },
];

describe('permission matrix', () => {
  it('has one column per action, in order of first appearance', () => {
    expect(matrixColumns(small)).toEqual(['view', 'start', 'logs', 'pull', 'manage']);
    const all = matrixColumns();
    expect(all[0]).toBe('view');
    expect(new Set(all).size).toBe(all.length);
    for (const r of PERMISSION_CATALOG) for (const a of r.actions) expect(all).toContain(a);
  });

  it('has a cell only where the resource has the action', () => {
    expect(applies('containers', 'logs', small)).toBe(true);
    expect(applies('images', 'logs', small)).toBe(false);
    expect(applies('nothing', 'view', small)).toBe(false);
  });

  it('reads "*" as every action, as the server does', () => {
    expect(granted({ images: ['*'] }, 'images', 'pull')).toBe(true);
    expect(normalize({ images: ['*'] }, small)).toEqual({ images: ['view', 'pull'] });
  });

  it('normalizes to catalog order, dropping unknown resources, unknown actions and empty lists', () => {
    expect(normalize({ images: ['pull', 'view', 'fly'], bogus: ['view'], containers: [] }, small)).toEqual({
      images: ['view', 'pull'],
    });
  });

  it('sets and clears one cell without touching the others', () => {
    let p = setCell({}, 'containers', 'logs', true, small);
    p = setCell(p, 'containers', 'view', true, small);
    expect(p).toEqual({ containers: ['view', 'logs'] });
    p = setCell(p, 'containers', 'logs', false, small);
    expect(p).toEqual({ containers: ['view'] });
    p = setCell(p, 'containers', 'view', false, small);
    expect(p).toEqual({});
    // a cell that does not exist is ignored
    expect(setCell({}, 'images', 'logs', true, small)).toEqual({});
  });

  it('does not change the map it is given', () => {
    const p = { containers: ['view'] };
    setCell(p, 'containers', 'start', true, small);
    setRow(p, 'images', true, small);
    expect(p).toEqual({ containers: ['view'] });
  });

  it('sets a whole row and a whole column', () => {
    let p = setRow({}, 'containers', true, small);
    expect(p).toEqual({ containers: ['view', 'start', 'logs'] });
    expect(rowState(p, 'containers', small)).toBe('all');
    p = setColumn(p, 'view', false, small);
    expect(p).toEqual({ containers: ['start', 'logs'] });
    expect(rowState(p, 'containers', small)).toBe('some');
    expect(rowState(p, 'images', small)).toBe('none');
    p = setColumn(p, 'view', true, small);
    expect(p).toEqual({ containers: ['view', 'start', 'logs'], images: ['view'] });
    expect(columnState(p, 'view', small)).toBe('all');
    expect(columnState(p, 'pull', small)).toBe('none');
    p = setCell(p, 'images', 'view', false, small);
    expect(columnState(p, 'view', small)).toBe('some');
    p = setRow(p, 'containers', false, small);
    expect(p).toEqual({});
  });

  it('counts granted pairs against the catalog', () => {
    expect(catalogSize(small)).toBe(6);
    expect(countGranted({ containers: ['view', 'x'], images: ['*'] }, small)).toBe(3);
    expect(catalogSize()).toBe(PERMISSION_CATALOG.reduce((n, r) => n + r.actions.length, 0));
  });

  it('labels resources for people', () => {
    expect(resourceLabel('audit_logs')).toBe('Audit logs');
    expect(resourceLabel('git')).toBe('Git');
  });
});
