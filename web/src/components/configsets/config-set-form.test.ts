import { describe, expect, it } from 'vitest';
import { SECRET_MASK, type ConfigSet } from '../../lib/api-templates';
import { bodyOf, emptyConfigSetForm, formOf, volumeOf, volumeRow } from './config-set-form';

const set: ConfigSet = {
  id: 4,
  name: 'db',
  description: 'Database',
  envVars: [
    { key: 'PGDATA', value: '/data', isSecret: false },
    { key: 'POSTGRES_PASSWORD', value: SECRET_MASK, isSecret: true },
  ],
  labels: [{ key: 'backup', value: 'daily' }],
  ports: [{ containerPort: '5432', hostIp: '127.0.0.1', hostPort: '5432' }],
  volumes: [
    { hostPath: 'pg', containerPath: '/data', mode: 'rw' },
    { hostPath: '/etc/pg', containerPath: '/etc/pg', mode: 'ro,z' },
  ],
  networkMode: 'none',
  restartPolicy: 'on-failure',
};

describe('config set form', () => {
  it('holds a stored secret without its value and sends the mask back', () => {
    const f = formOf(set);
    expect(f.env[1]).toEqual({ key: 'POSTGRES_PASSWORD', value: '', isSecret: true, storedSecret: 'POSTGRES_PASSWORD' });
    const body = bodyOf(f);
    expect(body).toEqual({
      name: 'db',
      description: 'Database',
      envVars: set.envVars,
      labels: [{ key: 'backup', value: 'daily' }],
      ports: [{ containerPort: '5432', hostIp: '127.0.0.1', hostPort: '5432', protocol: 'tcp' }],
      volumes: set.volumes,
      networkMode: 'none',
      restartPolicy: 'on-failure',
    });
  });

  it('sends a typed secret and a plain value the user made of a secret', () => {
    const f = formOf(set);
    f.env[1].value = 'newpass';
    expect(bodyOf(f).envVars[1]).toEqual({ key: 'POSTGRES_PASSWORD', value: 'newpass', isSecret: true });
    f.env[1].value = '';
    f.env[1].isSecret = false;
    expect(bodyOf(f).envVars[1]).toEqual({ key: 'POSTGRES_PASSWORD', value: '', isSecret: false });
  });

  it('sends the mask for a renamed stored secret, which the server refuses with its message', () => {
    const f = formOf(set);
    f.env[1].key = 'PG_PASSWORD';
    expect(bodyOf(f).envVars[1]).toEqual({ key: 'PG_PASSWORD', value: SECRET_MASK, isSecret: true });
  });

  it('drops empty rows and trims', () => {
    const f = emptyConfigSetForm();
    f.name = ' x ';
    f.env = [{ key: '', value: '', isSecret: true }];
    f.labels = [{ key: ' ', value: '' }];
    f.ports = [{ hostIp: '', hostPort: '', containerPort: ' ', protocol: 'udp' }];
    f.volumes = [{ source: ' ', target: '', mode: 'ro' }];
    expect(bodyOf(f)).toEqual({ name: 'x', description: '', envVars: [], labels: [], ports: [], volumes: [], networkMode: '', restartPolicy: '' });
  });

  it('shows a read-write volume without a mode and sends it as rw', () => {
    expect(volumeRow({ hostPath: 'a', containerPath: '/b', mode: 'rw' })).toEqual({ source: 'a', target: '/b', mode: '' });
    expect(volumeRow({ hostPath: 'a', containerPath: '/b', mode: 'ro' })).toEqual({ source: 'a', target: '/b', mode: 'ro' });
    expect(volumeOf({ source: ' a ', target: '/b', mode: '' })).toEqual({ hostPath: 'a', containerPath: '/b', mode: 'rw' });
  });
});
