import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import * as tpl from '../lib/api-templates';
import { ApiError } from '../lib/api';
import { queryClient } from '../lib/query';
import { router } from '../lib/router.svelte';
import { session } from '../lib/session.svelte';
import { stubApi, type StubApi } from '../test-api';
import { expectNoSeriousAxeViolations } from '../test-axe';
import { emptyForm } from '../components/containers/create-form';
import TemplatesScreen from './TemplatesScreen.svelte';

vi.mock('../lib/api-templates', async (importOriginal) => {
  const real = await importOriginal<typeof import('../lib/api-templates')>();
  return {
    ...real,
    deployTemplate: vi.fn(), // a streamed deploy
  };
});

const base = { sourceId: 'builtin', sourceName: 'Built-in', ports: [], administratorOnly: false };
const templates: tpl.AppTemplate[] = [
  {
    ...base,
    id: 'builtin:postgres',
    type: 1,
    title: 'PostgreSQL',
    name: 'postgres',
    description: 'Relational database',
    categories: ['database'],
    image: 'postgres:16',
    env: [
      { name: 'POSTGRES_USER', label: 'User', default: 'postgres' },
      { name: 'POSTGRES_PASSWORD', label: 'Password' },
      { name: 'MODE', label: 'Mode', select: [{ text: 'Fast', value: 'fast' }, { text: 'Safe', value: 'safe', default: true }] },
      { name: 'FIXED', default: 'x', preset: true },
    ],
  },
  { ...base, id: '3:0', sourceId: '3', sourceName: 'mine', type: 1, title: 'Nginx', description: 'Web server', categories: ['webserver'], env: [] },
  {
    ...base,
    id: '3:1',
    sourceId: '3',
    sourceName: 'mine',
    type: 3,
    title: 'Repo app',
    description: 'From git',
    categories: ['webserver'],
    env: [],
    repository: { url: 'https://example.com/r', stackfile: 'c.yml' },
  },
];
const sources: tpl.TemplateSource[] = [
  { id: 3, name: 'mine', url: 'https://example.com/t.json', enabled: true, lastError: null, lastFetchedAt: null, templateCount: 2 },
  { id: 4, name: 'broken', url: '/srv/bad.json', enabled: true, lastError: 'invalid template list JSON: unexpected EOF', lastFetchedAt: null, templateCount: 0 },
];

let api: StubApi;
beforeEach(() => {
  queryClient.clear();
  session.session = { authenticated: false, authEnabled: false };
  api = stubApi({
    'GET /api/templates': templates,
    'GET /api/templates/sources': sources,
    'POST /api/templates/sources': (c: { body: unknown }) => ({ id: 5, enabled: true, lastError: null, lastFetchedAt: null, templateCount: 7, ...(c.body as object) }),
    'PUT /api/templates/sources': (c: { body: unknown }) => ({ ...sources[0], ...(c.body as object) }),
    'DELETE /api/templates/sources': { success: true },
  });
  session.environments = [
    { id: 1, name: 'local', connectionType: 'socket' },
    { id: 2, name: 'edge', connectionType: 'socket' },
  ];
  session.envId = 1;
});
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  vi.clearAllMocks();
});

const cardTitles = () => within(screen.getByRole('list', { name: 'Templates' })).getAllByRole('heading', { level: 2 }).map((h) => h.textContent);

