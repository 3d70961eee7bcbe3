// The CodeMirror 6 compose editor, imported only with import() from
// YamlEditor.svelte so that CodeMirror, its YAML language, its linter and
// the yaml parser are a chunk of their own, loaded when an editor is shown.
//
// Built from @codemirror/state, view, commands (history and the standard
// keymap; Tab is left to move focus, so the editor never traps the keyboard),
// lang-yaml (indentation after "key:" included), lint and language.
import { Compartment, EditorState, Transaction, type Extension } from '@codemirror/state';
import { defaultKeymap, history, historyKeymap } from '@codemirror/commands';
import {
  EditorView,
  drawSelection,
  highlightActiveLine,
  highlightActiveLineGutter,
  highlightSpecialChars,
  keymap,
  lineNumbers,
} from '@codemirror/view';
import { yaml } from '@codemirror/lang-yaml';
import { linter, lintGutter, type Diagnostic } from '@codemirror/lint';
import { HighlightStyle, bracketMatching, indentUnit, syntaxHighlighting } from '@codemirror/language';
import { autocompletion, completionKeymap } from '@codemirror/autocomplete';
import { tags as t } from '@lezer/highlight';
import { lintCompose, type LintProblem } from './yaml-lint';
import { composeCompletions } from './compose-complete';

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
      '.cm-tooltip-autocomplete > ul > li[aria-selected]': { backgroundColor: 'var(--accent)', color: 'var(--accent-text)' },
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
    history(),
    keymap.of([...completionKeymap, ...defaultKeymap, ...historyKeymap]),
    yaml(),
    // Compose keys where the cursor is on a key (top level, service, healthcheck, deploy, logging, …).
    autocompletion({ override: [composeCompletions], icons: false }),
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
