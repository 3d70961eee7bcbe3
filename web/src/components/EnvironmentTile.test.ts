import { cleanup, render, screen, within } from '@testing-library/svelte';
import { afterEach, describe, expect, it } from 'vitest';
import { expectNoSeriousAxeViolations } from '../test-axe';
import EnvironmentTile from './EnvironmentTile.svelte';

afterEach(cleanup);

const base = { id: 1, name: 'local', online: true, containers: { total: 3, running: 2 } };

describe('EnvironmentTile', () => {
  it('shows the collected host history, the busiest containers and the disk use', async () => {
    const { container } = render(EnvironmentTile, {
      stats: {
        ...base,
        metricsHistory: [
          { cpu_percent: 12.5, memory_percent: 40, timestamp: '2026-11-23T10:00:00Z' },
          { cpu_percent: 20, memory_percent: 41, timestamp: '2026-11-23T10:00:30Z' },
        ],
        topContainers: [
          { id: 'a', name: 'web', cpuPercent: 15, memoryPercent: 2 },
          { id: 'b', name: 'db', cpuPercent: 5, memoryPercent: 30 },
        ],
        containersSize: 3 * 1024 * 1024,
        buildCacheSize: 0,
      },
      onselect: () => {},
    });
    expect(screen.getByRole('img', { name: /Host CPU of local, last hour/ })).toBeTruthy();
    const top = screen.getByRole('list', { name: 'Busiest containers of local' });
    const items = within(top).getAllByRole('listitem');
    expect(items.map((li) => li.textContent)).toEqual([expect.stringContaining('web'), expect.stringContaining('db')]);
    expect(screen.getByText(/On disk: containers 3(\.0)? MiB, build cache 0 B/)).toBeTruthy();
    await expectNoSeriousAxeViolations(container);
  });

  it('prefers the live samples and shows no history, list or disk line without them', () => {
    render(EnvironmentTile, { stats: base, onselect: () => {}, cpu: [1, 2], memory: [10, 20] });
    expect(screen.getByRole('img', { name: /^CPU of local:/ })).toBeTruthy();
    expect(screen.queryByRole('img', { name: /Host CPU/ })).toBeNull();
    expect(screen.queryByRole('list')).toBeNull();
    expect(screen.queryByText(/On disk/)).toBeNull();
  });
});
