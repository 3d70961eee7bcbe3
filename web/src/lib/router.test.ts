import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Router } from './router.svelte';

let router: Router;
let stop: () => void;

beforeEach(() => {
  history.replaceState(null, '', '/');
  router = new Router(window);
  stop = router.start();
});
afterEach(() => {
  stop();
  document.body.innerHTML = '';
});

// Reports whether the router took the click, then keeps jsdom from following the link.
function click(el: Element, init: MouseEventInit = {}) {
  let taken = false;
  const after = (e: Event) => {
    taken = e.defaultPrevented;
    e.preventDefault();
  };
  window.addEventListener('click', after);
  el.dispatchEvent(new MouseEvent('click', { bubbles: true, cancelable: true, button: 0, ...init }));
  window.removeEventListener('click', after);
  return { defaultPrevented: taken };
}

describe('Router', () => {
  it('reads the current location', () => {
    history.replaceState(null, '', '/containers/abc?env=2');
    const r = new Router(window);
    expect(r.route).toMatchObject({ name: 'container', params: { id: 'abc' } });
    expect(r.param('env')).toBe('2');
  });

  it('navigate pushes history and updates the route', () => {
    const before = history.length;
    router.navigate('/containers');
    expect(location.pathname).toBe('/containers');
    expect(router.route).toMatchObject({ name: 'containers', params: {} });
    expect(history.length).toBe(before + 1);
    router.navigate('/login?next=%2Fcontainers', { replace: true });
    expect(history.length).toBe(before + 1);
    expect(router.route.name).toBe('login');
    expect(router.param('next')).toBe('/containers');
  });

  it('follows back/forward (popstate)', () => {
    router.navigate('/containers');
    history.replaceState(null, '', '/setup');
    window.dispatchEvent(new PopStateEvent('popstate'));
    expect(router.route.name).toBe('setup');
  });

  it('asks its guard before following back/forward, and stays when it says no', () => {
    router.navigate('/stacks/shop');
    const asked: string[] = [];
    let answer = false;
    router.guard = (to) => (asked.push(to), answer);
    history.replaceState(null, '', '/stacks?x=1');
    window.dispatchEvent(new PopStateEvent('popstate'));
    expect(asked).toEqual(['/stacks?x=1']);
    expect(location.pathname).toBe('/stacks/shop');
    expect(router.route.name).not.toBe('stacks');
    answer = true;
    history.replaceState(null, '', '/stacks');
    window.dispatchEvent(new PopStateEvent('popstate'));
    expect(router.path).toBe('/stacks');
    router.guard = null;
  });

  it('intercepts plain clicks on same-origin links', () => {
    document.body.innerHTML = '<a href="/containers/x1"><span>go</span></a>';
    const ev = click(document.querySelector('span')!);
    expect(ev.defaultPrevented).toBe(true);
    expect(router.route).toMatchObject({ name: 'container', params: { id: 'x1' } });
  });

  it('leaves API links, new-tab clicks, targets and other origins to the browser', () => {
    document.body.innerHTML = `
      <a id="api" href="/api/auth/oidc/1/initiate">sso</a>
      <a id="ext" href="https://example.com/">x</a>
      <a id="blank" href="/containers" target="_blank">x</a>
      <a id="plain" href="/containers">x</a>`;
    expect(click(document.getElementById('api')!).defaultPrevented).toBe(false);
    expect(click(document.getElementById('ext')!).defaultPrevented).toBe(false);
    expect(click(document.getElementById('blank')!).defaultPrevented).toBe(false);
    expect(click(document.getElementById('plain')!, { ctrlKey: true }).defaultPrevented).toBe(false);
    expect(router.route.name).toBe('dashboard');
  });
});
