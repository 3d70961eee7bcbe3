// The API reference page (docs.html, served at /api/docs). It reads the
// document the server generates from its route table (/api/openapi.json, with
// the browser's session) and renders a light operation list by tag, each
// operation expandable to its permission, parameters, request body and
// answers. Swagger UI (~430 kB gzipped) is loaded only when asked for, by the
// "Try it" button, so the list shows in well under a second. Signed out, the
// page says so and links to sign-in.
import './docs.css';

const SPEC_URL = '/api/openapi.json';
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'] as const;

type Json = Record<string, unknown>;
interface Operation {
  method: string;
  path: string;
  op: Json;
  params: Json[];
}

const status = document.getElementById('docs-status') as HTMLElement;
const root = document.getElementById('reference') as HTMLElement;
const swaggerRoot = document.getElementById('swagger-ui') as HTMLElement;

function say(text: string, link?: { href: string; label: string }): void {
  status.textContent = text;
  if (link) {
    const a = document.createElement('a');
    a.href = link.href;
    a.textContent = link.label;
    status.append(' ', a);
  }
}

/** document.createElement with a class and text or children. */
function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  cls?: string,
  ...children: (Node | string | null | undefined)[]
): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  for (const c of children) if (c != null) e.append(c);
  return e;
}

const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Follows a local "$ref" ("#/components/…") once; anything else as is. */
function deref(spec: Json, v: unknown): Json {
  if (!isObj(v) || typeof v.$ref !== 'string' || !v.$ref.startsWith('#/')) return isObj(v) ? v : {};
  let cur: unknown = spec;
  for (const part of v.$ref.slice(2).split('/')) cur = isObj(cur) ? cur[part.replace(/~1/g, '/').replace(/~0/g, '~')] : undefined;
  return isObj(cur) ? cur : {};
}

const refName = (v: unknown) => (isObj(v) && typeof v.$ref === 'string' ? v.$ref.split('/').pop()! : '');

/** A schema as indented text: objects by field (required marked), arrays by item. */
function schemaText(spec: Json, schema: unknown, indent = '', seen: Set<string> = new Set()): string {
  const name = refName(schema);
  if (name && seen.has(name)) return `${name} (see above)`;
  const s = deref(spec, schema);
  const next = name ? new Set([...seen, name]) : seen;
  if (Array.isArray(s.enum)) return `${String(s.type ?? 'string')}: one of ${s.enum.map((x) => JSON.stringify(x)).join(', ')}`;
  if (s.type === 'array') return `array of ${schemaText(spec, s.items, indent, next)}`;
  const props = isObj(s.properties) ? s.properties : null;
  if (props && Object.keys(props).length > 0) {
    const required = new Set(Array.isArray(s.required) ? (s.required as string[]) : []);
    const inner = indent + '  ';
    const lines = Object.entries(props).map(([k, v]) => {
      const d = deref(spec, v);
      const desc = typeof d.description === 'string' ? `  — ${d.description}` : '';
      return `${inner}${k}${required.has(k) ? '' : '?'}: ${schemaText(spec, v, inner, next)}${desc}`;
    });
    return `${name ? name + ' ' : ''}{\n${lines.join('\n')}\n${indent}}`;
  }
  if (isObj(s.additionalProperties)) return `map of string to ${schemaText(spec, s.additionalProperties, indent, next)}`;
  const t = typeof s.type === 'string' ? s.type : Array.isArray(s.type) ? s.type.join(' | ') : 'object';
  return s.format ? `${t} (${String(s.format)})` : t;
}

/** A block that may scroll sideways, made reachable by keyboard. */
function scrollable<T extends HTMLElement>(e: T): T {
  e.tabIndex = 0;
  return e;
}

