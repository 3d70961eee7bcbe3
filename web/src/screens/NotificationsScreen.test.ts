import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type * as notif from '../lib/api-notifications';
import { queryClient } from '../lib/query';
import { session } from '../lib/session.svelte';
import { stubApi, type StubApi } from '../test-api';
import { expectNoSeriousAxeViolations } from '../test-axe';
import NotificationsScreen from './NotificationsScreen.svelte';

const channels: notif.Channel[] = [
  { id: 1, type: 'webhook', name: 'hook', enabled: true, config: { url: '********' }, eventTypes: [], lastSentAt: '2026-01-01T00:00:00Z' },
  {
    id: 2,
    type: 'smtp',
    name: 'ops mail',
    enabled: true,
    config: { host: 'mail.example', port: 587, username: 'berth', password: '********', from_email: 'b@x.test', to_emails: ['ops@x.test'] },
    eventTypes: ['container_exited'],
    lastError: 'attempt 5 of 5: connection refused',
  },
];

let api: StubApi;
beforeEach(() => {
  queryClient.clear();
  session.session = { authenticated: false, authEnabled: false };
  session.environments = [
    { id: 1, name: 'local', connectionType: 'socket' },
    { id: 2, name: 'prod', connectionType: 'socket' },
  ];
  session.envId = 1;
  const subs = [{ id: 9, environmentId: 1, notificationId: 1, enabled: true, eventTypes: [], channelName: 'hook', channelType: 'webhook' }];
  api = stubApi({
    'GET /api/notifications': channels,
    'POST /api/notifications': (c: { body: unknown }) => ({ id: 3, ...(c.body as object) }),
    'PUT /api/notifications/2': (c: { body: unknown }) => ({ id: 2, ...(c.body as object) }),
    'DELETE /api/notifications/1': { success: true },
    'POST /api/notifications/1/test': { success: true },
    'POST /api/notifications/test': { success: true },
    'GET /api/environments/1/notifications': subs,
    'GET /api/environments/2/notifications': [],
    'POST /api/environments/1/notifications': {},
    'DELETE /api/environments/1/notifications/1': { success: true },
  });
});
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  vi.clearAllMocks();
});

