// The CodeMirror 6 compose editor, imported only with import() from
// YamlEditor.svelte so that CodeMirror, its YAML language, its linter and
// the yaml parser are a chunk of their own, loaded when an editor is shown.
//
// Built from @codemirror/state, view, lang-yaml, lint and language (the
// npm package "codemirror" pinned in package.json is CodeMirror 5 under a 6.x
// number, so it has no basicSetup; @codemirror/commands is not installed):
// the small history, keymap and newline-and-indent below stand in for them.
import { Annotation, Compartment, EditorSelection, EditorState, StateEffect, StateField, Transaction, type ChangeSet, type Extension } from '@codemirror/state';
import {
  EditorView,
  drawSelection,
  highlightActiveLine,
  highlightActiveLineGutter,
  highlightSpecialChars,
  keymap,
  lineNumbers,
  type Command,
} from '@codemirror/view';
import { yaml } from '@codemirror/lang-yaml';
import { linter, lintGutter, type Diagnostic } from '@codemirror/lint';
import { HighlightStyle, bracketMatching, indentUnit, syntaxHighlighting } from '@codemirror/language';
import { tags as t } from '@lezer/highlight';
import { lintCompose, type LintProblem } from './yaml-lint';

export interface EditorOptions {
  doc: string;
  dark: boolean;
  readOnly?: boolean;
  /** Accessible name of the editable area. */
  label: string;
  /** id of the visible label (aria-labelledby; label stays the fallback). */
  labelledBy?: string;
  /** id of an element describing the editor (hint, problems). */
  describedBy?: string;
  /** Lint as a compose file (default true). */
  lint?: boolean;
  onChange?: (text: string) => void;
  onLint?: (problems: LintProblem[]) => void;
}

export interface EditorHandle {
  view: EditorView;
  setDoc(text: string): void;
  setDark(dark: boolean): void;
  setReadOnly(readOnly: boolean): void;
  focus(): void;
  destroy(): void;
}

// ---------------------------------------------------------------- history

interface HistEntry {
  changes: ChangeSet;
  selection: EditorSelection;
}
interface Hist {
  done: HistEntry[];
  undone: HistEntry[];
  at: number;
}
const setHist = StateEffect.define<Hist>();
const fromHistory = Annotation.define<boolean>();
const GROUP_MS = 500;

const history = StateField.define<Hist>({
  create: () => ({ done: [], undone: [], at: 0 }),
  update(h, tr) {
    for (const e of tr.effects) if (e.is(setHist)) return e.value;
    if (!tr.docChanged || tr.annotation(fromHistory) || tr.annotation(Transaction.addToHistory) === false) return h;
    const inverse = tr.changes.invert(tr.startState.doc);
    const now = Date.now();
    const prev = h.done[h.done.length - 1];
    if (prev && now - h.at < GROUP_MS && tr.isUserEvent('input.type')) {
      // One undo step for a burst of typing: undo the newest, then the rest.
      const merged = { changes: inverse.compose(prev.changes), selection: prev.selection };
      return { done: [...h.done.slice(0, -1), merged], undone: [], at: now };
    }
    return { done: [...h.done, { changes: inverse, selection: tr.startState.selection }].slice(-200), undone: [], at: now };
  },
});

function travel(from: 'done' | 'undone'): Command {
  return (view) => {
    const h = view.state.field(history);
    const stack = h[from];
    const entry = stack[stack.length - 1];
    if (!entry) return false;
    const back = { changes: entry.changes.invert(view.state.doc), selection: view.state.selection };
    const next: Hist =
      from === 'done'
        ? { done: h.done.slice(0, -1), undone: [...h.undone, back], at: 0 }
        : { done: [...h.done, back], undone: h.undone.slice(0, -1), at: 0 };
    view.dispatch({
      changes: entry.changes,
      selection: entry.selection,
      effects: setHist.of(next),
      annotations: fromHistory.of(true),
      scrollIntoView: true,
      userEvent: from === 'done' ? 'undo' : 'redo',
    });
    return true;
  };
}

// ---------------------------------------------------------------- commands

/** Enter: a new line with the current line's indentation, one level more after "key:". */
const newlineAndIndent: Command = (view) => {
  if (view.state.readOnly) return false;
  const { state } = view;
  const tr = state.changeByRange((range) => {
    const line = state.doc.lineAt(range.from);
    const before = line.text.slice(0, range.from - line.from);
    let indent = /^[ \t]*/.exec(line.text)?.[0] ?? '';
    if (/:\s*$/.test(before) || /^\s*-\s*$/.test(before)) indent += '  ';
    const insert = '\n' + indent;
    return { changes: { from: range.from, to: range.to, insert }, range: EditorSelection.cursor(range.from + insert.length) };
  });
  view.dispatch(state.update(tr, { scrollIntoView: true, userEvent: 'input' }));
  return true;
};

const selectAll: Command = (view) => {
  view.dispatch({ selection: { anchor: 0, head: view.state.doc.length }, userEvent: 'select' });
  return true;
};

// ---------------------------------------------------------------- theme

