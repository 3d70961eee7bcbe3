// Test support only (imported by vi.mock factories, never by the console):
// CodeMirror needs layout jsdom lacks, so a text area stands in for the
// editor, linted with the real compose linter. Use it as
//   vi.mock('../components/stacks/codemirror', () => import('../components/stacks/editor-test-double'));
import type { EditorHandle, EditorOptions } from './codemirror';
import { lintCompose } from './yaml-lint';

export function createEditor(parent: HTMLElement, opts: EditorOptions): Omit<EditorHandle, 'view'> {
  const ta = document.createElement('textarea');
  ta.setAttribute('aria-label', opts.label);
  ta.value = opts.doc;
  ta.readOnly = !!opts.readOnly;
  parent.appendChild(ta);
  const lint = () => opts.onLint?.(lintCompose(ta.value));
  ta.addEventListener('input', () => {
    opts.onChange?.(ta.value);
    lint();
  });
  lint();
  return {
    setDoc: (t: string) => {
      if (ta.value !== t) ta.value = t;
    },
    setDark() {},
    setReadOnly: (ro: boolean) => (ta.readOnly = ro),
    focus: () => ta.focus(),
    destroy: () => ta.remove(),
  };
}
