import { describe, expect, it } from 'vitest';
import type { ContainerSummary } from './api';
import { filterContainers, formatPorts, nextSort, shortId, sortContainers } from './containers';

const c = (name: string, image: string, state: string, status: string, ports: ContainerSummary['ports'] = []): ContainerSummary => ({
  id: `${name}-id`,
  name,
  image,
  state,
  status,
  ports,
});

const list = [
  c('web10', 'nginx:1.27', 'running', 'Up 2 hours', [
    { IP: '0.0.0.0', PrivatePort: 80, PublicPort: 8080, Type: 'tcp' },
    { IP: '::', PrivatePort: 80, PublicPort: 8080, Type: 'tcp' },
  ]),
  c('web2', 'nginx:1.27', 'exited', 'Exited (0) 3 days ago'),
  c('db', 'postgres:16', 'running', 'Up 5 minutes', [{ PrivatePort: 5432, Type: 'tcp' }]),
  c('Cache', 'redis:7', 'paused', 'Up 1 hour (Paused)'),
];

describe('formatPorts', () => {
  it('labels published and exposed ports once each', () => {
    expect(formatPorts(list[0].ports)).toEqual(['8080→80/tcp']);
    expect(formatPorts(list[2].ports)).toEqual(['5432/tcp']);
    expect(formatPorts(undefined)).toEqual([]);
  });
});

describe('filterContainers', () => {
  it('matches every word against name, image, state, status, id and ports', () => {
    expect(filterContainers(list, '').length).toBe(4);
    expect(filterContainers(list, 'nginx').map((x) => x.name)).toEqual(['web10', 'web2']);
    expect(filterContainers(list, 'NGINX running').map((x) => x.name)).toEqual(['web10']);
    expect(filterContainers(list, '8080').map((x) => x.name)).toEqual(['web10']);
    expect(filterContainers(list, 'db-id').map((x) => x.name)).toEqual(['db']);
    expect(filterContainers(list, 'nothing-like-this')).toEqual([]);
  });
});

describe('sortContainers', () => {
  it('sorts names naturally and case-insensitively', () => {
    expect(sortContainers(list, 'name', 'asc').map((x) => x.name)).toEqual(['Cache', 'db', 'web2', 'web10']);
    expect(sortContainers(list, 'name', 'desc').map((x) => x.name)).toEqual(['web10', 'web2', 'db', 'Cache']);
  });

  it('breaks ties by name and does not modify the input', () => {
    const copy = [...list];
    expect(sortContainers(list, 'state', 'asc').map((x) => x.name)).toEqual(['web2', 'Cache', 'db', 'web10']);
    expect(sortContainers(list, 'image', 'asc').map((x) => x.name)).toEqual(['web2', 'web10', 'db', 'Cache']);
    expect(list).toEqual(copy);
  });
});

describe('nextSort', () => {
  it('flips the same column and starts another ascending', () => {
    expect(nextSort({ key: 'name', dir: 'asc' }, 'name')).toEqual({ key: 'name', dir: 'desc' });
    expect(nextSort({ key: 'name', dir: 'desc' }, 'name')).toEqual({ key: 'name', dir: 'asc' });
    expect(nextSort({ key: 'name', dir: 'desc' }, 'state')).toEqual({ key: 'state', dir: 'asc' });
  });
});

it('shortId', () => {
  expect(shortId('sha256:0123456789abcdef')).toBe('0123456789ab');
});