/** The details of one operation, built when it is first opened. */
function details(spec: Json, o: Operation): HTMLElement {
  const box = el('div', 'op-body');
  if (typeof o.op.description === 'string') box.append(el('p', undefined, o.op.description));
  const facts = el('dl', 'facts');
  const fact = (k: string, v: unknown) => {
    if (v === undefined || v === null || v === '') return;
    facts.append(el('dt', undefined, k), el('dd', undefined, el('code', undefined, String(v))));
  };
  fact('Permission', o.op['x-berth-permission']);
  fact('Environment', o.op['x-berth-environment']);
  fact('Audited as', o.op['x-berth-audit']);
  fact('Operation id', o.op.operationId);
  if (facts.childElementCount) box.append(facts);

  if (o.params.length) {
    box.append(el('h4', undefined, 'Parameters'));
    const table = el('table', 'params');
    scrollable(table); // sideways on a phone
    table.append(
      el('thead', undefined, el('tr', undefined, el('th', undefined, 'Name'), el('th', undefined, 'In'), el('th', undefined, 'Type'), el('th', undefined, 'Description'))),
    );
    const body = el('tbody');
    for (const p of o.params) {
      body.append(
        el(
          'tr',
          undefined,
          el('td', undefined, el('code', undefined, String(p.name)), p.required ? el('span', 'req', ' required') : null),
          el('td', undefined, String(p.in)),
          el('td', undefined, el('code', undefined, schemaText(spec, p.schema))),
          el('td', undefined, typeof p.description === 'string' ? p.description : ''),
        ),
      );
    }
    table.append(body);
    box.append(table);
  }

  const reqBody = deref(spec, o.op.requestBody);
  const reqContent = isObj(reqBody.content) ? reqBody.content : null;
  if (reqContent) {
    for (const [type, media] of Object.entries(reqContent)) {
      box.append(el('h4', undefined, `Request body (${type})${reqBody.required ? '' : ', optional'}`));
      box.append(scrollable(el('pre', 'schema', schemaText(spec, isObj(media) ? media.schema : undefined))));
    }
  }

  const responses = isObj(o.op.responses) ? o.op.responses : {};
  box.append(el('h4', undefined, 'Answers'));
  const list = el('ul', 'answers');
  for (const [code, r] of Object.entries(responses)) {
    const resp = deref(spec, r);
    const item = el('li', undefined, el('strong', undefined, code), ' ', typeof resp.description === 'string' ? resp.description : '');
    const content = isObj(resp.content) ? resp.content : null;
    if (content) {
      for (const [type, media] of Object.entries(content)) {
        const schema = isObj(media) ? media.schema : undefined;
        if (schema) item.append(scrollable(el('pre', 'schema', `${type}: ${schemaText(spec, schema)}`)));
      }
    }
    list.append(item);
  }
  box.append(list);
  return box;
}

function operations(spec: Json): Map<string, Operation[]> {
  const byTag = new Map<string, Operation[]>();
  for (const t of Array.isArray(spec.tags) ? spec.tags : []) if (isObj(t) && typeof t.name === 'string') byTag.set(t.name, []);
  const paths = isObj(spec.paths) ? spec.paths : {};
  for (const [path, itemRaw] of Object.entries(paths)) {
    const item = deref(spec, itemRaw);
    const shared = Array.isArray(item.parameters) ? item.parameters.map((p) => deref(spec, p)) : [];
    for (const method of METHODS) {
      const op = item[method];
      if (!isObj(op)) continue;
      const own = Array.isArray(op.parameters) ? op.parameters.map((p) => deref(spec, p)) : [];
      const params = [...shared.filter((p) => !own.some((q) => q.name === p.name && q.in === p.in)), ...own];
      const tags = Array.isArray(op.tags) && op.tags.length ? (op.tags as string[]) : ['other'];
      for (const tag of tags) {
        if (!byTag.has(tag)) byTag.set(tag, []);
        byTag.get(tag)!.push({ method, path, op, params });
      }
    }
  }
  return byTag;
}

