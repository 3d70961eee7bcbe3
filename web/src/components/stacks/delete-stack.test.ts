import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../../lib/api';
import { stubApi, type StubApi } from '../../test-api';
import { deleteStackWith } from './delete-stack';

let api: StubApi;
beforeEach(() => {
  api = stubApi({
    'DELETE /api/stacks/a': { success: true },
    'POST /api/stacks/a/down': { success: true, output: '' },
  });
});
afterEach(() => vi.unstubAllGlobals());

// What reached the server, in order.
const calls = () =>
  api.calls.map((c) => (c.method === 'DELETE' ? `delete ${c.path.split('/').pop()} force=${c.query.force} env=${c.query.env}` : `${c.path.split('/').pop()} ${c.path.split('/')[3]}`));

describe('deleteStackWith', () => {
  it('removes volumes with force (the API removes named volumes only then)', async () => {
    await deleteStackWith(1, { name: 'a', status: 'running', sourceType: 'internal' }, { force: true, removeVolumes: true });
    expect(calls()).toEqual(['delete a force=true env=1']);
  });

  it('takes a running stack down first when forced but keeping its volumes', async () => {
    await deleteStackWith(1, { name: 'a', status: 'partial', sourceType: 'git' }, { force: true, removeVolumes: false });
    expect(calls()).toEqual(['down a', 'delete a force=false env=1']);
    expect(api.called('POST /api/stacks/a/down')[0].query).toEqual({ env: '1' });
  });

  it('deletes a stopped stack without force (its volumes stay)', async () => {
    await deleteStackWith(1, { name: 'a', status: 'stopped', sourceType: 'internal' }, { force: true, removeVolumes: false });
    expect(calls()).toEqual(['delete a force=false env=1']);
  });

  it('leaves a running stack to the server without force (it refuses, naming why)', async () => {
    api.routes['DELETE /api/stacks/a'] = () => {
      throw new ApiError(400, "Stack 'a' is running. Stop it first or use force=true to delete it.");
    };
    await expect(deleteStackWith(1, { name: 'a', status: 'running', sourceType: 'internal' }, { force: false, removeVolumes: false })).rejects.toThrow('Stop it first');
    expect(calls()).toEqual(['delete a force=false env=1']);
  });

  it('does not delete when taking the stack down failed', async () => {
    api.routes['POST /api/stacks/a/down'] = () => {
      throw new ApiError(500, 'engine said no');
    };
    await expect(deleteStackWith(1, { name: 'a', status: 'running', sourceType: 'internal' }, { force: true, removeVolumes: false })).rejects.toThrow('engine said no');
    expect(calls()).toEqual(['down a']);
  });

  it('only forgets an adopted external stack', async () => {
    await deleteStackWith(1, { name: 'a', status: 'running', sourceType: 'external', adopted: true }, { force: true, removeVolumes: true });
    expect(calls()).toEqual(['delete a force=false env=1']);
  });

  it('takes a compose project Berth does not manage down, and that is all', async () => {
    await deleteStackWith(1, { name: 'a', status: 'running', sourceType: 'external', adopted: false }, { force: true, removeVolumes: false });
    expect(calls()).toEqual(['down a']);
  });
});
