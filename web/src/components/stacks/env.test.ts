import { describe, expect, it } from 'vitest';
import {
  MASK,
  finalizeEnv,
  mergeEnv,
  newRow,
  parseEnv,
  plainOf,
  quoteEnv,
  rowsFromRaw,
  rowsFromVariables,
  scanEnv,
  secretsOf,
  serializeEnv,
  validateRows,
} from './env';

describe('parseEnv', () => {
  it('reads comments, export, quotes, inline comments and repeated keys', () => {
    const text = [
      '# a comment',
      '',
      'A=1',
      'export B=two words # trailing',
      "C='single # not a comment'",
      'D="line\\nnext \\"q\\" \\$HOME"',
      'E=',
      'F: colon',
      'A=again',
      'not an assignment',
      'G=url#fragment',
    ].join('\n');
    expect(parseEnv(text)).toEqual([
      { key: 'A', value: 'again' },
      { key: 'B', value: 'two words' },
      { key: 'C', value: 'single # not a comment' },
      { key: 'D', value: 'line\nnext "q" $HOME' },
      { key: 'E', value: '' },
      { key: 'F', value: 'colon' },
      { key: 'G', value: 'url#fragment' },
    ]);
  });

  it('reads a quoted value spanning lines, and CRLF files', () => {
    const entries = scanEnv('KEY="first\nsecond"\r\nNEXT=x\r\n');
    expect(entries).toEqual([
      { key: 'KEY', value: 'first\nsecond', start: 0, end: 1, exported: false },
      { key: 'NEXT', value: 'x', start: 2, end: 2, exported: false },
    ]);
  });
});

describe('quoteEnv and serializeEnv', () => {
  it('quotes only when needed, as the server does', () => {
    expect(quoteEnv('plain-value_1.2:3@x,y+z%')).toBe('plain-value_1.2:3@x,y+z%');
    expect(quoteEnv('')).toBe('');
    expect(quoteEnv('two words')).toBe("'two words'");
    expect(quoteEnv('$HOME')).toBe("'$HOME'");
    expect(quoteEnv("it's")).toBe('"it\'s"');
    expect(quoteEnv('a\nb $x "q" \\')).toBe('"a\\nb \\$x \\"q\\" \\\\"');
  });

  it('round-trips through parseEnv', () => {
    const vars = [
      { key: 'A', value: 'x y' },
      { key: 'B', value: "it's \"quoted\"\nand $dollar \\ back" },
      { key: 'C', value: '' },
      { key: 'D', value: 'has # hash' },
    ];
    expect(parseEnv(serializeEnv(vars))).toEqual(vars);
  });
});

describe('mergeEnv', () => {
  const text = '# database\nDB_HOST=db   # the service\nDB_PORT=5432\n\n# app\nexport MODE=dev\n';

  it('keeps the text as it is when nothing changed', () => {
    expect(mergeEnv(text, parseEnv(text))).toBe(text);
  });

  it('rewrites a changed value in place, drops removed keys, appends new ones, keeps comments', () => {
    const out = mergeEnv(text, [
      { key: 'DB_HOST', value: 'db' },
      { key: 'MODE', value: 'prod mode' },
      { key: 'NEW', value: 'n' },
    ]);
    expect(out).toBe("# database\nDB_HOST=db   # the service\n\n# app\nexport MODE='prod mode'\nNEW=n\n");
    expect(parseEnv(out)).toEqual([
      { key: 'DB_HOST', value: 'db' },
      { key: 'MODE', value: 'prod mode' },
      { key: 'NEW', value: 'n' },
    ]);
  });

  it('replaces a multi-line value whole and writes an empty text from nothing', () => {
    expect(mergeEnv('A="x\ny"\nB=1\n', [{ key: 'A', value: 'z' }, { key: 'B', value: '1' }])).toBe('A=z\nB=1\n');
    expect(mergeEnv('', [{ key: 'A', value: '1' }])).toBe('A=1\n');
    expect(mergeEnv('A=1\n', [])).toBe('');
    expect(mergeEnv('A=1', [{ key: 'A', value: '2' }])).toBe('A=2');
  });
});

describe('secrets and rows', () => {
  const fromApi = rowsFromVariables([
    { key: 'MODE', value: 'dev', isSecret: false },
    { key: 'TOKEN', value: MASK, isSecret: true },
  ]);

  it('marks stored secrets and sends them back masked (the API keeps their value)', () => {
    expect(fromApi[1]).toMatchObject({ key: 'TOKEN', value: MASK, isSecret: true, stored: true, origKey: 'TOKEN' });
    expect(secretsOf(fromApi)).toEqual([{ key: 'TOKEN', value: MASK, isSecret: true }]);
    expect(plainOf(fromApi)).toEqual([{ key: 'MODE', value: 'dev' }]);
    expect(validateRows(fromApi)).toEqual([]);
  });

  it('refuses a renamed stored secret or a stored secret made plain while still masked', () => {
    const renamed = fromApi.map((r) => (r.key === 'TOKEN' ? { ...r, key: 'API_TOKEN' } : r));
    expect(validateRows(renamed)).toEqual(['Enter the value of secret API_TOKEN: a stored secret\'s value cannot move to a new name']);
    const plain = fromApi.map((r) => (r.key === 'TOKEN' ? { ...r, isSecret: false } : r));
    expect(validateRows(plain)[0]).toMatch(/Enter the value of TOKEN/);
    const retyped = fromApi.map((r) => (r.key === 'TOKEN' ? { ...r, key: 'API_TOKEN', value: 'new' } : r));
    expect(validateRows(retyped)).toEqual([]);
  });

  it('checks names and duplicates, ignores blank rows', () => {
    const rows = [newRow({ key: '1BAD', value: 'x' }), newRow({ key: 'A', value: '1' }), newRow({ key: 'A', value: '2' }), newRow(), newRow({ value: 'v' })];
    expect(validateRows(rows)).toEqual([
      'Invalid variable name "1BAD": use letters, digits and _, not starting with a digit',
      'Variable A is given twice',
      'Row 5: a variable needs a name',
    ]);
    expect(validateRows([newRow({ key: 'my.key', value: '1' })], { plainKeys: false })).toEqual([]);
  });

  it('reads the raw text back into rows, keeping ids and the secret rows', () => {
    const next = rowsFromRaw(fromApi, '# c\nMODE=prod\nEXTRA=1\n');
    expect(next.map((r) => [r.key, r.value, r.isSecret])).toEqual([
      ['MODE', 'prod', false],
      ['EXTRA', '1', false],
      ['TOKEN', MASK, true],
    ]);
    expect(next[0].id).toBe(fromApi[0].id);
  });

  it('finalizes from either tab', () => {
    const rows = [...fromApi, newRow({ key: 'NEW', value: 'a b' })];
    const fromVars = finalizeEnv('vars', rows, '# keep me\nMODE=dev\n');
    expect(fromVars.errors).toEqual([]);
    expect(fromVars.raw).toBe("# keep me\nMODE=dev\nNEW='a b'\n");

    const fromRaw = finalizeEnv('raw', fromApi, 'MODE=x\n');
    expect(fromRaw.raw).toBe('MODE=x\n');
    expect(fromRaw.rows.map((r) => r.key)).toEqual(['MODE', 'TOKEN']);

    const bad = finalizeEnv('vars', [newRow({ key: 'A B', value: '1' })], 'X=1\n');
    expect(bad.errors).toHaveLength(1);
    expect(bad.raw).toBe('X=1\n');
  });
});