function render(spec: Json): void {
  const info = isObj(spec.info) ? spec.info : {};
  const head = el('div', 'ref-head');
  const title = el('h1', undefined, String(info.title ?? 'API'));
  if (info.version) title.append(' ', el('span', 'version', String(info.version)));
  head.append(title);
  if (typeof info.description === 'string') head.append(el('p', 'lead', info.description));

  const tools = el('div', 'tools');
  const filterLabel = el('label', undefined, 'Filter operations');
  filterLabel.htmlFor = 'op-filter';
  const filter = el('input');
  filter.id = 'op-filter';
  filter.type = 'search';
  filter.placeholder = 'path, summary, tag or permission';
  filter.autocomplete = 'off';
  filter.spellcheck = false;
  const count = el('span', 'count');
  count.setAttribute('role', 'status');
  const tryIt = el('button', 'try', 'Try it (Swagger UI)');
  tryIt.type = 'button';
  tools.append(filterLabel, filter, count, tryIt);
  head.append(tools);

  const byTag = operations(spec);
  const sections: { section: HTMLElement; rows: { li: HTMLElement; text: string }[] }[] = [];
  const frag = document.createDocumentFragment();
  let total = 0;
  for (const [tag, ops] of byTag) {
    if (!ops.length) continue;
    const id = `tag-${tag.replace(/[^a-z0-9]+/gi, '-')}`;
    const h2 = el('h2', undefined, tag);
    h2.id = id;
    const section = el('section', 'tag', h2);
    section.setAttribute('aria-labelledby', id);
    const ul = el('ul', 'ops');
    const rows: { li: HTMLElement; text: string }[] = [];
    for (const o of ops) {
      const d = el('details', `op ${o.method}`);
      const summary = el(
        'summary',
        undefined,
        el('span', `method ${o.method}`, o.method.toUpperCase()),
        ' ',
        el('code', 'path', o.path),
        ' ',
        el('span', 'summary', String(o.op.summary ?? '')),
      );
      summary.dataset.path = o.path;
      summary.dataset.method = o.method;
      d.append(summary);
      d.addEventListener('toggle', () => {
        if (d.open && d.childElementCount === 1) d.append(details(spec, o));
      });
      const li = el('li', undefined, d);
      ul.append(li);
      rows.push({ li, text: `${o.method} ${o.path} ${String(o.op.summary ?? '')} ${tag} ${String(o.op['x-berth-permission'] ?? '')}`.toLowerCase() });
      total++;
    }
    section.append(ul);
    frag.append(section);
    sections.push({ section, rows });
  }
  const say = (n: number) => (count.textContent = n === total ? `${total} operations` : `${n} of ${total} operations`);
  say(total);
  filter.addEventListener('input', () => {
    const words = filter.value.toLowerCase().split(/\s+/).filter(Boolean);
    let shown = 0;
    for (const s of sections) {
      let any = false;
      for (const r of s.rows) {
        const ok = words.every((w) => r.text.includes(w));
        r.li.hidden = !ok;
        if (ok) {
          any = true;
          shown++;
        }
      }
      s.section.hidden = !any;
    }
    say(shown);
  });

  tryIt.addEventListener('click', async () => {
    tryIt.disabled = true;
    tryIt.textContent = 'Loading Swagger UI…';
    try {
      const { mountSwagger } = await import('./docs-swagger');
      root.hidden = true;
      swaggerRoot.hidden = false;
      mountSwagger(swaggerRoot, spec);
    } catch {
      tryIt.disabled = false;
      tryIt.textContent = 'Try it (Swagger UI)';
      say(total);
      count.textContent = 'Swagger UI could not be loaded.';
    }
  });

  root.replaceChildren(head, frag);
  root.hidden = false;
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
  if (!isObj(spec)) {
    say('The API description could not be read.');
    return;
  }
  status.textContent = '';
  status.hidden = true;
  render(spec);
}

void main();
