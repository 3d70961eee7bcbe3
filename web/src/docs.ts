// The API reference page (docs.html, served at /api/docs): Swagger UI,
// vendored from npm and bundled by Vite (no CDN), renders the document the
// server generates from its route table. The document is read with the
// browser's session; signed out, the page says so and links to sign-in.
import SwaggerUIBundle from 'swagger-ui-dist/swagger-ui-bundle.js';
import 'swagger-ui-dist/swagger-ui.css';
import './docs.css';

const SPEC_URL = '/api/openapi.json';

const status = document.getElementById('docs-status') as HTMLElement;

function say(text: string, link?: { href: string; label: string }): void {
  status.textContent = text;
  if (link) {
    const a = document.createElement('a');
    a.href = link.href;
    a.textContent = link.label;
    status.append(' ', a);
  }
}

async function main(): Promise<void> {
  let res: Response;
  try {
    res = await fetch(SPEC_URL, { credentials: 'same-origin', headers: { Accept: 'application/json' } });
  } catch {
    say('Berth could not be reached.');
    return;
  }
  if (res.status === 401) {
    say('Sign in to Berth to read its API reference.', { href: '/', label: 'Sign in' });
    return;
  }
  if (!res.ok) {
    say(`The API description could not be loaded (HTTP ${res.status}).`);
    return;
  }
  const spec: unknown = await res.json();
  status.textContent = '';
  status.hidden = true;
  SwaggerUIBundle({
    spec,
    domNode: document.getElementById('swagger-ui'),
    // Deep links put an anchor inside each operation's toggle button
    // (nested interactive controls, which screen readers cannot reach).
    deepLinking: false,
    docExpansion: 'list', // every tag open, every operation closed
    defaultModelsExpandDepth: 0,
    filter: true,
    showExtensions: true, // x-berth-permission, x-berth-audit, …
    // Requests from "Try it out" carry the session cookie (same origin).
    withCredentials: true,
  });
}

// nameSelects gives Swagger UI's unnamed selects (the server choice, a
// parameter's enumerated values) an accessible name, as it renders them.
function nameSelects(root: HTMLElement): void {
  const name = (sel: HTMLSelectElement): string => {
    if (sel.id === 'servers') return 'Server';
    const param = sel.closest<HTMLElement>('tr[data-param-name]')?.dataset.paramName;
    if (param) return `Value of ${param}`;
    if (sel.closest('.content-type-wrapper, .response-control-media-type')) return 'Media type';
    return 'Choice';
  };
  const label = (): void => {
    for (const sel of root.querySelectorAll<HTMLSelectElement>('select:not([aria-label])')) {
      // The server choice sits in a label of its own with no text.
      if (sel.id === 'servers' || !sel.labels?.length) sel.setAttribute('aria-label', name(sel));
    }
  };
  new MutationObserver(label).observe(root, { childList: true, subtree: true });
  label();
}

nameSelects(document.getElementById('swagger-ui') as HTMLElement);
void main();
