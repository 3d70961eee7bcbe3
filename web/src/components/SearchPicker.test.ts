import { cleanup, fireEvent, render, screen } from '@testing-library/svelte';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { expectNoSeriousAxeViolations } from '../test-axe';
import SearchPicker, { matchItems } from './SearchPicker.svelte';

afterEach(cleanup);

const items = Array.from({ length: 300 }, (_, i) => ({
  value: `id${i}`,
  label: `app-${String(i).padStart(3, '0')}`,
  hint: i % 2 ? '(exited)' : undefined,
}));

function setup(props: Record<string, unknown> = {}) {
  const onpick = vi.fn();
  const r = render(SearchPicker, { id: 'pick', items, max: 20, onpick, ...props });
  const label = document.createElement('label');
  label.htmlFor = 'pick';
  label.textContent = 'Container';
  document.body.prepend(label);
  return { ...r, onpick, box: screen.getByRole('combobox') as HTMLInputElement };
}

describe('SearchPicker', { timeout: 20_000 }, () => {
  it('matches every word in the label or hint', () => {
    expect(matchItems(items, 'app-01 exited').map((i) => i.label)).toEqual(['app-011', 'app-013', 'app-015', 'app-017', 'app-019']);
    expect(matchItems(items, '')).toHaveLength(300);
  });

  it('lists the first matches, counts the rest, and narrows as one types', async () => {
    const { box, container } = setup();
    await fireEvent.focus(box);
    expect(box.getAttribute('aria-expanded')).toBe('true');
    expect(screen.getAllByRole('option', { selected: false }).at(-1)?.textContent).toContain('280 more: type to narrow');
    await fireEvent.input(box, { target: { value: 'app-29' } });
    expect(screen.getAllByRole('option').map((o) => o.textContent?.trim())).toEqual(
      Array.from({ length: 10 }, (_, i) => `app-29${i}${i % 2 ? ' (exited)' : ''}`),
    );
    await expectNoSeriousAxeViolations(container);
    await fireEvent.input(box, { target: { value: 'zzz' } });
    expect(screen.getByText('No match for “zzz”')).toBeTruthy();
  });

  it('moves with the arrow keys, chooses with Enter, closes with Escape', async () => {
    const { box, onpick, component } = setup();
    await fireEvent.input(box, { target: { value: 'app-1' } });
    expect(box.getAttribute('aria-activedescendant')).toBe('pick-opt-0');
    await fireEvent.keyDown(box, { key: 'ArrowDown' });
    await fireEvent.keyDown(box, { key: 'ArrowDown' });
    await fireEvent.keyDown(box, { key: 'ArrowUp' });
    expect(box.getAttribute('aria-activedescendant')).toBe('pick-opt-1');
    expect(screen.getByRole('option', { selected: true }).textContent?.trim()).toBe('app-101 (exited)');
    await fireEvent.keyDown(box, { key: 'Enter' });
    expect(onpick).toHaveBeenCalledWith(items[101]);
    expect(box.value).toBe('app-101');
    expect(box.getAttribute('aria-expanded')).toBe('false');
    expect(screen.queryByRole('listbox')).toBeNull();
    void component;

    await fireEvent.keyDown(box, { key: 'ArrowDown' });
    expect(screen.getByRole('listbox')).toBeTruthy();
    await fireEvent.keyDown(box, { key: 'Escape' });
    expect(screen.queryByRole('listbox')).toBeNull();
    expect(box.value).toBe('app-101');
  });

  it('chooses with the mouse and says when there is nothing to choose', async () => {
    const { box, onpick } = setup();
    await fireEvent.focus(box);
    await fireEvent.mouseDown(screen.getByRole('option', { name: 'app-002' }));
    expect(onpick).toHaveBeenCalledWith(items[2]);
    cleanup();
    setup({ items: [], empty: 'No other container' });
    const empty = screen.getByRole('combobox') as HTMLInputElement;
    expect(empty.disabled).toBe(true);
    expect(empty.placeholder).toBe('No other container');
  });
});
