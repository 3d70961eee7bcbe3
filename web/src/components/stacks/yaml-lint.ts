// The compose file linter of the stack editor: YAML syntax errors from the
// yaml package, and the checks a compose file needs before the server sees
// it (a top-level mapping with a services: section). Pure, so that it is
// tested without CodeMirror; the editor turns each problem into a diagnostic.
import { LineCounter, isMap, isScalar, parseDocument } from 'yaml';

export interface LintProblem {
  from: number;
  to: number;
  severity: 'error' | 'warning';
  message: string;
  /** 1-based line of from. */
  line: number;
}

/** Problems of a compose file, in document order. */
export function lintCompose(text: string): LintProblem[] {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true });
  const out: LintProblem[] = [];
  const clamp = (n: number) => Math.max(0, Math.min(text.length, n));
  const add = (severity: LintProblem['severity'], message: string, from: number, to: number) => {
    from = clamp(from);
    to = clamp(Math.max(to, from));
    // An error at the very end (an unclosed quote or bracket) belongs to the last line, not the empty one after it.
    if (from === text.length && text.endsWith('\n')) from = to = text.replace(/\s+$/, '').length;
    out.push({ from, to, severity, message, line: lines.linePos(from).line });
  };

  for (const e of doc.errors) add('error', firstLine(e.message), e.pos[0], e.pos[1]);
  for (const w of doc.warnings) add('warning', firstLine(w.message), w.pos[0], w.pos[1]);
  if (doc.errors.length) return sorted(out);

  const root = doc.contents;
  if (root === null || (isScalar(root) && (root.value === null || root.value === ''))) {
    add('error', 'The compose file is empty: it needs a services: section', 0, text.length);
    return sorted(out);
  }
  if (!isMap(root)) {
    const r = root.range ?? [0, text.length];
    add('error', 'A compose file is a mapping with a services: section at the top level', r[0], r[1]);
    return sorted(out);
  }
  const pair = root.items.find((p) => isScalar(p.key) && p.key.value === 'services');
  if (!pair) {
    add('error', 'Missing services: the compose file needs a top-level services: section', 0, firstLineEnd(text));
    return sorted(out);
  }
  const key = pair.key as { range?: [number, number, number] | null };
  const [kFrom, kTo] = key.range ?? [0, 0];
  const value = pair.value;
  if (value === null || (isScalar(value) && value.value === null)) {
    add('error', 'services: is empty: define at least one service', kFrom, kTo);
  } else if (!isMap(value)) {
    const r = (value as { range?: [number, number, number] | null }).range ?? [kFrom, kTo];
    add('error', 'services: must be a mapping of service names to their settings', r[0], r[1]);
  } else if (value.items.length === 0) {
    add('error', 'services: is empty: define at least one service', kFrom, kTo);
  } else {
    for (const svc of value.items) {
      const v = svc.value;
      if (v !== null && !isMap(v) && !(isScalar(v) && v.value === null)) {
        const r = (v as { range?: [number, number, number] | null }).range ?? [kFrom, kTo];
        const name = isScalar(svc.key) ? String(svc.key.value) : 'service';
        add('error', `Service ${name} must be a mapping of settings (image:, build:, …)`, r[0], r[1]);
      }
    }
  }
  return sorted(out);
}

/** The errors (not warnings) among problems. */
export function errorsOf(problems: LintProblem[]): LintProblem[] {
  return problems.filter((p) => p.severity === 'error');
}

function firstLine(s: string): string {
  return s.split('\n')[0].trim();
}

function firstLineEnd(text: string): number {
  const i = text.indexOf('\n');
  return i < 0 ? text.length : i;
}

function sorted(p: LintProblem[]): LintProblem[] {
  return p.sort((a, b) => a.from - b.from);
}
