import { describe, expect, it } from 'vitest';
import { THEME_KEY, ThemeStore } from './theme.svelte';

function memoryStorage(init: Record<string, string> = {}) {
  const m = new Map(Object.entries(init));
  return {
    getItem: (k: string) => m.get(k) ?? null,
    setItem: (k: string, v: string) => void m.set(k, v),
    removeItem: (k: string) => void m.delete(k),
    map: m,
  };
}

function media(matches: boolean) {
  const listeners: ((e: { matches: boolean }) => void)[] = [];
  return {
    matches,
    addEventListener: (_: string, fn: (e: { matches: boolean }) => void) => listeners.push(fn),
    fire(m: boolean) {
      listeners.forEach((fn) => fn({ matches: m }));
    },
  };
}

function make(stored: Record<string, string>, dark: boolean) {
  const storage = memoryStorage(stored);
  const mq = media(dark);
  const root = document.createElement('html');
  const store = new ThemeStore({ storage, media: mq as unknown as MediaQueryList, root });
  return { store, storage, mq, root };
}

describe('ThemeStore', () => {
  it('follows prefers-color-scheme without a stored choice', () => {
    const { store, root, mq } = make({}, true);
    expect(store.choice).toBeNull();
    expect(store.current).toBe('dark');
    expect(root.dataset.theme).toBe('dark');
    mq.fire(false);
    expect(store.current).toBe('light');
    expect(root.dataset.theme).toBe('light');
  });

  it('prefers the stored choice over the system', () => {
    const { store, root } = make({ [THEME_KEY]: 'light' }, true);
    expect(store.current).toBe('light');
    expect(root.dataset.theme).toBe('light');
  });

  it('ignores junk in storage', () => {
    const { store } = make({ [THEME_KEY]: 'purple' }, false);
    expect(store.choice).toBeNull();
    expect(store.current).toBe('light');
  });

  it('toggle persists the opposite theme', () => {
    const { store, storage, root, mq } = make({}, false);
    store.toggle();
    expect(store.current).toBe('dark');
    expect(storage.map.get(THEME_KEY)).toBe('dark');
    expect(root.dataset.theme).toBe('dark');
    expect(root.style.colorScheme).toBe('dark');
    mq.fire(false); // an explicit choice wins over system changes
    expect(store.current).toBe('dark');
    store.toggle();
    expect(storage.map.get(THEME_KEY)).toBe('light');
    store.set(null);
    expect(storage.map.has(THEME_KEY)).toBe(false);
  });

  it('survives a storage that throws', () => {
    const storage = {
      getItem: () => {
        throw new Error('denied');
      },
      setItem: () => {
        throw new Error('denied');
      },
      removeItem: () => {},
    };
    const store = new ThemeStore({ storage, media: null, root: null });
    store.toggle();
    expect(store.current).toBe('dark');
  });
});
