import { describe, expect, it } from 'vitest';
import type { ContainerSummary } from './api';
import {
  canDo,
  filterContainers,
  formatBytes,
  formatPercent,
  formatPorts,
  healthOf,
  nextSort,
  runEach,
  shortId,
  sortContainers,
  stackOf,
  uptimeOf,
  type StatFigures,
} from './containers';

const c = (
  name: string,
  image: string,
  state: string,
  status: string,
  ports: ContainerSummary['ports'] = [],
  extra: Partial<ContainerSummary> = {},
): ContainerSummary => ({
  id: `${name}-id`,
  name,
  image,
  state,
  status,
  ports,
  ...extra,
});

const list = [
  c('web10', 'nginx:1.27', 'running', 'Up 2 hours', [
    { IP: '0.0.0.0', PrivatePort: 80, PublicPort: 8080, Type: 'tcp' },
    { IP: '::', PrivatePort: 80, PublicPort: 8080, Type: 'tcp' },
  ], { labels: { 'com.docker.compose.project': 'shop' } }),
  c('web2', 'nginx:1.27', 'exited', 'Exited (0) 3 days ago'),
  c('db', 'postgres:16', 'running', 'Up 5 minutes (healthy)', [{ PrivatePort: 5432, Type: 'tcp' }], {
    health: 'healthy',
    labels: { 'com.docker.compose.project': 'shop' },
  }),
  c('Cache', 'redis:7', 'paused', 'Up 1 hour (Paused)'),
];

describe('formatPorts', () => {
  it('labels published and exposed ports once each', () => {
    expect(formatPorts(list[0].ports)).toEqual(['8080→80/tcp']);
    expect(formatPorts(list[2].ports)).toEqual(['5432/tcp']);
    expect(formatPorts(undefined)).toEqual([]);
  });
});

describe('uptimeOf', () => {
  it('reads the duration of the engine status, ignoring the health and pause notes', () => {
    expect(uptimeOf('Up 2 hours')).toEqual({ label: '2 hours', seconds: 7200 });
    expect(uptimeOf('Up 5 minutes (healthy)')).toEqual({ label: '5 minutes', seconds: 300 });
    expect(uptimeOf('Up About a minute')).toEqual({ label: 'About a minute', seconds: 60 });
    expect(uptimeOf('Up About an hour (health: starting)')?.seconds).toBe(3600);
    expect(uptimeOf('Up Less than a second')?.seconds).toBe(0);
    expect(uptimeOf('Up 3 days (Paused)')?.seconds).toBe(3 * 86400);
    expect(uptimeOf('Up 1 second')?.seconds).toBe(1);
    expect(uptimeOf('Exited (0) 3 days ago')).toBeNull();
    expect(uptimeOf('Created')).toBeNull();
    expect(uptimeOf(undefined)).toBeNull();
  });
});

describe('healthOf and stackOf', () => {
  it('takes the health field, else the status note', () => {
    expect(healthOf({ health: 'unhealthy', status: 'Up 1 hour' })).toBe('unhealthy');
    expect(healthOf({ status: 'Up 1 hour (healthy)' })).toBe('healthy');
    expect(healthOf({ status: 'Up 3 seconds (health: starting)' })).toBe('starting');
    expect(healthOf({ health: 'none', status: 'Up 1 hour' })).toBe('');
  });
  it('reads the compose project label', () => {
    expect(stackOf(list[0])).toBe('shop');
    expect(stackOf(list[1])).toBe('');
  });
});

describe('formatting', () => {
  it('formats bytes with binary units', () => {
    expect(formatBytes(0)).toBe('0 B');
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(1536)).toBe('1.50 KiB');
    expect(formatBytes(12.3 * 1024 * 1024)).toBe('12.3 MiB');
    expect(formatBytes(2 * 1024 ** 3)).toBe('2.00 GiB');
    expect(formatBytes(undefined)).toBe('—');
  });
  it('formats percentages', () => {
    expect(formatPercent(12.345)).toBe('12.3 %');
    expect(formatPercent(0)).toBe('0.0 %');
    expect(formatPercent(150.2)).toBe('150 %');
    expect(formatPercent(Number.NaN)).toBe('—');
  });
});

