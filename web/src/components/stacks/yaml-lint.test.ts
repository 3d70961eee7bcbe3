import { describe, expect, it } from 'vitest';
import { errorsOf, lintCompose } from './yaml-lint';

const good = `services:
  web:
    image: berth-test/busybox:1
    command: sleep 600
    labels:
      berth.test: abc
`;

describe('lintCompose', () => {
  it('accepts a valid compose file', () => {
    expect(lintCompose(good)).toEqual([]);
  });

  it('marks a YAML syntax error with its line and range', () => {
    const text = 'services:\n  web:\n    image: x\n   bad: [\n';
    const p = errorsOf(lintCompose(text));
    expect(p.length).toBeGreaterThan(0);
    expect(p[0].line).toBe(4);
    expect(p[0].from).toBeGreaterThanOrEqual(text.indexOf('   bad'));
    expect(p[0].to).toBeGreaterThanOrEqual(p[0].from);
    expect(p[0].message).not.toContain('\n');
  });

  it('marks an unterminated quote', () => {
    const p = lintCompose('services:\n  web:\n    image: "busybox\n');
    expect(p[0].severity).toBe('error');
    expect(p[0].message).toMatch(/quote/i);
  });

  it('marks a duplicate key', () => {
    const p = lintCompose('services:\n  web:\n    image: a\n    image: b\n');
    expect(p[0].severity).toBe('error');
    expect(p[0].line).toBe(4);
  });

  it('requires a top-level services: section', () => {
    const p = lintCompose('version: "3"\nvolumes:\n  data: {}\n');
    expect(p).toHaveLength(1);
    expect(p[0]).toMatchObject({ severity: 'error', line: 1, from: 0, to: 'version: "3"'.length });
    expect(p[0].message).toMatch(/services/);
  });

  it('refuses an empty document, a list, an empty or scalar services', () => {
    expect(lintCompose('')[0].message).toMatch(/empty/);
    expect(lintCompose('# only a comment\n')[0].message).toMatch(/empty/);
    expect(lintCompose('- a\n- b\n')[0].message).toMatch(/mapping/);
    expect(lintCompose('services:\n')[0].message).toMatch(/services: is empty/);
    expect(lintCompose('services: {}\n')[0].message).toMatch(/services: is empty/);
    const scalar = lintCompose('services: 3\n');
    expect(scalar[0].message).toMatch(/mapping/);
    expect(scalar[0].from).toBe('services: '.length);
  });

  it('refuses a service that is not a mapping', () => {
    const p = lintCompose('services:\n  web: nginx\n');
    expect(p[0].message).toMatch(/Service web/);
    expect(p[0].line).toBe(2);
  });

  it('accepts a service without settings yet (compose names the error itself)', () => {
    expect(lintCompose('services:\n  web:\n')).toEqual([]);
  });
});
