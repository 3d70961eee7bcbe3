import { cleanup, render, screen, within } from '@testing-library/svelte';
import { afterEach, describe, expect, it, vi } from 'vitest';
import * as api from '../lib/api';
import { expectNoSeriousAxeViolations } from '../test-axe';
import DashboardScreen from './DashboardScreen.svelte';

vi.mock('../lib/api', async (importOriginal) => {
  const real = await importOriginal<typeof import('../lib/api')>();
  return { ...real, dashboardStats: vi.fn() };
});


afterEach(() => {
  cleanup();
  vi.clearAllMocks();
});

describe('DashboardScreen', () => {
  it('shows a tile per environment and tolerates missing fields', async () => {
    vi.mocked(api.dashboardStats).mockResolvedValue([
      {
        id: 1,
        name: 'local',
        online: true,
        containers: { total: 5, running: 3, stopped: 2 },
        images: { total: 7 },
        volumes: { total: 2 },
        stacks: { total: 1 },
      },
      { id: 2, name: 'edge', online: true, containers: { total: 4, running: 1 } },
      { id: 3, name: 'far', online: false, error: 'connection refused' },
    ]);
    const { container } = render(DashboardScreen);
    const local = await screen.findByRole('article', { name: 'local' });
    const figure = (tile: HTMLElement, label: string) => within(tile).getByText(label).parentElement?.querySelector('dd')?.textContent;
    expect(figure(local, 'Running')).toBe('3');
    expect(figure(local, 'Stopped')).toBe('2');
    expect(figure(local, 'Images')).toBe('7');
    expect(within(local).getByText('Online')).toBeTruthy();

    const edge = screen.getByRole('article', { name: 'edge' });
    expect(figure(edge, 'Stopped')).toBe('3'); // derived from total - running
    expect(figure(edge, 'Images')).toBe('—');

    const far = screen.getByRole('article', { name: 'far' });
    expect(within(far).getByText('Offline')).toBeTruthy();
    expect(within(far).getByText(/connection refused/)).toBeTruthy();
    expect(within(far).queryByText('Running')).toBeNull();

    await expectNoSeriousAxeViolations(container);
  });

  it('shows an explicit empty state', async () => {
    vi.mocked(api.dashboardStats).mockResolvedValue([]);
    render(DashboardScreen);
    expect(await screen.findByText('No environments yet.')).toBeTruthy();
  });

  it('shows the server error', async () => {
    vi.mocked(api.dashboardStats).mockRejectedValue(new api.ApiError(500, 'boom'));
    render(DashboardScreen);
    expect((await screen.findByRole('alert')).textContent).toBe('boom');
  });
});
