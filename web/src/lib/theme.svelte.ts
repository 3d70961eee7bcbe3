// Light/dark theme: the user's choice is kept in localStorage; without one the
// console follows prefers-color-scheme (and its changes).
export type Theme = 'light' | 'dark';

export const THEME_KEY = 'berth.theme'; // also read by public/theme-init.js

interface Env {
  storage: Pick<Storage, 'getItem' | 'setItem' | 'removeItem'> | null;
  media: MediaQueryList | null;
  root: HTMLElement | null;
}

function defaultEnv(): Env {
  let storage: Env['storage'] = null;
  try {
    storage = window.localStorage;
  } catch {
    storage = null;
  }
  const media = typeof window.matchMedia === 'function' ? window.matchMedia('(prefers-color-scheme: dark)') : null;
  return { storage, media, root: document.documentElement };
}

function readStored(storage: Env['storage']): Theme | null {
  try {
    const v = storage?.getItem(THEME_KEY);
    return v === 'light' || v === 'dark' ? v : null;
  } catch {
    return null;
  }
}

export class ThemeStore {
  /** The explicit choice, or null to follow the system. */
  choice: Theme | null = $state(null);
  system: Theme = $state('light');
  current: Theme = $derived(this.choice ?? this.system);

  #env: Env;

  constructor(env: Env = defaultEnv()) {
    this.#env = env;
    this.choice = readStored(env.storage);
    this.system = env.media?.matches ? 'dark' : 'light';
    env.media?.addEventListener?.('change', (e) => {
      this.system = e.matches ? 'dark' : 'light';
      this.#apply();
    });
    this.#apply();
  }

  set(theme: Theme | null): void {
    this.choice = theme;
    try {
      if (theme) this.#env.storage?.setItem(THEME_KEY, theme);
      else this.#env.storage?.removeItem(THEME_KEY);
    } catch {
      // private mode: the choice lasts for this page only
    }
    this.#apply();
  }

  toggle(): void {
    this.set(this.current === 'dark' ? 'light' : 'dark');
  }

  #apply(): void {
    const root = this.#env.root;
    if (!root) return;
    root.dataset.theme = this.current;
    root.style.colorScheme = this.current;
  }
}

export const theme = new ThemeStore();
