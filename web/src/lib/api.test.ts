import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import * as api from './api';
import { ApiError, buildUrl, onUnauthorized } from './api';

function reply(status: number, body: unknown, statusText = '') {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return new Response(text, { status, statusText, headers: { 'Content-Type': 'application/json' } });
}

let fetchMock: ReturnType<typeof vi.fn>;

beforeEach(() => {
  fetchMock = vi.fn();
  vi.stubGlobal('fetch', fetchMock);
});
afterEach(() => {
  vi.unstubAllGlobals();
  onUnauthorized(null);
});

describe('request', () => {
  it('sends same-origin credentials and JSON, and decodes the answer', async () => {
    fetchMock.mockResolvedValue(reply(200, [{ id: 'abc', name: 'web', image: 'nginx', state: 'running', status: 'Up' }]));
    const list = await api.request<{ name: string }[]>('GET', '/api/containers', { query: { env: 3, all: true } });
    expect(list[0].name).toBe('web');
    const [url, init] = fetchMock.mock.calls[0];
    expect(url).toBe('/api/containers?env=3&all=true');
    expect(init.credentials).toBe('same-origin');
    expect(init.method).toBe('GET');
    expect(init.headers.Accept).toBe('application/json');
  });

  it('posts a JSON body', async () => {
    fetchMock.mockResolvedValue(reply(200, { success: true, user: { id: 1, username: 'admin', isAdmin: true } }));
    await api.request('POST', '/api/auth/login', { body: { username: 'admin', password: 'pw', provider: 'ldap:1' } });
    const [url, init] = fetchMock.mock.calls[0];
    expect(url).toBe('/api/auth/login');
    expect(init.method).toBe('POST');
    expect(init.headers['Content-Type']).toBe('application/json');
    expect(JSON.parse(init.body)).toEqual({ username: 'admin', password: 'pw', provider: 'ldap:1' });
  });

  it('throws ApiError with the server message, status and details', async () => {
    fetchMock.mockResolvedValue(reply(500, { error: 'Failed to create volume', details: 'exists' }));
    const err = await api.request<never>('GET', '/api/environments').catch((e: ApiError) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err.status).toBe(500);
    expect(err.message).toBe('Failed to create volume');
    expect(err.details).toBe('exists');
  });

  it('falls back to message, then to the status text', async () => {
    fetchMock.mockResolvedValueOnce(reply(403, { message: 'nope' }));
    await expect(api.request('GET', '/api/environments')).rejects.toThrow('nope');
    fetchMock.mockResolvedValueOnce(reply(502, '', 'Bad Gateway'));
    await expect(api.request('GET', '/api/environments')).rejects.toMatchObject({ status: 502, message: 'Bad Gateway' });
  });

  it('maps a network failure to status 0', async () => {
    fetchMock.mockRejectedValue(new TypeError('Failed to fetch'));
    await expect(api.request('GET', '/api/auth/session')).rejects.toMatchObject({ status: 0, message: 'Cannot reach the Berth server' });
  });

  it('calls the 401 hook for an expired session', async () => {
    const hook = vi.fn();
    onUnauthorized(hook);
    fetchMock.mockResolvedValue(reply(401, { error: 'Unauthorized', message: 'Authentication required' }));
    await expect(api.request('GET', '/api/containers', { query: { env: 1 } })).rejects.toMatchObject({ status: 401, message: 'Unauthorized' });
    expect(hook).toHaveBeenCalledTimes(1);
    expect(hook.mock.calls[0][0]).toBeInstanceOf(ApiError);
  });

  it('does not call the 401 hook for a call whose 401 is an answer (sign-in, setup, session)', async () => {
    const hook = vi.fn();
    onUnauthorized(hook);
    fetchMock.mockResolvedValue(reply(401, { error: 'Invalid username or password' }));
    await expect(api.request('POST', '/api/auth/login', { body: {}, redirectOn401: false })).rejects.toThrow('Invalid username or password');
    fetchMock.mockResolvedValue(reply(401, { error: 'Authentication required' }));
    await expect(api.request('GET', '/api/auth/session', { redirectOn401: false })).rejects.toThrow('Authentication required');
    expect(hook).not.toHaveBeenCalled();
  });
});

describe('endpoints', () => {
  it('sends the headers given with its own', async () => {
    fetchMock.mockResolvedValue(reply(201, { id: 1, username: 'admin', isAdmin: true }));
    await api.request('POST', '/api/users', { body: { username: 'admin' }, headers: { 'X-Setup-Token': 'tok' } });
    const [url, init] = fetchMock.mock.calls[0];
    expect(url).toBe('/api/users');
    expect(init.headers['X-Setup-Token']).toBe('tok');
    expect(init.headers.Accept).toBe('application/json');
  });

  it('sends the path as given and leaves out empty query values', async () => {
    fetchMock.mockImplementation(() => Promise.resolve(reply(200, { success: true })));
    await api.request('POST', `/api/containers/${encodeURIComponent('my app')}/restart`, { query: { env: 2, t: undefined } });
    expect(fetchMock.mock.calls.map(([u, i]) => `${i.method} ${u}`)).toEqual(['POST /api/containers/my%20app/restart?env=2']);
  });

  it('buildUrl drops empty values', () => {
    expect(buildUrl('/x', { a: 1, b: undefined, c: null, d: '' })).toBe('/x?a=1');
    expect(buildUrl('/x')).toBe('/x');
  });
});
