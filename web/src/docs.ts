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
    deepLinking: true,
    docExpansion: 'list', // every tag open, every operation closed
    defaultModelsExpandDepth: 0,
    filter: true,
    showExtensions: true, // x-berth-permission, x-berth-audit, …
    // Requests from "Try it out" carry the session cookie (same origin).
    withCredentials: true,
  });
}

void main();
