import { cleanup, fireEvent, render, screen } from '@testing-library/svelte';
import { afterEach, describe, expect, it, vi } from 'vitest';
import ConfirmDialog from './ConfirmDialog.svelte';

afterEach(cleanup);

describe('ConfirmDialog', () => {
  it('is a labelled modal dialog that traps Tab and closes on Escape', async () => {
    const oncancel = vi.fn();
    const onconfirm = vi.fn();
    render(ConfirmDialog, { title: 'Remove web?', confirmLabel: 'Remove', danger: true, onconfirm, oncancel });
    const dialog = screen.getByRole('dialog', { name: 'Remove web?' });
    expect(dialog.getAttribute('aria-modal')).toBe('true');
    const cancel = screen.getByRole('button', { name: 'Cancel' });
    const confirm = screen.getByRole('button', { name: 'Remove' });
    expect(document.activeElement).toBe(cancel);

    confirm.focus();
    await fireEvent.keyDown(dialog, { key: 'Tab' });
    expect(document.activeElement).toBe(cancel); // wrapped forward
    await fireEvent.keyDown(dialog, { key: 'Tab', shiftKey: true });
    expect(document.activeElement).toBe(confirm); // wrapped backward

    await fireEvent.click(confirm);
    expect(onconfirm).toHaveBeenCalledOnce();
    await fireEvent.keyDown(dialog, { key: 'Escape' });
    expect(oncancel).toHaveBeenCalledOnce();
  });

  it('does not cancel while busy', async () => {
    const oncancel = vi.fn();
    render(ConfirmDialog, { title: 'T', confirmLabel: 'OK', busy: true, onconfirm: () => {}, oncancel });
    await fireEvent.keyDown(screen.getByRole('dialog'), { key: 'Escape' });
    expect(oncancel).not.toHaveBeenCalled();
  });
});