describe('TemplatesScreen', () => {
  it('shows only logos Berth serves; a remote logo URL shows the local placeholder (no request leaves the browser)', { timeout: 60_000 }, async () => {
    const withLogos = structuredClone(templates);
    // logo is the list's remote URL; logoUrl is where Berth serves its copy.
    withLogos[0].logo = 'https://raw.githubusercontent.com/docker-library/docs/master/postgres/logo.png';
    withLogos[1].logo = 'https://example.com/nginx.png';
    withLogos[1].logoUrl = '/api/templates/builtin:nginx/logo';
    withLogos[2].logoUrl = '//evil.example/x.png';
    api.routes['GET /api/templates'] = withLogos;
    const { container } = render(TemplatesScreen);
    await screen.findByRole('list', { name: 'Templates' });
    const imgs = [...container.querySelectorAll('.card img')].map((i) => i.getAttribute('src'));
    expect(imgs).toEqual(['/api/templates/builtin:nginx/logo']);
    const placeholders = [...container.querySelectorAll('.card .logo-ph')].map((p) => p.textContent);
    expect(placeholders).toEqual(['P', 'R']);
    // A logo Berth cannot serve falls back to the placeholder, not a broken image.
    await fireEvent.error(container.querySelector('.card img')!);
    expect(container.querySelectorAll('.card img')).toHaveLength(0);
    expect([...container.querySelectorAll('.card .logo-ph')].map((p) => p.textContent)).toEqual(['P', 'N', 'R']);
  });

  it('shows the placeholder while Berth fetches a logo, and the logo once it is cached', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    try {
      const pending = structuredClone(templates);
      pending[0].logo = 'https://example.com/postgres.png';
      pending[0].logoPending = true;
      api.routes['GET /api/templates'] = pending;
      const { container } = render(TemplatesScreen);
      await screen.findByRole('list', { name: 'Templates' });
      expect(container.querySelectorAll('.card img')).toHaveLength(0);
      const cached = structuredClone(templates);
      cached[0].logo = pending[0].logo;
      cached[0].logoUrl = `/api/templates/${cached[0].id}/logo`;
      api.routes['GET /api/templates'] = cached;
      await vi.advanceTimersByTimeAsync(1600);
      await waitFor(() => expect([...container.querySelectorAll('.card img')].map((i) => i.getAttribute('src'))).toEqual([cached[0].logoUrl]));
      // nothing pending any more: not read again
      const reads = api.called('GET /api/templates').length;
      await vi.advanceTimersByTimeAsync(5000);
      expect(api.called('GET /api/templates')).toHaveLength(reads);
    } finally {
      vi.useRealTimers();
    }
  });

  it('shows the templates as cards, filtered by search and category', { timeout: 60_000 }, async () => {
    const { container } = render(TemplatesScreen);
    expect(screen.getByRole('heading', { level: 1, name: 'Templates' })).toBeTruthy();
    await screen.findByRole('list', { name: 'Templates' });
    expect(cardTitles()).toEqual(['PostgreSQL', 'Nginx', 'Repo app']);
    // A repository template deploys as a git stack of its repository.
    expect(screen.getByRole('button', { name: 'Deploy Repo app' })).toBeTruthy();
    expect(screen.getByText('Deployed as a git stack of https://example.com/r')).toBeTruthy();
    await fireEvent.change(screen.getByLabelText('Category'), { target: { value: 'webserver' } });
    expect(cardTitles()).toEqual(['Nginx', 'Repo app']);
    await fireEvent.input(screen.getByRole('searchbox'), { target: { value: 'nginx' } });
    expect(cardTitles()).toEqual(['Nginx']);
    await fireEvent.change(screen.getByLabelText('Category'), { target: { value: 'database' } });
    expect(await screen.findByText('No template matches.')).toBeTruthy();
    await expectNoSeriousAxeViolations(container);
  });

  it('deploys with the template variables and opens the stack', async () => {
    vi.mocked(tpl.deployTemplate).mockImplementation(async (_b, onLine) => {
      onLine('Container db-1 Started');
      return { success: true, started: true, output: '' };
    });
    const nav = vi.spyOn(router, 'navigate').mockImplementation(() => {});
    render(TemplatesScreen);
    await fireEvent.click(await screen.findByRole('button', { name: 'Deploy PostgreSQL' }));
    const dialog = screen.getByRole('dialog', { name: 'Deploy PostgreSQL' });
    expect((within(dialog).getByLabelText('Stack name') as HTMLInputElement).value).toBe('postgres');
    expect((within(dialog).getByLabelText('User') as HTMLInputElement).value).toBe('postgres');
    expect((within(dialog).getByLabelText('Mode') as HTMLSelectElement).value).toBe('safe');
    expect(within(dialog).queryByLabelText('FIXED')).toBeNull();
    expect((within(dialog).getByLabelText('Password') as HTMLInputElement).type).toBe('password');
    await fireEvent.input(within(dialog).getByLabelText('Stack name'), { target: { value: 'db' } });
    await fireEvent.input(within(dialog).getByLabelText('Password'), { target: { value: 'pw' } });
    await fireEvent.change(within(dialog).getByLabelText('Environment'), { target: { value: '2' } });
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Deploy' }));
    await waitFor(() => expect(nav).toHaveBeenCalledWith('/stacks/db'));
    expect(vi.mocked(tpl.deployTemplate).mock.calls[0][0]).toEqual({
      templateId: 'builtin:postgres',
      stackName: 'db',
      environmentId: 2,
      env: { POSTGRES_USER: 'postgres', POSTGRES_PASSWORD: 'pw', MODE: 'safe' },
    });
    expect(session.envId).toBe(2);
    nav.mockRestore();
  });

  it('keeps the dialog open with the error of a refused or failed deploy', async () => {
    vi.mocked(tpl.deployTemplate).mockRejectedValueOnce(new ApiError(409, "Stack 'nginx' already exists"));
    vi.mocked(tpl.deployTemplate).mockResolvedValueOnce({ success: false, error: 'Failed to deploy stack: pull access denied' });
    render(TemplatesScreen);
    await fireEvent.click(await screen.findByRole('button', { name: 'Deploy Nginx' }));
    const dialog = screen.getByRole('dialog');
    await fireEvent.input(within(dialog).getByLabelText('Stack name'), { target: { value: 'Bad Name' } });
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Deploy' }));
    expect((await within(dialog).findByRole('alert')).textContent).toContain('lowercase letters');
    expect(tpl.deployTemplate).not.toHaveBeenCalled();
    await fireEvent.input(within(dialog).getByLabelText('Stack name'), { target: { value: 'nginx' } });
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Deploy' }));
    await waitFor(() => expect(within(dialog).getByRole('alert').textContent).toContain("Stack 'nginx' already exists"));
    await fireEvent.click(within(dialog).getByRole('button', { name: 'Deploy' }));
    await waitFor(() => expect(within(dialog).getByRole('alert').textContent).toContain('pull access denied'));
  });

  it('manages sources and shows a source that cannot be read', async () => {
    render(TemplatesScreen);
    const table = await screen.findByRole('table', { name: 'Template sources' });
    expect(within(table).getByText('invalid template list JSON: unexpected EOF')).toBeTruthy();
    await fireEvent.input(screen.getByLabelText('Source name'), { target: { value: 'more' } });
    await fireEvent.input(screen.getByLabelText('URL or absolute file path'), { target: { value: 'https://example.com/more.json' } });
    await fireEvent.click(screen.getByRole('button', { name: 'Add source' }));
    await waitFor(() => expect(api.called('POST /api/templates/sources').map((c) => c.body)).toEqual([{ name: 'more', url: 'https://example.com/more.json' }]));
    expect(await screen.findByText('Source more added with 7 templates.')).toBeTruthy();
    // The change refreshes the catalogue and the sources by itself.
    await waitFor(() => expect(api.called('GET /api/templates').length).toBeGreaterThan(1));
    await fireEvent.click(screen.getByRole('button', { name: 'Disable mine' }));
    await waitFor(() => expect(api.called('PUT /api/templates/sources').map((c) => c.body)).toEqual([{ id: 3, enabled: false }]));
    expect(await screen.findByText('Source mine disabled.')).toBeTruthy();
    await fireEvent.click(screen.getByRole('button', { name: 'Remove broken' }));
    await fireEvent.click(within(screen.getByRole('dialog')).getByRole('button', { name: 'Remove' }));
    await waitFor(() => expect(api.called('DELETE /api/templates/sources').map((c) => c.query)).toEqual([{ id: '4' }]));
    expect(await screen.findByText('Source broken removed.')).toBeTruthy();
  });

  it('refreshes the sources on demand and says why a read failed, with Retry', async () => {
    api.routes['GET /api/templates'] = () => {
      throw new ApiError(403, 'Permission denied');
    };
    render(TemplatesScreen);
    expect((await screen.findByRole('alert')).textContent).toContain('Templates could not be listed: Permission denied');
    api.routes['GET /api/templates'] = templates;
    await fireEvent.click(screen.getByRole('button', { name: 'Retry' }));
    await screen.findByRole('list', { name: 'Templates' });
    await fireEvent.click(screen.getByRole('button', { name: 'Refresh' }));
    await waitFor(() => expect(api.called('GET /api/templates').some((c) => c.query.refresh === 'true')).toBe(true));
  });
});

