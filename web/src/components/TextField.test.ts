import { cleanup, render, screen } from '@testing-library/svelte';
import { afterEach, describe, expect, it } from 'vitest';
import TextField from './TextField.svelte';

afterEach(cleanup);

describe('TextField', () => {
  it('ties its label and its hint to the input', () => {
    render(TextField, { id: 'url', label: 'Server URL', value: 'ldap://', required: true, hint: 'ldap://host:389' });
    const input = screen.getByLabelText('Server URL') as HTMLInputElement;
    expect(input.id).toBe('url');
    expect(input.value).toBe('ldap://');
    expect(input.type).toBe('text');
    expect(input.required).toBe(true);
    expect(input.getAttribute('autocomplete')).toBe('off');
    expect(input.getAttribute('aria-describedby')).toBe('url-hint');
    expect(document.getElementById('url-hint')?.textContent).toBe('ldap://host:389');
  });

  it('has no description without a hint and passes other attributes to the input', () => {
    render(TextField, {
      id: 'pw',
      label: 'Password',
      type: 'password',
      autocomplete: 'new-password',
      placeholder: 'unchanged',
      spellcheck: 'false',
      disabled: true,
      wide: true,
    });
    const input = screen.getByLabelText('Password') as HTMLInputElement;
    expect(input.type).toBe('password');
    expect(input.required).toBe(false);
    expect(input.disabled).toBe(true);
    expect(input.placeholder).toBe('unchanged');
    expect(input.getAttribute('spellcheck')).toBe('false');
    expect(input.getAttribute('autocomplete')).toBe('new-password');
    expect(input.hasAttribute('aria-describedby')).toBe(false);
    expect(input.closest('.field')?.classList.contains('wide')).toBe(true);
  });
});
