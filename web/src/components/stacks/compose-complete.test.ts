import { describe, expect, it } from 'vitest';
import { EditorState } from '@codemirror/state';
import { CompletionContext } from '@codemirror/autocomplete';
import { composeCompletions, composePath, keysAt } from './compose-complete';

/** The labels offered with the cursor at "|" of doc. */
function offered(docWithCursor: string, explicit = false): string[] | null {
  const pos = docWithCursor.indexOf('|');
  const doc = docWithCursor.replace('|', '');
  const state = EditorState.create({ doc });
  const r = composeCompletions(new CompletionContext(state, pos, explicit));
  return r ? r.options.map((o) => o.label) : null;
}

describe('compose completion', () => {
  it('offers top-level keys at the start of the file', () => {
    const o = offered('ser|');
    expect(o).toContain('services');
    expect(o).toContain('networks');
    expect(o).not.toContain('image');
  });

  it('offers service keys inside a service, healthcheck among them, and not the keys already written', () => {
    const o = offered('services:\n  web:\n    image: nginx\n    he|\n');
    expect(o).toContain('healthcheck');
    expect(o).toContain('depends_on');
    expect(o).not.toContain('image'); // already there
    expect(o).not.toContain('services');
  });

  it('offers the nested keys of healthcheck, deploy.resources.limits and logging', () => {
    expect(offered('services:\n  web:\n    healthcheck:\n      in|')).toEqual(expect.arrayContaining(['interval', 'test', 'retries']));
    expect(offered('services:\n  web:\n    deploy:\n      resources:\n        limits:\n          m|')).toEqual(['cpus', 'memory', 'pids']);
    expect(offered('services:\n  web:\n    logging:\n      d|')).toEqual(['driver', 'options']);
  });

  it('offers network and volume keys under their names', () => {
    expect(offered('networks:\n  front:\n    dr|')).toContain('internal');
    expect(offered('volumes:\n  data:\n    e|')).toContain('external');
  });

  it('offers nothing in a value, a list item, a service name or an unknown block', () => {
    expect(offered('services:\n  web:\n    image: ng|')).toBeNull();
    expect(offered('services:\n  web:\n    ports:\n      - 80|')).toBeNull();
    expect(offered('services:\n  w|')).toBeNull();
    expect(offered('services:\n  web:\n    environment:\n      FO|')).toBeNull();
  });

  it('applies a block key with its colon and an indented next line, a scalar key with ": "', () => {
    const state = EditorState.create({ doc: 'services:\n  web:\n    hea' });
    const r = composeCompletions(new CompletionContext(state, state.doc.length, false))!;
    expect(r.from).toBe(state.doc.length - 3);
    expect(r.options.find((o) => o.label === 'healthcheck')!.apply).toBe('healthcheck:\n      ');
    expect(r.options.find((o) => o.label === 'restart')!.apply).toBe('restart: ');
  });

  it('finds the path from indentation, skipping comments and blank lines', () => {
    const lines = 'services:\n  # the app\n  web:\n\n    x'.split('\n');
    expect(composePath(lines, 4, 4)).toEqual(['services', 'web']);
    expect(keysAt(['services', 'web', 'deploy', 'restart_policy'])).toContain('max_attempts');
  });
});