describe('NotificationsScreen', () => {
  it('lists the channels with their delivery state and passes axe', async () => {
    const { container } = render(NotificationsScreen);
    expect(screen.getByRole('heading', { level: 1, name: 'Notifications' })).toBeTruthy();
    const table = await screen.findByRole('table');
    const rows = within(table).getAllByRole('row').slice(1);
    expect(rows.map((r) => within(r).getAllByRole('cell')[0].textContent?.trim())).toEqual(['hook', 'ops mail']);
    expect(within(rows[0]).getByText('delivered')).toBeTruthy();
    expect(within(rows[1]).getByText('failing')).toBeTruthy();
    expect(within(rows[1]).getByText('attempt 5 of 5: connection refused')).toBeTruthy();
    expect(within(rows[1]).getByText('Container exited')).toBeTruthy();
    await expectNoSeriousAxeViolations(container);
  });

  it('deletes a channel and says so', async () => {
    render(NotificationsScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Delete hook' }));
    await fireEvent.click(within(screen.getByRole('dialog')).getByRole('button', { name: 'Delete' }));
    expect(await screen.findByText('Channel hook deleted.')).toBeTruthy();
    expect(api.called('DELETE /api/notifications/1')).toHaveLength(1);
  });

  it('tests a saved channel from its row', async () => {
    api.routes['POST /api/notifications/1/test'] = { success: false, error: 'the service answered 502 Bad Gateway' };
    render(NotificationsScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Test hook' }));
    expect(await screen.findByText('the service answered 502 Bad Gateway')).toBeTruthy();
    expect(api.called('POST /api/notifications/1/test')).toHaveLength(1);
    api.routes['POST /api/notifications/1/test'] = { success: true };
    await fireEvent.click(screen.getByRole('button', { name: 'Test hook' }));
    expect(await screen.findByText('sent')).toBeTruthy();
  });

  it('adds a webhook channel taking chosen events', async () => {
    const { container } = render(NotificationsScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Add channel' }));
    const dialog = screen.getByRole('dialog', { name: 'Add a notification channel' });
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Save' }));
    expect(within(dialog).getByRole('alert').textContent).toContain('Enter a name');
    await fireEvent.input(within(dialog).getByLabelText('Name'), { target: { value: 'alerts' } });
    await fireEvent.input(within(dialog).getByLabelText('Webhook URL'), { target: { value: 'https://hooks.example/abc' } });
    await fireEvent.click(within(dialog).getByLabelText('Container out of memory'));
    await expectNoSeriousAxeViolations(container);
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Send a test' }));
    expect(await within(dialog).findByText('Test message sent.')).toBeTruthy();
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Save' }));
    await waitFor(() =>
      expect(api.called('POST /api/notifications').map((c) => c.body)).toEqual([
        {
          type: 'webhook',
          name: 'alerts',
          enabled: true,
          config: { url: 'https://hooks.example/abc' },
          eventTypes: ['container_oom'],
        },
      ]),
    );
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    expect(screen.getByText('Channel alerts added.')).toBeTruthy();
  });

  it('edits an SMTP channel keeping the stored password unless a new one is typed', async () => {
    render(NotificationsScreen);
    await screen.findByRole('table');
    await fireEvent.click(screen.getByRole('button', { name: 'Edit ops mail' }));
    const dialog = screen.getByRole('dialog', { name: 'Edit ops mail' });
    const pw = within(dialog).getByLabelText('Password') as HTMLInputElement;
    expect(pw.value).toBe('');
    expect(pw.placeholder).toBe('stored, hidden');
    await fireEvent.input(within(dialog).getByLabelText('SMTP host'), { target: { value: 'mail2.example' } });
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(api.called('PUT /api/notifications/2')).toHaveLength(1));
    const body = api.called('PUT /api/notifications/2')[0].body as notif.ChannelInput;
    expect(body.config).toMatchObject({ host: 'mail2.example', port: 587, password: '********', to_emails: ['ops@x.test'] });
    expect(body.eventTypes).toEqual(['container_exited']);
  });

  it('subscribes and unsubscribes the selected environment', async () => {
    render(NotificationsScreen);
    await screen.findByRole('table');
    const section = screen.getByRole('region', { name: 'Environment subscriptions' });
    const hook = (await within(section).findByLabelText('Notify hook (Webhook)')) as HTMLInputElement;
    await waitFor(() => expect(hook.checked).toBe(true));
    await fireEvent.click(within(section).getByLabelText('Notify ops mail (Email (SMTP))'));
    await waitFor(() => expect(api.called('POST /api/environments/1/notifications').map((c) => c.body)).toEqual([{ notificationId: 2, eventTypes: [] }]));
    await waitFor(() => expect(hook.disabled).toBe(false));
    await fireEvent.click(hook);
    await waitFor(() => expect(api.called('DELETE /api/environments/1/notifications/1')).toHaveLength(1));
    await fireEvent.change(within(section).getByLabelText('Environment'), { target: { value: '2' } });
    await waitFor(() => expect(api.called('GET /api/environments/2/notifications')).toHaveLength(1));
  });

  it('shows the subscriptions of the environment selected after it opened', async () => {
    // A reload of /notifications: the screen opens before the environments arrive.
    session.environments = [];
    session.envId = null;
    render(NotificationsScreen);
    await screen.findByRole('table');
    session.environments = [{ id: 1, name: 'local', connectionType: 'socket' }];
    session.envId = 1;
    const section = screen.getByRole('region', { name: 'Environment subscriptions' });
    const hook = (await within(section).findByLabelText('Notify hook (Webhook)')) as HTMLInputElement;
    await waitFor(() => expect(hook.checked).toBe(true));
    expect(api.called('GET /api/environments/1/notifications').length).toBeGreaterThan(0);
  });
});
