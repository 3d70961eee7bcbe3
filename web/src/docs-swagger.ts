// Swagger UI for the API reference's "Try it" (docs.ts loads this module on
// demand: the bundle is ~430 kB gzipped, too heavy for the page's first view).
// Vendored from npm and bundled by Vite (no CDN).
import SwaggerUIBundle from 'swagger-ui-dist/swagger-ui-bundle.js';
import 'swagger-ui-dist/swagger-ui.css';
import './docs-swagger.css';

export function mountSwagger(domNode: HTMLElement, spec: unknown): void {
  nameSelects(domNode);
  SwaggerUIBundle({
    spec,
    domNode,
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

