import axe from 'axe-core';
import { expect } from 'vitest';

/** Runs axe-core on a rendered tree; fails on serious or critical violations. */
export async function expectNoSeriousAxeViolations(root: Element): Promise<void> {
  const result = await axe.run(root, {
    // jsdom does no layout, so contrast cannot be computed here (the browser e2e tests check it).
    rules: { 'color-contrast': { enabled: false } },
  });
  const bad = result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(bad.map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`)).toEqual([]);
}
