import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import * as stacks from '../../lib/api-stacks';
import { deleteStackWith } from './delete-stack';

vi.mock('../../lib/api-stacks', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../lib/api-stacks')>();
  return { ...real, deleteStack: vi.fn(), stackAction: vi.fn() };
});

beforeEach(() => {
  vi.mocked(stacks.deleteStack).mockResolvedValue({ success: true });
  vi.mocked(stacks.stackAction).mockResolvedValue({ success: true });
});
afterEach(() => vi.clearAllMocks());

const calls = () => [
  ...vi.mocked(stacks.stackAction).mock.calls.map((c) => `${c[2]} ${c[1]}`),
  ...vi.mocked(stacks.deleteStack).mock.calls.map((c) => `delete ${c[1]} force=${c[2]}`),
];

describe('deleteStackWith', () => {
  it('removes volumes with force (the API removes named volumes only then)', async () => {
    await deleteStackWith(1, { name: 'a', status: 'running', sourceType: 'internal' }, { force: true, removeVolumes: true });
    expect(calls()).toEqual(['delete a force=true']);
  });

  it('takes a running stack down first when forced but keeping its volumes', async () => {
    await deleteStackWith(1, { name: 'a', status: 'partial', sourceType: 'git' }, { force: true, removeVolumes: false });
    expect(calls()).toEqual(['down a', 'delete a force=false']);
  });

  it('deletes a stopped stack without force (its volumes stay)', async () => {
    await deleteStackWith(1, { name: 'a', status: 'stopped', sourceType: 'internal' }, { force: true, removeVolumes: false });
    expect(calls()).toEqual(['delete a force=false']);
  });

  it('leaves a running stack to the server without force (it refuses, naming why)', async () => {
    await deleteStackWith(1, { name: 'a', status: 'running', sourceType: 'internal' }, { force: false, removeVolumes: false });
    expect(calls()).toEqual(['delete a force=false']);
  });

  it('only forgets an adopted external stack', async () => {
    await deleteStackWith(1, { name: 'a', status: 'running', sourceType: 'external', adopted: true }, { force: true, removeVolumes: true });
    expect(calls()).toEqual(['delete a force=false']);
  });

  it('takes a compose project Berth does not manage down, and that is all', async () => {
    await deleteStackWith(1, { name: 'a', status: 'running', sourceType: 'external', adopted: false }, { force: true, removeVolumes: false });
    expect(calls()).toEqual(['down a']);
  });
});