describe('filterContainers', () => {
  it('matches every word against name, image, state, status, health, id, ports and stack', () => {
    expect(filterContainers(list, '').length).toBe(4);
    expect(filterContainers(list, 'nginx').map((x) => x.name)).toEqual(['web10', 'web2']);
    expect(filterContainers(list, 'NGINX running').map((x) => x.name)).toEqual(['web10']);
    expect(filterContainers(list, '8080').map((x) => x.name)).toEqual(['web10']);
    expect(filterContainers(list, 'db-id').map((x) => x.name)).toEqual(['db']);
    expect(filterContainers(list, 'shop').map((x) => x.name)).toEqual(['web10', 'db']);
    expect(filterContainers(list, 'healthy').map((x) => x.name)).toEqual(['db']);
    expect(filterContainers(list, 'nothing-like-this')).toEqual([]);
  });

  it('keeps the containers of a state', () => {
    expect(filterContainers(list, '', 'running').map((x) => x.name)).toEqual(['web10', 'db']);
    expect(filterContainers(list, '', 'stopped').map((x) => x.name)).toEqual(['web2']);
    expect(filterContainers(list, '', 'paused').map((x) => x.name)).toEqual(['Cache']);
    expect(filterContainers(list, 'web', 'running').map((x) => x.name)).toEqual(['web10']);
    expect(filterContainers(list, '', 'unhealthy')).toEqual([]);
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

  it('puts containers without a value last in both directions', () => {
    expect(sortContainers(list, 'stack', 'asc').map((x) => x.name)).toEqual(['db', 'web10', 'Cache', 'web2']);
    expect(sortContainers(list, 'stack', 'desc').map((x) => x.name)).toEqual(['db', 'web10', 'Cache', 'web2']);
    expect(sortContainers(list, 'uptime', 'desc').map((x) => x.name)).toEqual(['web10', 'Cache', 'db', 'web2']);
    expect(sortContainers(list, 'uptime', 'asc').map((x) => x.name)).toEqual(['db', 'Cache', 'web10', 'web2']);
  });

  it('sorts by CPU and memory from the statistics', () => {
    const stats = new Map<string, StatFigures>([
      ['web10-id', { cpuPercent: 5, memoryUsage: 300 }],
      ['db-id', { cpuPercent: 40, memoryUsage: 100 }],
    ]);
    expect(sortContainers(list, 'cpu', 'desc', stats).map((x) => x.name)).toEqual(['db', 'web10', 'Cache', 'web2']);
    expect(sortContainers(list, 'memory', 'desc', stats).map((x) => x.name)).toEqual(['web10', 'db', 'Cache', 'web2']);
    expect(sortContainers(list, 'memory', 'asc', stats).map((x) => x.name)).toEqual(['db', 'web10', 'Cache', 'web2']);
  });
});

describe('nextSort', () => {
  it('flips the same column; another starts ascending, figures descending', () => {
    expect(nextSort({ key: 'name', dir: 'asc' }, 'name')).toEqual({ key: 'name', dir: 'desc' });
    expect(nextSort({ key: 'name', dir: 'desc' }, 'name')).toEqual({ key: 'name', dir: 'asc' });
    expect(nextSort({ key: 'name', dir: 'desc' }, 'state')).toEqual({ key: 'state', dir: 'asc' });
    expect(nextSort({ key: 'name', dir: 'asc' }, 'cpu')).toEqual({ key: 'cpu', dir: 'desc' });
  });
});

describe('canDo', () => {
  it('tells which actions suit a state', () => {
    expect(canDo('running', 'start')).toBe(false);
    expect(canDo('exited', 'start')).toBe(true);
    expect(canDo('created', 'stop')).toBe(false);
    expect(canDo('paused', 'stop')).toBe(true);
    expect(canDo('running', 'pause')).toBe(true);
    expect(canDo('paused', 'pause')).toBe(false);
    expect(canDo('paused', 'unpause')).toBe(true);
    expect(canDo('exited', 'restart')).toBe(true);
    expect(canDo('running', 'remove')).toBe(true);
  });
});

describe('runEach', () => {
  it('runs with bounded concurrency and reports each outcome in order', async () => {
    let running = 0;
    let peak = 0;
    const progress: number[] = [];
    const out = await runEach(
      [1, 2, 3, 4, 5],
      2,
      async (n) => {
        running++;
        peak = Math.max(peak, running);
        await new Promise((r) => setTimeout(r, 5 * (6 - n)));
        running--;
        if (n === 3) throw new Error('three');
        return n * 10;
      },
      (d) => progress.push(d),
    );
    expect(peak).toBe(2);
    expect(progress).toEqual([1, 2, 3, 4, 5]);
    expect(out.map((o) => (o.ok ? o.value : (o.error as Error).message))).toEqual([10, 20, 'three', 40, 50]);
  });
});

it('shortId', () => {
  expect(shortId('sha256:0123456789abcdef')).toBe('0123456789ab');
});

import * as cl from './containers';

describe('the list at fleet size', () => {
  const c = (id: string, name: string, stack?: string, state = 'running'): ContainerSummary => ({
    id,
    name,
    image: 'busybox',
    state,
    status: '',
    labels: stack ? { [cl.STACK_LABEL]: stack } : {},
  });

  it('restores saved columns, keeps defaults for unnamed ones and ignores unknown ids', () => {
    expect(cl.columnsFrom(undefined)).toEqual(cl.defaultColumns());
    expect(cl.defaultColumns()).not.toContain('uptime');
    const saved = { columns: [{ id: 'image', visible: false }, { id: 'uptime', visible: true }, { id: 'bogus', visible: true }] };
    expect(cl.columnsFrom(saved)).toEqual(['state', 'uptime', 'cpu', 'memory', 'ports', 'stack']);
    expect(cl.columnsFrom({ columns: 'nope' })).toEqual(cl.defaultColumns());
    const out = cl.columnsToSave(['cpu']);
    expect(out).toHaveLength(cl.COLUMNS.length);
    expect(out.filter((x) => x.visible)).toEqual([{ id: 'cpu', visible: true }]);
    expect(cl.columnsFrom({ columns: out })).toEqual(['cpu']);
  });

  it('groups by stack, stacks by name then the containers of none, and collapses a group', () => {
    const list = [c('1', 'b', 'shop'), c('2', 'x'), c('3', 'a', 'blog', 'exited'), c('4', 'c', 'shop', 'exited')];
    expect(cl.listItems(list, false).map((i) => i.key)).toEqual(['1', '2', '3', '4']);
    const items = cl.listItems(list, true);
    expect(items.map((i) => i.key)).toEqual(['group:blog', '3', 'group:shop', '1', '4', 'group:', '2']);
    expect(items[2]).toMatchObject({ kind: 'group', stack: 'shop', count: 2, running: 1, collapsed: false });
    expect(cl.listItems(list, true, new Set(['shop'])).map((i) => i.key)).toEqual(['group:blog', '3', 'group:shop', 'group:', '2']);
  });

  it('links published TCP ports to the host, not local or unpublished ones', () => {
    const ports = [
      { IP: '0.0.0.0', PrivatePort: 80, PublicPort: 8080, Type: 'tcp' },
      { IP: '::', PrivatePort: 80, PublicPort: 8080, Type: 'tcp' },
      { IP: '127.0.0.1', PrivatePort: 5432, PublicPort: 5432, Type: 'tcp' },
      { PrivatePort: 9000, Type: 'tcp' },
      { IP: '0.0.0.0', PrivatePort: 53, PublicPort: 53, Type: 'udp' },
    ];
    expect(cl.portLinks(ports, 'berth.example')).toEqual([
      { label: '53→53/udp' },
      { label: '8080→80/tcp', href: 'http://berth.example:8080' },
      { label: '5432→5432/tcp' },
      { label: '9000/tcp' },
    ]);
    expect(cl.portLinks(ports, '::1')[1].href).toBe('http://[::1]:8080');
    expect(cl.publicHost({ publicIp: ' 203.0.113.7 ' }, 'localhost')).toBe('203.0.113.7');
    expect(cl.publicHost({ publicIp: null }, 'localhost')).toBe('localhost');
  });

  it('keeps the last samples of the sampled containers and draws them', () => {
    let h = new Map<string, cl.StatHistory>();
    for (let i = 0; i < cl.HISTORY + 5; i++) h = cl.addSamples(h, new Map([['a', { cpuPercent: i, memoryUsage: i * 10 }]]));
    expect(h.get('a')!.cpu).toHaveLength(cl.HISTORY);
    expect(h.get('a')!.cpu.at(-1)).toBe(cl.HISTORY + 4);
    h = cl.addSamples(h, new Map([['b', { cpuPercent: 1, memoryUsage: 1 }]]));
    expect([...h.keys()]).toEqual(['b']); // a stopped
    expect(cl.sparkPath([5], 30, 10)).toBe('');
    expect(cl.sparkPath([0, 50, 100], 30, 10, 100)).toBe('M0.0 10.0 L15.0 5.0 L30.0 0.0');
    expect(cl.sparkPath([0, 0], 30, 10)).toBe('M0.0 10.0 L30.0 10.0');
  });

  it('finds pending updates by id or by name', () => {
    const p = cl.pendingOf([{ containerId: 'aaa', containerName: '/web' }, { containerId: 'old', containerName: 'db' }]);
    expect(cl.hasUpdate(c('aaa', 'x'), p)).toBe(true);
    expect(cl.hasUpdate(c('new', 'web'), p)).toBe(true);
    expect(cl.hasUpdate(c('zzz', 'cache'), p)).toBe(false);
  });
});
