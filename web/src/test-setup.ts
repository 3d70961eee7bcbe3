// jsdom lacks matchMedia; the theme store reads it.
if (typeof window !== 'undefined' && typeof window.matchMedia !== 'function') {
  window.matchMedia = (query: string) =>
    ({
      matches: false,
      media: query,
      onchange: null,
      addEventListener() {},
      removeEventListener() {},
      addListener() {},
      removeListener() {},
      dispatchEvent: () => false,
    }) as unknown as MediaQueryList;
}

// jsdom does no layout: a Range has no client rects, which the code editor
// measures selections with (it logged a TypeError per measure).
if (typeof Range !== 'undefined' && typeof Range.prototype.getClientRects !== 'function') {
  Range.prototype.getClientRects = () => ({ length: 0, item: () => null, [Symbol.iterator]: [][Symbol.iterator] }) as unknown as DOMRectList;
  Range.prototype.getBoundingClientRect = () => new DOMRect(0, 0, 0, 0);
}

// The console's one query client is a module singleton: no cached read of
// one test reaches the next. Screens render once the session is known: by
// default one with authentication off (everything allowed); a test of
// permissions sets its own. Imported when the hooks run, after the test file's
// vi.mock calls, so these modules see the test's mocks.
import { afterEach, beforeEach } from 'vitest';
afterEach(async () => {
  const { queryClient } = await import('./lib/query');
  queryClient.clear();
});
beforeEach(async () => {
  const { session } = await import('./lib/session.svelte');
  session.session = { authenticated: false, authEnabled: false };
  session.envHealth = null;
});