/** The editor's colours are the app's CSS variables, so it follows the light and dark themes. */
function chrome(dark: boolean): Extension {
  return EditorView.theme(
    {
      '&': {
        color: 'var(--text)',
        backgroundColor: 'var(--surface)',
        border: '1px solid var(--border)',
        borderRadius: '6px',
        fontSize: '0.85rem',
        maxHeight: '60vh',
      },
      '&.cm-focused': { outline: '3px solid var(--focus)', outlineOffset: '2px' },
      '.cm-scroller': { fontFamily: 'var(--mono)', lineHeight: '1.5', overflow: 'auto' },
      '.cm-content, .cm-gutter': { minHeight: '14rem' },
      '.cm-content': { caretColor: 'var(--text)' },
      '.cm-cursor, .cm-dropCursor': { borderLeftColor: 'var(--text)' },
      '&.cm-focused > .cm-scroller > .cm-selectionLayer .cm-selectionBackground, .cm-selectionBackground, .cm-content ::selection': {
        backgroundColor: dark ? '#2f4a6d' : '#c8dcff',
      },
      '.cm-gutters': { backgroundColor: 'var(--surface-2)', color: 'var(--muted)', borderRight: '1px solid var(--border)' },
      '.cm-activeLine': { backgroundColor: dark ? '#1c2330' : '#f3f6fb' },
      '.cm-activeLineGutter': { backgroundColor: 'var(--surface)', color: 'var(--text)' },
      '.cm-matchingBracket': { outline: '1px solid var(--muted)', backgroundColor: 'transparent' },
      '.cm-tooltip': { backgroundColor: 'var(--surface)', color: 'var(--text)', border: '1px solid var(--border)' },
      '.cm-diagnostic': { color: 'var(--text)' },
      '.cm-diagnostic-error': { borderLeftColor: 'var(--danger)' },
      '.cm-diagnostic-warning': { borderLeftColor: 'var(--warn)' },
      '.cm-panels': { backgroundColor: 'var(--surface-2)', color: 'var(--text)' },
    },
    { dark },
  );
}

// Syntax colours with a contrast of at least 4.5:1 on the editor's background.
const lightHighlight = HighlightStyle.define([
  { tag: t.definition(t.propertyName), color: '#0550ae' },
  { tag: [t.string, t.special(t.string)], color: '#0a3069' },
  { tag: t.lineComment, color: '#57606a', fontStyle: 'italic' },
  { tag: [t.labelName, t.typeName], color: '#8250df' },
  { tag: [t.keyword, t.meta], color: '#cf222e' },
  { tag: [t.separator, t.punctuation, t.squareBracket, t.brace], color: '#57606a' },
]);
const darkHighlight = HighlightStyle.define([
  { tag: t.definition(t.propertyName), color: '#79c0ff' },
  { tag: [t.string, t.special(t.string)], color: '#a5d6ff' },
  { tag: t.lineComment, color: '#9da7b3', fontStyle: 'italic' },
  { tag: [t.labelName, t.typeName], color: '#d2a8ff' },
  { tag: [t.keyword, t.meta], color: '#ff7b72' },
  { tag: [t.separator, t.punctuation, t.squareBracket, t.brace], color: '#9da7b3' },
]);

function themeOf(dark: boolean): Extension {
  return [chrome(dark), syntaxHighlighting(dark ? darkHighlight : lightHighlight)];
}

// ---------------------------------------------------------------- editor

export function createEditor(parent: HTMLElement, opts: EditorOptions): EditorHandle {
  const themeSlot = new Compartment();
  const readOnlySlot = new Compartment();
  const readOnly = (ro: boolean) => [EditorState.readOnly.of(ro), EditorView.editable.of(!ro)];
  let silent = false; // setDoc from outside does not report a change back

  const extensions: Extension[] = [
    lineNumbers(),
    highlightActiveLineGutter(),
    highlightSpecialChars(),
    drawSelection(),
    highlightActiveLine(),
    bracketMatching(),
    indentUnit.of('  '),
    EditorState.tabSize.of(2),
    history,
    keymap.of([
      { key: 'Enter', run: newlineAndIndent },
      { key: 'Mod-a', run: selectAll },
      { key: 'Mod-z', run: travel('done'), preventDefault: true },
      { key: 'Mod-y', run: travel('undone'), preventDefault: true },
      { key: 'Shift-Mod-z', run: travel('undone'), preventDefault: true },
    ]),
    yaml(),
    themeSlot.of(themeOf(opts.dark)),
    readOnlySlot.of(readOnly(!!opts.readOnly)),
    EditorView.contentAttributes.of({
      ...(opts.labelledBy ? { 'aria-labelledby': opts.labelledBy } : { 'aria-label': opts.label }),
      ...(opts.describedBy ? { 'aria-describedby': opts.describedBy } : {}),
      spellcheck: 'false',
      autocapitalize: 'off',
      autocorrect: 'off',
    }),
    EditorView.updateListener.of((u) => {
      if (u.docChanged && !silent) opts.onChange?.(u.state.doc.toString());
    }),
  ];
  if (opts.lint !== false) {
    extensions.push(
      lintGutter(),
      linter(
        (view): Diagnostic[] => {
          const problems = lintCompose(view.state.doc.toString());
          opts.onLint?.(problems);
          return problems.map((p) => {
            let { from, to } = p;
            if (from === to) {
              // A point (an unclosed quote at the end): mark the text of its line, easier to see.
              const line = view.state.doc.lineAt(from);
              const indent = line.text.length - line.text.trimStart().length;
              if (line.length > indent) [from, to] = [line.from + indent, line.to];
            }
            return { from, to, severity: p.severity, message: p.message, source: 'yaml' };
          });
        },
        { delay: 400 },
      ),
    );
  }

  const view = new EditorView({ parent, state: EditorState.create({ doc: opts.doc, extensions }) });

  return {
    view,
    setDoc(text: string) {
      if (text === view.state.doc.toString()) return;
      silent = true;
      try {
        view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text }, annotations: Transaction.addToHistory.of(false) });
      } finally {
        silent = false;
      }
    },
    setDark(dark: boolean) {
      view.dispatch({ effects: themeSlot.reconfigure(themeOf(dark)) });
    },
    setReadOnly(ro: boolean) {
      view.dispatch({ effects: readOnlySlot.reconfigure(readOnly(ro)) });
    },
    focus() {
      view.focus();
    },
    destroy() {
      view.destroy();
    },
  };
}
