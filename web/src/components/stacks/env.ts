// The logic of the stack env editor: reading and writing `.env` text the way
// compose does (comments, `export`, single and double quotes, multi-line
// quoted values), merging the variable rows back into the text without
// losing its comments and layout, and the API's rule for secrets (stored by
// Berth, answered masked as ***, a secret sent back as *** keeps its value).

/** The mask the API answers for a secret's value; sent back it keeps the stored value. */
export const MASK = '***';

/** The API's rule for variable names. */
export const KEY_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;

export interface EnvVar {
  key: string;
  value: string;
}

/** One assignment of a `.env` text: its variable and the lines it spans. */
export interface EnvEntry extends EnvVar {
  /** First and last line (0-based, inclusive). */
  start: number;
  end: number;
  exported: boolean;
}

/** A row of the variables editor. */
export interface EnvRow {
  id: number;
  key: string;
  value: string;
  isSecret: boolean;
  /** A secret Berth stores (read back as ***): origKey is the name it is stored under. */
  stored?: boolean;
  origKey?: string;
}

let nextId = 1;
export function newRow(init: Partial<EnvRow> = {}): EnvRow {
  return { id: nextId++, key: '', value: '', isSecret: false, ...init };
}

const ASSIGN = /^\s*(export\s+)?([^\s=:#]+)\s*[=:]\s*(.*)$/;

/** The assignments of a `.env` text in file order (repeated keys repeated). */
export function scanEnv(text: string): EnvEntry[] {
  const lines = text.split('\n').map((l) => l.replace(/\r$/, ''));
  const out: EnvEntry[] = [];
  for (let i = 0; i < lines.length; i++) {
    const t = lines[i].trim();
    if (t === '' || t.startsWith('#')) continue;
    const m = ASSIGN.exec(lines[i]);
    if (!m) continue; // not an assignment: kept as it is, the server judges it
    const start = i;
    let rest = m[3];
    let value: string;
    const q = rest[0];
    if (q === "'" || q === '"') {
      // A quoted value may span lines until its closing quote.
      let body = rest.slice(1);
      let close = closingQuote(body, q);
      while (close < 0 && i + 1 < lines.length) {
        i++;
        body += '\n' + lines[i];
        close = closingQuote(body, q);
      }
      if (close < 0) close = body.length; // unterminated: up to the end
      const inner = body.slice(0, close);
      value = q === "'" ? inner.replace(/\\'/g, "'") : unescapeDouble(inner);
    } else {
      rest = rest.replace(/(^|\s+)#.*$/, ''); // an inline comment follows whitespace
      value = rest.trim();
    }
    out.push({ key: m[2], value, start, end: i, exported: !!m[1] });
  }
  return out;
}

function closingQuote(s: string, q: string): number {
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '\\') {
      i++;
      continue;
    }
    if (s[i] === q) return i;
  }
  return -1;
}

function unescapeDouble(s: string): string {
  return s.replace(/\\(.)/gs, (all, c: string) => {
    switch (c) {
      case 'n':
        return '\n';
      case 'r':
        return '\r';
      case 't':
        return '\t';
      case '\\':
      case '"':
      case '$':
      case "'":
        return c;
      default:
        return all;
    }
  });
}

/** The variables of a `.env` text: each key once, with its last value, in order of first appearance. */
export function parseEnv(text: string): EnvVar[] {
  const m = new Map<string, string>();
  for (const e of scanEnv(text)) m.set(e.key, e.value);
  return Array.from(m, ([key, value]) => ({ key, value }));
}

/** A value as written in a `.env` file, quoted when it needs it (as the server writes them). */
export function quoteEnv(v: string): string {
  if (v === '' || /^[A-Za-z0-9_\-./:@,+%]*$/.test(v)) return v;
  if (!/['\\\n\r]/.test(v)) return `'${v}'`;
  return '"' + v.replace(/[\\"\n\r$]/g, (c) => ({ '\\': '\\\\', '"': '\\"', '\n': '\\n', '\r': '\\r', $: '\\$' })[c] as string) + '"';
}

/** A `.env` text of vars, one KEY=value line each. */
export function serializeEnv(vars: EnvVar[]): string {
  return vars.map((v) => `${v.key}=${quoteEnv(v.value)}\n`).join('');
}

/**
 * Writes vars into a `.env` text, keeping everything else of it: a variable
 * whose value is unchanged keeps its line as written, a changed one gets
 * its last assignment rewritten in place, a variable no longer in vars
 * loses its lines, and new ones are appended.
 */
export function mergeEnv(text: string, vars: EnvVar[]): string {
  const want = new Map(vars.map((v) => [v.key, v.value]));
  const entries = scanEnv(text);
  const last = new Map<string, number>();
  entries.forEach((e, i) => last.set(e.key, i));
  const lines = text === '' ? [] : text.split('\n');
  const endsWithNewline = text.endsWith('\n');
  if (endsWithNewline) lines.pop();
  const replaced = new Map<number, string | null>(); // line -> new text, null: dropped
  entries.forEach((e, i) => {
    const drop = () => {
      for (let l = e.start; l <= e.end; l++) replaced.set(l, null);
    };
    if (!want.has(e.key)) return drop();
    if (last.get(e.key) !== i) return; // shadowed by a later assignment: left as written
    const v = want.get(e.key) as string;
    if (v === e.value) return;
    drop();
    replaced.set(e.start, `${e.exported ? 'export ' : ''}${e.key}=${quoteEnv(v)}`);
  });
  const out: string[] = [];
  lines.forEach((l, i) => {
    if (!replaced.has(i)) out.push(l);
    else if (replaced.get(i) !== null) out.push(replaced.get(i) as string);
  });
  const known = new Set(entries.map((e) => e.key));
  let appended = false;
  for (const v of vars) {
    if (known.has(v.key)) continue;
    out.push(`${v.key}=${quoteEnv(v.value)}`);
    appended = true;
  }
  if (out.length === 0) return '';
  return out.join('\n') + (endsWithNewline || appended ? '\n' : '');
}

/** Rows of the API's variables (GET …/env): the file's variables, then the stored secrets (masked). */
export function rowsFromVariables(vars: { key: string; value: string; isSecret: boolean }[]): EnvRow[] {
  return vars.map((v) => (v.isSecret ? newRow({ key: v.key, value: v.value, isSecret: true, stored: true, origKey: v.key }) : newRow({ key: v.key, value: v.value })));
}

/** A row the user left blank (ignored). */
export function isBlank(r: EnvRow): boolean {
  return r.key.trim() === '' && r.value === '';
}

/** The plain (not secret) variables of the rows. */
export function plainOf(rows: EnvRow[]): EnvVar[] {
  return rows.filter((r) => !r.isSecret && !isBlank(r)).map((r) => ({ key: r.key.trim(), value: r.value }));
}

/** The secret variables of the rows as the API takes them (a stored secret left as *** keeps its value). */
export function secretsOf(rows: EnvRow[]): { key: string; value: string; isSecret: true }[] {
  return rows.filter((r) => r.isSecret && !isBlank(r)).map((r) => ({ key: r.key.trim(), value: r.value, isSecret: true }));
}

/**
 * The rows after editing the raw text: its variables as plain rows (a row
 * keeps its id when its key stays), then the secret rows as they were.
 */
export function rowsFromRaw(rows: EnvRow[], text: string): EnvRow[] {
  const byKey = new Map(rows.filter((r) => !r.isSecret).map((r) => [r.key.trim(), r]));
  const plain = parseEnv(text).map((v) => {
    const old = byKey.get(v.key);
    return old ? { ...old, key: v.key, value: v.value } : newRow({ key: v.key, value: v.value });
  });
  return [...plain, ...rows.filter((r) => r.isSecret)];
}

/**
 * What is wrong with the rows before they are sent: names (the API's rule;
 * plainKeys false leaves the plain ones to the server, for text typed in
 * the raw editor), duplicates, and the secret rule — a stored secret's
 * value cannot be read back, so *** cannot move to a new name or become a
 * plain value.
 */
export function validateRows(rows: EnvRow[], opts: { plainKeys?: boolean } = {}): string[] {
  const errors: string[] = [];
  const seen = new Set<string>();
  rows.forEach((r, i) => {
    if (isBlank(r)) return;
    const key = r.key.trim();
    if (key === '') {
      errors.push(`Row ${i + 1}: a variable needs a name`);
      return;
    }
    if ((r.isSecret || opts.plainKeys !== false) && !KEY_PATTERN.test(key)) {
      errors.push(`Invalid variable name "${key}": use letters, digits and _, not starting with a digit`);
    }
    if (seen.has(key)) errors.push(`Variable ${key} is given twice`);
    seen.add(key);
    if (r.stored && r.value === MASK) {
      if (!r.isSecret) errors.push(`Enter the value of ${key}: a stored secret's value cannot be read back`);
      else if (key !== r.origKey) errors.push(`Enter the value of secret ${key}: a stored secret's value cannot move to a new name`);
    }
  });
  return errors;
}

export type EnvTab = 'vars' | 'raw';

/**
 * The env editor's state made whole for saving, from the tab the user is
 * on: from the rows, their plain variables merged into the text; from the
 * text, its variables read back into the rows.
 */
export function finalizeEnv(tab: EnvTab, rows: EnvRow[], raw: string): { rows: EnvRow[]; raw: string; errors: string[] } {
  if (tab === 'raw') {
    const next = rowsFromRaw(rows, raw);
    return { rows: next, raw, errors: validateRows(next, { plainKeys: false }) };
  }
  const errors = validateRows(rows);
  return { rows, raw: errors.length ? raw : mergeEnv(raw, plainOf(rows)), errors };
}

/** What saving the editor's state would write (plain variables, secrets, the text): equal signatures, nothing to save. */
export function envSignature(tab: EnvTab, rows: EnvRow[], raw: string): string {
  const f = finalizeEnv(tab, rows, raw);
  return JSON.stringify([plainOf(f.rows), secretsOf(f.rows), f.raw]);
}

/** The editor's state exactly, blank rows and row order included: equal drafts, nothing was touched. */
export function draftOf(rows: EnvRow[], raw: string): string {
  return JSON.stringify([rows, raw]);
}
