import { describe, expect, it } from 'vitest';
import { composeGraph, depths, layout, type ComposeGraph } from './compose-graph';

const text = `services:
  web:
    image: nginx
    depends_on:
      api:
        condition: service_healthy
    networks: [front]
  api:
    image: app
    depends_on: [db]
    networks: [front, back]
    volumes:
      - ./conf:/etc/app
      - type: volume
        source: cache
        target: /cache
  db:
    image: postgres
    volumes: ["pgdata:/var/lib/postgresql/data"]
    networks: [back]
networks:
  front: {}
  back: {}
volumes:
  pgdata: {}
`;

describe('compose graph', () => {
  it('reads services, their depends_on (list or map), networks and named volumes (not bind mounts)', () => {
    const g = composeGraph(text) as ComposeGraph;
    expect(g.services.map((s) => [s.name, s.dependsOn, s.networks, s.volumes])).toEqual([
      ['web', ['api'], ['front'], []],
      ['api', ['db'], ['front', 'back'], ['cache']],
      ['db', [], ['back'], ['pgdata']],
    ]);
    expect(g.networks).toEqual(['front', 'back']);
    expect(g.volumes).toEqual(['pgdata', 'cache']);
  });

  it('puts a service without networks on the default network, and says why there is no graph', () => {
    const g = composeGraph('services:\n  a:\n    image: x\n') as ComposeGraph;
    expect(g.networks).toEqual(['default']);
    expect(composeGraph('services: [\n')).toHaveProperty('error');
    expect(composeGraph('volumes: {}\n')).toEqual({ error: 'The compose file has no services.' });
  });

  it('lays services out by dependency depth, cycles cut, with depends_on edges', () => {
    const g = composeGraph(text) as ComposeGraph;
    expect(Object.fromEntries(depths(g.services))).toEqual({ db: 0, api: 1, web: 2 });
    const l = layout(g);
    const x = (id: string) => l.nodes.find((n) => n.id === id)!.x;
    expect(x('s:db')).toBeLessThan(x('s:api'));
    expect(x('s:api')).toBeLessThan(x('s:web'));
    expect(x('n:front')).toBeGreaterThan(x('s:web'));
    expect(l.edges.filter((e) => e.kind === 'depends_on')).toEqual([
      { from: 's:web', to: 's:api', kind: 'depends_on' },
      { from: 's:api', to: 's:db', kind: 'depends_on' },
    ]);
    const cyc = composeGraph('services:\n  a: {depends_on: [b]}\n  b: {depends_on: [a]}\n') as ComposeGraph;
    expect([...depths(cyc.services).keys()].sort()).toEqual(['a', 'b']);
  });
});