describe('applyConfigSet', () => {
  it('adds what the form lacks and leaves secrets to fill in', () => {
    const form = { ...emptyForm(), env: [{ key: 'TZ', value: 'Europe/Paris' }], ports: [{ host: '81', container: '80', protocol: 'tcp' as const }] };
    const set: tpl.ConfigSet = {
      id: 1,
      name: 'web',
      description: '',
      envVars: [
        { key: 'TZ', value: 'UTC', isSecret: false },
        { key: 'LOG', value: 'debug', isSecret: false },
        { key: 'DB_PASSWORD', value: '***', isSecret: true },
      ],
      labels: [{ key: 'team', value: 'web' }],
      ports: [{ containerPort: '80', hostPort: '8080', protocol: 'tcp' }, { containerPort: '53', protocol: 'udp' }],
      volumes: [
      { hostPath: 'data', containerPath: '/data', mode: 'rw' },
      { hostPath: '/srv/conf', containerPath: '/etc/conf', mode: 'ro' },
    ],
      networkMode: 'bridge',
      restartPolicy: 'unless-stopped',
    };
    const { form: out, skippedSecrets } = tpl.applyConfigSet(form, set);
    expect(out.env).toEqual([
      { key: 'TZ', value: 'Europe/Paris' },
      { key: 'LOG', value: 'debug' },
      { key: 'DB_PASSWORD', value: '' },
    ]);
    expect(skippedSecrets).toEqual(['DB_PASSWORD']);
    expect(out.labels).toEqual([{ key: 'team', value: 'web' }]);
    expect(out.ports).toEqual([
      { host: '81', container: '80', protocol: 'tcp' },
      { host: '', container: '53', protocol: 'udp' },
    ]);
    expect(out.volumes).toEqual([
      { source: 'data', target: '/data', readOnly: false },
      { source: '/srv/conf', target: '/etc/conf', readOnly: true },
    ]);
    expect(out.network).toBe('bridge');
    expect(out.restartPolicy).toBe('unless-stopped');
  });
});
