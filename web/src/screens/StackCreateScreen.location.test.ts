import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { queryClient } from '../lib/query';
import { session } from '../lib/session.svelte';
import { stubApi, type StubApi, type StubCall } from '../test-api';
import { expectNoSeriousAxeViolations } from '../test-axe';
import StackCreateScreen from './StackCreateScreen.svelte';

// The location field of a new stack: checked by POST /api/stacks/validate-path
// and completed from GET /api/stacks/path-hints (issue 15).
// CodeMirror needs layout jsdom lacks: a text area stands in (editor-test-double).
vi.mock('../components/stacks/codemirror', () => import('../components/stacks/editor-test-double'));

const compose = 'services:\n  web:\n    image: berth-test/busybox:1\n';

/** A server-sent event stream of JSON events. */
const sse = (events: unknown[]) =>
  new Response(events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join(''), { status: 200, headers: { 'Content-Type': 'text/event-stream' } });

let api: StubApi;
beforeEach(() => {
  queryClient.clear();
  session.session = { authenticated: false, authEnabled: false };
  session.environments = [{ id: 1, name: 'local', connectionType: 'socket' }];
  session.envId = 1;
  api = stubApi({
    'GET /api/stacks/default-path': (c: StubCall) => ({
      name: c.query.name,
      directory: `/data/stacks/1/${c.query.name}`,
      composePath: `/data/stacks/1/${c.query.name}/compose.yaml`,
      envPath: `/data/stacks/1/${c.query.name}/.env`,
      exists: false,
      taken: false,
    }),
    'GET /api/stacks/path-hints': {
      basePath: '/data/stacks/1',
      directories: ['/data/stacks/1/shop', '/srv/stacks'],
      composeFiles: ['/srv/stacks/blog/compose.yaml'],
      truncated: false,
    },
    'POST /api/stacks/validate-path': (c: StubCall) => {
      const p = (c.body as { path: string }).path;
      return p.startsWith('/')
        ? { valid: true, directory: p, exists: false, writable: true, hasComposeFile: false }
        : { valid: false, message: `Invalid path "${p}": an absolute path is required`, directory: '', exists: false, writable: false, hasComposeFile: false };
    },
    'POST /api/stacks': () => sse([{ success: true, started: true, output: '' }]),
  });
});
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

describe('StackCreateScreen (location)', () => {
  it('shows the default location for the name and offers the path hints', async () => {
    const { container } = render(StackCreateScreen);
    await fireEvent.input(screen.getByLabelText('Name'), { target: { value: 'demo' } });
    await waitFor(() => expect(screen.getByText('Default: /data/stacks/1/demo')).toBeTruthy());
    expect(api.called('GET /api/stacks/default-path').at(-1)?.query).toEqual({ env: '1', name: 'demo' });
    const input = screen.getByLabelText('Location (optional)') as HTMLInputElement;
    expect(input.placeholder).toBe('/data/stacks/1/demo');
    await waitFor(() => expect(container.querySelectorAll('#stack-location-hints option').length).toBe(3));
    const options = Array.from(container.querySelectorAll<HTMLOptionElement>('#stack-location-hints option')).map((o) => o.value);
    expect(options).toEqual(['/data/stacks/1/shop', '/srv/stacks', '/srv/stacks/blog/compose.yaml']);
    expect(input.getAttribute('list')).toBe('stack-location-hints');
    await expectNoSeriousAxeViolations(container);
  }, 20_000);

  it('checks a typed location with the server and refuses to deploy to an invalid one', async () => {
    render(StackCreateScreen);
    await fireEvent.input(screen.getByLabelText('Name'), { target: { value: 'demo' } });
    const input = screen.getByLabelText('Location (optional)') as HTMLInputElement;
    await fireEvent.input(input, { target: { value: 'srv/demo' } });
    await waitFor(() => expect(screen.getByText('Invalid path "srv/demo": an absolute path is required')).toBeTruthy());
    expect(api.called('POST /api/stacks/validate-path').at(-1)).toMatchObject({ query: { env: '1' }, body: { path: 'srv/demo' } });
    expect(input.getAttribute('aria-invalid')).toBe('true');
    await fireEvent.click(screen.getByRole('button', { name: 'Deploy' }));
    expect((await screen.findByRole('alert')).textContent).toContain('Fix the location');
    expect(api.called('POST /api/stacks')).toHaveLength(0);
  });

  it('deploys to a valid location as the compose file path', async () => {
    render(StackCreateScreen);
    await fireEvent.input(screen.getByLabelText('Name'), { target: { value: 'demo' } });
    await fireEvent.input(await screen.findByRole('textbox', { name: 'Compose file' }), { target: { value: compose } });
    const input = screen.getByLabelText('Location (optional)') as HTMLInputElement;
    await fireEvent.input(input, { target: { value: '/srv/stacks/demo/' } });
    await waitFor(() => expect(screen.getByText('New directory (created on deploy); writable.')).toBeTruthy());
    expect(api.called('GET /api/stacks/path-hints').at(-1)?.query).toEqual({ env: '1', prefix: '/srv/stacks/demo/' });
    // A check only reads: it asks nothing else again.
    const hintReads = api.called('GET /api/stacks/path-hints').length;
    await new Promise((r) => setTimeout(r, 50));
    expect(api.called('GET /api/stacks/path-hints')).toHaveLength(hintReads);
    expect(api.called('POST /api/stacks/validate-path')).toHaveLength(1);
    await fireEvent.click(screen.getByRole('button', { name: 'Deploy' }));
    await waitFor(() => expect(api.called('POST /api/stacks')).toHaveLength(1));
    expect(api.called('POST /api/stacks')[0]).toMatchObject({
      query: { env: '1' },
      body: { name: 'demo', compose, start: true, envVars: [], rawEnvContent: '', composePath: '/srv/stacks/demo/compose.yaml' },
    });
    expect(await screen.findByText(/Deploy demo: done\./)).toBeTruthy();
  });
});
