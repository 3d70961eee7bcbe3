import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../../lib/api';
import { queryClient } from '../../lib/query';
import { session } from '../../lib/session.svelte';
import { stubApi, type StubApi } from '../../test-api';
import { expectNoSeriousAxeViolations } from '../../test-axe';
import EnvironmentSettings from './EnvironmentSettings.svelte';
import { settingsRoutes } from './test-routes';

let api: StubApi;
beforeEach(() => {
  queryClient.clear();
  session.environments = [{ id: 2, name: 'edge', connectionType: 'socket' }];
  session.envId = 2;
  session.session = { authenticated: false, authEnabled: false };
  api = stubApi(settingsRoutes());
});
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

const section = (name: string) => screen.getByRole('region', { name });

describe('EnvironmentSettings', () => {
  it('shows each section read from the server', async () => {
    const { container } = render(EnvironmentSettings, { envId: 2 });
    expect(await screen.findByDisplayValue('0 4 * * *')).toBeTruthy();
    expect(await screen.findByDisplayValue('0 3 * * 0')).toBeTruthy();
    expect(await screen.findByDisplayValue('UTC')).toBeTruthy();
    expect(await screen.findByDisplayValue('80')).toBeTruthy();
    expect((within(section('Update check')).getByLabelText('Check for updates on a schedule') as HTMLInputElement).checked).toBe(true);
    await expectNoSeriousAxeViolations(container);
  }, 30_000); // axe over the time zone list is slow on a loaded machine

  it('saves only what a section owns', async () => {
    render(EnvironmentSettings, { envId: 2 });
    const cron = (await screen.findByDisplayValue('0 4 * * *')) as HTMLInputElement;
    await fireEvent.input(cron, { target: { value: '0 5 * * *' } });
    await fireEvent.click(within(section('Update check')).getByLabelText('Update the containers found'));
    await fireEvent.click(screen.getByRole('button', { name: 'Save update check' }));
    await waitFor(() => expect(api.called('POST /api/environments/2/update-check')).toHaveLength(1));
    expect(api.called('POST /api/environments/2/update-check')[0].body).toEqual({
      enabled: true,
      cron: '0 5 * * *',
      autoUpdate: true,
      vulnerabilityCriteria: 'never',
    });
    expect(await within(section('Update check')).findByText('Update check saved.')).toBeTruthy();
    expect(api.called('POST /api/environments/2/image-prune')).toHaveLength(0);
    expect(api.called('POST /api/environments/2/timezone')).toHaveLength(0);

    await fireEvent.input(screen.getByLabelText('Time zone (IANA name)'), { target: { value: 'Europe/Berlin' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Save time zone' }));
    await waitFor(() => expect(api.called('POST /api/environments/2/timezone')[0]?.body).toEqual({ timezone: 'Europe/Berlin' }));

    await fireEvent.change(screen.getByLabelText('Threshold kind'), { target: { value: 'absolute' } });
    await fireEvent.input(screen.getByLabelText('Threshold (GB)'), { target: { value: '120' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Save disk warning' }));
    await waitFor(() =>
      expect(api.called('POST /api/environments/2/disk-warning')[0]?.body).toEqual({
        enabled: false,
        mode: 'absolute',
        thresholdPercent: 80,
        thresholdGb: 120,
      }),
    );
  });

  it("shows the server's validation message in the section and keeps the edit", async () => {
    api.routes['POST /api/environments/2/image-prune'] = () => {
      throw new ApiError(400, 'Invalid cron expression: expected 5 fields');
    };
    render(EnvironmentSettings, { envId: 2 });
    const cron = (await screen.findByDisplayValue('0 3 * * 0')) as HTMLInputElement;
    await fireEvent.input(cron, { target: { value: 'every day' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Save image prune' }));
    const alert = await within(section('Image prune')).findByRole('alert');
    expect(alert.textContent).toContain('Invalid cron expression: expected 5 fields');
    await waitFor(() => expect(api.called('GET /api/environments/2/image-prune').length).toBeGreaterThan(1));
    expect((screen.getByLabelText('Schedule (cron)', { selector: '#envset-ip-cron' }) as HTMLInputElement).value).toBe('every day');
  });

  it('checks the environment for updates now and prunes now', async () => {
    render(EnvironmentSettings, { envId: 2 });
    await fireEvent.click(await screen.findByRole('button', { name: 'Check now' }));
    expect(await within(section('Update check')).findByText('2 updates available.')).toBeTruthy();
    expect(api.called('POST /api/containers/check-updates')[0].query).toEqual({ env: '2' });
    await fireEvent.click(screen.getByRole('button', { name: 'Prune now' }));
    expect(await within(section('Image prune')).findByText('Images pruned.')).toBeTruthy();
    expect(api.called('PUT /api/environments/2/image-prune')).toHaveLength(1);
  });

  it('is read-only for a user who may not edit the environment (Operator, Viewer)', async () => {
    session.session = {
      authenticated: true,
      authEnabled: true,
      user: {
        id: 3,
        username: 'op',
        isAdmin: false,
        environmentPermissions: { '2': { environments: ['view'], containers: ['view', 'edit'] } },
      },
    };
    render(EnvironmentSettings, { envId: 2 });
    await screen.findByDisplayValue('0 4 * * *');
    expect(screen.getByText('You may view these settings, not change them.')).toBeTruthy();
    expect(screen.queryByRole('button', { name: /^Save/ })).toBeNull();
    expect(screen.queryByRole('button', { name: 'Prune now' })).toBeNull();
    expect(screen.getByRole('button', { name: 'Check now' })).toBeTruthy(); // containers:edit
    expect((screen.getByDisplayValue('UTC') as HTMLInputElement).disabled || !!screen.getByDisplayValue('UTC').closest('fieldset[disabled]')).toBe(true);

    cleanup();
    session.session = {
      authenticated: true,
      authEnabled: true,
      user: { id: 4, username: 'v', isAdmin: false, environmentPermissions: { '2': { environments: ['view'], containers: ['view'] } } },
    };
    render(EnvironmentSettings, { envId: 2 });
    await screen.findByDisplayValue('0 4 * * *');
    expect(screen.queryByRole('button', { name: /^Save|Check now|Prune now/ })).toBeNull();
  });
});
