// A tiny History API router: the current location as reactive state, navigate(),
// and interception of same-origin <a href="/..."> clicks so links stay plain links.
import { matchRoute, type Route } from './routes';

export class Router {
  path = $state('/');
  search = $state('');
  route: Route = $derived(matchRoute(this.path));

  /**
   * Asked before back/forward leaves the current location (a screen with
   * unsaved changes sets it); false keeps the page where it is. Links and
   * navigate() are the screen's own to intercept.
   */
  guard: ((to: string) => boolean) | null = null;

  #win: Window;
  #listeners: (() => void)[] = [];

  constructor(win: Window = window) {
    this.#win = win;
    this.#sync();
  }

  #sync(): void {
    this.path = this.#win.location.pathname;
    this.search = this.#win.location.search;
  }

  /** Query parameter of the current location. */
  param(name: string): string | null {
    return new URLSearchParams(this.search).get(name);
  }

  navigate(to: string, opts: { replace?: boolean } = {}): void {
    const url = new URL(to, this.#win.location.href);
    if (url.origin !== this.#win.location.origin) {
      this.#win.location.assign(url.href);
      return;
    }
    const target = url.pathname + url.search + url.hash;
    const current = this.#win.location.pathname + this.#win.location.search + this.#win.location.hash;
    if (target !== current) {
      if (opts.replace) this.#win.history.replaceState(null, '', target);
      else this.#win.history.pushState(null, '', target);
    }
    this.#sync();
  }

  /** Starts listening to back/forward and link clicks; returns the stop function. */
  start(): () => void {
    const onPop = () => {
      const loc = this.#win.location;
      const to = loc.pathname + loc.search + loc.hash;
      if (this.guard && loc.pathname + loc.search !== this.path + this.search && !this.guard(to)) {
        // Stay: the location the user left is put back (the history gains an entry).
        this.#win.history.pushState(null, '', this.path + this.search);
        return;
      }
      this.#sync();
    };
    const onClick = (e: MouseEvent) => this.#onClick(e);
    this.#win.addEventListener('popstate', onPop);
    this.#win.document.addEventListener('click', onClick);
    this.#listeners.push(
      () => this.#win.removeEventListener('popstate', onPop),
      () => this.#win.document.removeEventListener('click', onClick),
    );
    return () => {
      this.#listeners.forEach((f) => f());
      this.#listeners = [];
    };
  }

  #onClick(e: MouseEvent): void {
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    const a = (e.target as Element | null)?.closest?.('a');
    if (!a || !a.hasAttribute('href')) return;
    if ((a.target && a.target !== '_self') || a.hasAttribute('download') || a.dataset.external !== undefined) return;
    const url = new URL(a.href, this.#win.location.href);
    if (url.origin !== this.#win.location.origin) return;
    // Server routes (API, OIDC initiation) are real page loads.
    if (url.pathname === '/api' || url.pathname.startsWith('/api/')) return;
    e.preventDefault();
    this.navigate(url.pathname + url.search + url.hash);
  }
}

export const router = new Router();
