import { describe, expect, it } from 'vitest';
import { ApiError } from '../../lib/api';
import { formatTime, isForbidden, localInputToRfc3339, providerLabel } from './format';
import { callbackUrl, cleanMappings, secretChange, timeoutLabel } from './settings';

describe('settings helpers', () => {
  it('turns a write-only secret field into the API rule: absent keeps, "" clears, text replaces', () => {
    expect(secretChange('', false)).toBeUndefined();
    expect(secretChange('', true)).toBe('');
    expect(secretChange('typed', true)).toBe('');
    expect(secretChange('new', false)).toBe('new');
  });

  it('drops empty mapping rows and trims', () => {
    expect(
      cleanMappings([
        { value: ' cn=ops,dc=x ', roleId: 3 },
        { value: '  ', roleId: 3 },
        { value: 'dev', roleId: 0 },
      ]),
    ).toEqual([{ value: 'cn=ops,dc=x', roleId: 3 }]);
  });

  it('builds the OIDC callback address of the console', () => {
    expect(callbackUrl('https://berth.example.com')).toBe('https://berth.example.com/api/auth/oidc/callback');
    expect(callbackUrl('http://127.0.0.1:3000/')).toBe('http://127.0.0.1:3000/api/auth/oidc/callback');
  });

  it('says a session lifetime in the largest whole unit', () => {
    expect(timeoutLabel(86400)).toBe('1 day');
    expect(timeoutLabel(7 * 86400)).toBe('7 days');
    expect(timeoutLabel(7200)).toBe('2 hours');
    expect(timeoutLabel(90 * 60)).toBe('90 minutes');
  });
});

describe('format helpers', () => {
  it('labels sign-in providers', () => {
    expect(providerLabel('local')).toBe('Local');
    expect(providerLabel(undefined)).toBe('Local');
    expect(providerLabel('ldap:Corp directory')).toBe('LDAP (Corp directory)');
    expect(providerLabel('oidc:Dex')).toBe('OIDC (Dex)');
    expect(providerLabel('oidc')).toBe('OIDC');
  });

  it('turns a datetime-local value into RFC 3339 without fractions', () => {
    expect(localInputToRfc3339('')).toBeUndefined();
    expect(localInputToRfc3339('nonsense')).toBeUndefined();
    const v = localInputToRfc3339('2025-01-02T03:04');
    expect(v).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:00Z$/);
    expect(new Date(v!).getTime()).toBe(new Date('2025-01-02T03:04').getTime());
  });

  it('knows a refusal and formats missing times', () => {
    expect(isForbidden(new ApiError(403, 'Permission denied'))).toBe(true);
    expect(isForbidden(new ApiError(401, 'x'))).toBe(false);
    expect(isForbidden(new Error('x'))).toBe(false);
    expect(formatTime(null)).toBe('—');
    expect(formatTime('garbage')).toBe('garbage');
  });
});
