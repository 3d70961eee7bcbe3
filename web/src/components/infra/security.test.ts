import { describe, expect, it } from 'vitest';
import { badPath, pathsOf, securitySwitches } from './security';

describe('security settings form', () => {
  it('reads one directory a line', () => {
    expect(pathsOf(' /srv/data \n\n/opt/apps\n')).toEqual(['/srv/data', '/opt/apps']);
  });
  it('names the first relative directory', () => {
    expect(badPath(['/srv', 'data', 'x'])).toBe('data');
    expect(badPath(['/srv'])).toBeNull();
  });
  it('has one switch per setting of the API', () => {
    expect(securitySwitches.map((s) => s.key)).toEqual([
      'allowBindMounts',
      'allowPrivileged',
      'allowHostNetwork',
      'allowHostPID',
      'allowHostIPC',
      'allowDevices',
      'allowCapAdd',
      'allowSecurityOpt',
    ]);
  });
});
