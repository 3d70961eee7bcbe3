import { afterEach, describe, expect, it } from 'vitest';
import { envKey, forgetFromLists, queryClient } from './query';

afterEach(() => queryClient.clear());

describe('forgetFromLists', () => {
  it('drops the removed item from the cached list of that environment only, leaving other reads alone', () => {
    queryClient.setQueryData(envKey(1, 'volumes'), [{ name: 'a' }, { name: 'b' }]);
    queryClient.setQueryData(envKey(2, 'volumes'), [{ name: 'a' }]);
    queryClient.setQueryData(envKey(1, 'volumes', 'a'), { name: 'a', driver: 'local' });

    forgetFromLists<{ name: string }>(1, 'volumes', (v) => v.name !== 'a');

    expect(queryClient.getQueryData(envKey(1, 'volumes'))).toEqual([{ name: 'b' }]);
    expect(queryClient.getQueryData(envKey(2, 'volumes'))).toEqual([{ name: 'a' }]);
    expect(queryClient.getQueryData(envKey(1, 'volumes', 'a'))).toEqual({ name: 'a', driver: 'local' });
  });
});
