import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type * as tpl from '../lib/api-templates';
import { ApiError } from '../lib/api';
import { session } from '../lib/session.svelte';
import { stubApi, type StubApi } from '../test-api';
import { expectNoSeriousAxeViolations } from '../test-axe';
import LabelsScreen from './LabelsScreen.svelte';

let api: StubApi;
const defined = () => api.called('POST /api/labels').map((c) => c.body);

const labels: tpl.LabelUse[] = [
  {
    id: 1,
    label: 'production',
    color: '#ef4444',
    count: 2,
    environments: [
      { envId: 1, envName: 'local' },
      { envId: 2, envName: 'remote' },
    ],
  },
  { id: null, label: 'edge', color: null, count: 1, environments: [{ envId: 2, envName: 'remote' }] },
  { id: 2, label: 'spare', color: null, count: 0, environments: [] },
];

beforeEach(() => {
  session.session = { authenticated: true, authEnabled: true, user: { id: 1, username: 'admin', isAdmin: true } };
  api = stubApi({
    'GET /api/labels': { labels, colors: {} },
    'POST /api/labels': (c: { body: unknown }) => ({ id: 7, color: '', ...(c.body as object) }),
  });
});
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  session.session = null;
});

const cells = () =>
  within(screen.getByRole('table', { name: 'Labels' }))
    .getAllByRole('row')
    .slice(1)
    .map((r) => Array.from(r.children).map((c) => c.textContent?.replace(/\s+/g, ' ').trim()));

describe('LabelsScreen', () => {
  it('lists the labels with their counts and whether they are defined', { timeout: 60_000 }, async () => {
    const { container } = render(LabelsScreen);
    expect(screen.getByRole('heading', { level: 1, name: 'Labels' })).toBeTruthy();
    await screen.findByRole('table', { name: 'Labels' });
    expect(cells()).toEqual([
      ['production', '#ef4444', '2 environments', 'yes'],
      ['edge', 'none', '1 environment', 'no, only on environments Define'],
      ['spare', 'none', '0 environments', 'yes'],
    ]);
    await fireEvent.input(screen.getByRole('searchbox'), { target: { value: 'PROD' } });
    expect(cells().map((r) => r[0])).toEqual(['production']);
    await expectNoSeriousAxeViolations(container);
  });

  it('defines a label with a colour and lists it again', async () => {
    render(LabelsScreen);
    await screen.findByRole('table', { name: 'Labels' });
    await fireEvent.input(screen.getByLabelText('Label name'), { target: { value: ' staging ' } });
    await fireEvent.input(screen.getByLabelText('Pick a colour'), { target: { value: '#22c55e' } });
    expect((screen.getByLabelText('Colour') as HTMLInputElement).value).toBe('#22c55e');
    await fireEvent.click(screen.getByRole('button', { name: 'Define label' }));
    await waitFor(() => expect(defined()).toEqual([{ name: 'staging', color: '#22c55e' }]));
    expect(await screen.findByText('Label staging defined.')).toBeTruthy();
    await waitFor(() => expect(api.called('GET /api/labels')).toHaveLength(2));
    expect((screen.getByLabelText('Label name') as HTMLInputElement).value).toBe('');
  });

  it('defines a label carried by environments from its row, without a colour', async () => {
    render(LabelsScreen);
    await screen.findByRole('table', { name: 'Labels' });
    await fireEvent.click(screen.getByRole('button', { name: 'Define edge' }));
    const name = screen.getByLabelText('Label name') as HTMLInputElement;
    expect(name.value).toBe('edge');
    expect(document.activeElement).toBe(name);
    await fireEvent.click(screen.getByRole('button', { name: 'Define label' }));
    await waitFor(() => expect(defined()).toEqual([{ name: 'edge' }]));
  });

  it("shows the API's refusal next to the form", async () => {
    api.routes['POST /api/labels'] = () => {
      throw new ApiError(400, 'Invalid color "red": use a hex colour such as #3b82f6');
    };
    render(LabelsScreen);
    await screen.findByRole('table', { name: 'Labels' });
    await fireEvent.input(screen.getByLabelText('Label name'), { target: { value: 'x' } });
    await fireEvent.input(screen.getByLabelText('Colour'), { target: { value: 'red' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Define label' }));
    expect((await screen.findByRole('alert')).textContent).toBe(
      'The label could not be defined: Invalid color "red": use a hex colour such as #3b82f6',
    );
    expect((screen.getByLabelText('Colour') as HTMLInputElement).value).toBe('red');
  });

  it('offers no definition without settings:edit', async () => {
    session.session = {
      authenticated: true,
      authEnabled: true,
      user: { id: 2, username: 'viewer', isAdmin: false, permissions: { environments: ['view'] } },
    };
    render(LabelsScreen);
    await screen.findByRole('table', { name: 'Labels' });
    expect(screen.queryByLabelText('Label name')).toBeNull();
    expect(screen.queryByRole('button', { name: 'Define edge' })).toBeNull();
  });

  it('says why the list is missing', async () => {
    api.routes['GET /api/labels'] = () => {
      throw new ApiError(403, 'Permission denied');
    };
    render(LabelsScreen);
    expect((await screen.findByRole('alert')).textContent).toBe('Labels could not be listed: Permission denied');
  });
});
