import { describe, expect, it } from 'vitest';
import {
  emptyEnvironmentForm,
  emptyNetworkForm,
  emptyVolumeForm,
  environmentAddress,
  environmentForm,
  environmentRequest,
  formatKeyValues,
  isCIDR,
  isIP,
  isPem,
  networkRequest,
  parseKeyValues,
  parseLabels,
  subnetsOf,
  validateEnvironment,
  validateNetwork,
  validateVolume,
  volumeRequest,
} from './forms';

const PEM_CERT = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
const PEM_KEY = '-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----\n';

describe('key=value lists', () => {
  it('parses lines, ignoring blanks and comments, keeping "=" in values', () => {
    expect(parseKeyValues('a=1\n\n# note\n b = x=y \nc=')).toEqual({ values: { a: '1', b: 'x=y', c: '' } });
  });
  it('refuses a line without "=", an empty key and a repeated key', () => {
    expect(parseKeyValues('a=1\noops').error).toBe('Line 2: use key=value');
    expect(parseKeyValues('=1').error).toBe('Line 1: use key=value');
    expect(parseKeyValues('a=1\na=2').error).toBe('Line 2: “a” is given twice');
  });
  it('formats back', () => {
    expect(formatKeyValues({ a: '1', b: 'x=y' })).toBe('a=1\nb=x=y');
    expect(formatKeyValues(null)).toBe('');
  });
});

describe('volume form', () => {
  it('needs a valid name', () => {
    expect(validateVolume({ ...emptyVolumeForm(), name: '' })).toEqual({ name: 'Volume name is required' });
    expect(validateVolume({ ...emptyVolumeForm(), name: 'a' }).name).toMatch(/2 to 255/);
    expect(validateVolume({ ...emptyVolumeForm(), name: '-data' }).name).toMatch(/starting with a letter or digit/);
    expect(validateVolume({ ...emptyVolumeForm(), name: 'my vol' }).name).toBeTruthy();
    expect(validateVolume({ ...emptyVolumeForm(), name: 'e2e-data_1.x' })).toEqual({});
  });
  it('checks the options of the local driver as the server does', () => {
    const f = { ...emptyVolumeForm(), name: 'data' };
    expect(validateVolume({ ...f, driverOpts: 'size=1g' }).driverOpts).toMatch(/not “size”/);
    expect(validateVolume({ ...f, driverOpts: 'type=nfs' }).driverOpts).toMatch(/needs the device option/);
    expect(validateVolume({ ...f, driverOpts: 'type=nfs\ndevice=:/x' })).toEqual({});
    expect(validateVolume({ ...f, driver: 'rexray', driverOpts: 'size=1g' })).toEqual({});
    expect(validateVolume({ ...f, labels: 'nope' }).labels).toBe('Line 1: use key=value');
  });
  it('builds the request', () => {
    expect(volumeRequest({ name: ' data ', driver: '', driverOpts: '', labels: 'berth.test=x' })).toEqual({
      name: 'data',
      driver: 'local',
      driverOpts: {},
      labels: { 'berth.test': 'x' },
    });
  });
});

describe('network form', () => {
  it('checks name, subnet and gateway', () => {
    const f = { ...emptyNetworkForm(), name: 'backend' };
    expect(validateNetwork(f)).toEqual({});
    expect(validateNetwork({ ...f, name: '' }).name).toBe('Network name is required');
    expect(validateNetwork({ ...f, subnet: '172.30.0.0' }).subnet).toMatch(/CIDR/);
    expect(validateNetwork({ ...f, subnet: '172.30.0.0/33' }).subnet).toMatch(/CIDR/);
    expect(validateNetwork({ ...f, gateway: '172.30.0.1' }).gateway).toBe('A gateway needs a subnet');
    expect(validateNetwork({ ...f, subnet: '172.30.0.0/16', gateway: '172.30.0' }).gateway).toMatch(/IP address/);
    expect(validateNetwork({ ...f, subnet: '172.30.0.0/16', gateway: '172.30.0.1' })).toEqual({});
    expect(validateNetwork({ ...f, subnet: 'fd00:1::/64', gateway: 'fd00:1::1' })).toEqual({});
  });
  it('builds the request with IPAM only when a subnet is given', () => {
    const f = { ...emptyNetworkForm(), name: 'n', attachable: true, labels: 'a=b' };
    expect(networkRequest(f)).toEqual({ name: 'n', driver: 'bridge', internal: false, attachable: true, labels: { a: 'b' } });
    expect(networkRequest({ ...f, subnet: '10.9.0.0/24', gateway: '10.9.0.1' }).ipam).toEqual({
      config: [{ subnet: '10.9.0.0/24', gateway: '10.9.0.1' }],
    });
    expect(networkRequest({ ...f, subnet: '10.9.0.0/24' }).ipam).toEqual({ config: [{ subnet: '10.9.0.0/24' }] });
  });
  it('recognises addresses and prefixes', () => {
    expect(isIP('10.0.0.1')).toBe(true);
    expect(isIP('10.0.0.256')).toBe(false);
    expect(isIP('::1')).toBe(true);
    expect(isIP('1::2::3')).toBe(false);
    expect(isCIDR('10.0.0.0/8')).toBe(true);
    expect(isCIDR('10.0.0.0/40')).toBe(false);
    expect(isCIDR('fd00::/64')).toBe(true);
    expect(subnetsOf({ config: [{ subnet: '10.0.0.0/8' }, {}, { subnet: 'fd00::/64' }] })).toBe('10.0.0.0/8, fd00::/64');
    expect(subnetsOf(null)).toBe('');
  });
});

describe('environment form', () => {
  const socket = { ...emptyEnvironmentForm(), name: 'second' };
  const direct = { ...socket, connectionType: 'direct', host: '10.0.0.5', port: '2376', protocol: 'https' };

  it('checks the fields of each connection type', () => {
    expect(validateEnvironment(socket)).toEqual({});
    expect(validateEnvironment({ ...socket, name: ' ' }).name).toBe('Environment name is required');
    expect(validateEnvironment({ ...socket, socketPath: 'docker.sock' }).socketPath).toMatch(/absolute/);
    expect(validateEnvironment({ ...direct, host: '' }).host).toMatch(/required/);
    expect(validateEnvironment({ ...direct, host: 'tcp://x:2375' }).host).toMatch(/host name or address only/);
    expect(validateEnvironment({ ...direct, port: '70000' }).port).toMatch(/between 1 and 65535/);
    expect(validateEnvironment({ ...direct, port: 'x' }).port).toMatch(/between 1 and 65535/);
    expect(validateEnvironment({ ...socket, labels: Array.from({ length: 11 }, (_, i) => `l${i}`).join(',') }).labels).toBe(
      'At most 10 labels',
    );
  });

  it('needs a certificate and its key together, the key possibly stored', () => {
    expect(validateEnvironment({ ...direct, tlsCert: PEM_CERT }).tlsKey).toMatch(/needs its private key/);
    expect(validateEnvironment({ ...direct, tlsCert: PEM_CERT }, true)).toEqual({});
    expect(validateEnvironment({ ...direct, tlsCert: PEM_CERT, clearTlsKey: true }, true).tlsKey).toMatch(/needs its private key/);
    expect(validateEnvironment({ ...direct, tlsKey: PEM_KEY }).tlsCert).toMatch(/needs its client certificate/);
    expect(validateEnvironment({ ...direct, tlsCert: PEM_CERT, tlsKey: PEM_KEY })).toEqual({});
    expect(validateEnvironment({ ...direct, tlsCa: 'not pem' }).tlsCa).toMatch(/Not a PEM certificate/);
    expect(validateEnvironment({ ...direct, tlsCert: PEM_CERT, tlsKey: PEM_CERT }).tlsKey).toMatch(/Not a PEM private key/);
    // http: TLS fields are not looked at
    expect(validateEnvironment({ ...direct, protocol: 'http', tlsCa: 'junk' })).toEqual({});
  });

  it('recognises PEM blocks', () => {
    expect(isPem(PEM_CERT, 'CERTIFICATE')).toBe(true);
    expect(isPem(PEM_KEY, 'PRIVATE KEY')).toBe(true);
    expect(isPem('-----BEGIN EC PRIVATE KEY-----\nx\n-----END EC PRIVATE KEY-----', 'PRIVATE KEY')).toBe(true);
    expect(isPem(PEM_CERT, 'PRIVATE KEY')).toBe(false);
  });

  it('builds socket and direct requests', () => {
    expect(environmentRequest({ ...socket, labels: 'prod, eu\nprod' }, 'create')).toEqual({
      name: 'second',
      connectionType: 'socket',
      socketPath: '/var/run/docker.sock',
      labels: ['prod', 'eu'],
      publicIp: '',
    });
    expect(environmentRequest({ ...direct, tlsCa: PEM_CERT, tlsCert: PEM_CERT, tlsKey: PEM_KEY }, 'create')).toMatchObject({
      connectionType: 'direct',
      host: '10.0.0.5',
      port: 2376,
      protocol: 'https',
      tlsCa: PEM_CERT,
      tlsCert: PEM_CERT,
      tlsKey: PEM_KEY,
      tlsSkipVerify: false,
    });
  });

  it('sends the key only when replaced or removed, and clears TLS when leaving https', () => {
    const kept = environmentRequest({ ...direct, tlsCert: PEM_CERT }, 'update');
    expect('tlsKey' in kept).toBe(false);
    expect(environmentRequest({ ...direct, tlsCert: '', clearTlsKey: true }, 'update').tlsKey).toBe('');
    expect(environmentRequest({ ...direct, clearTlsKey: true }, 'test').tlsKey).toBeUndefined();
    expect(environmentRequest({ ...direct, protocol: 'http' }, 'update')).toMatchObject({ tlsCa: '', tlsCert: '', tlsKey: '' });
    expect('tlsKey' in environmentRequest({ ...direct, protocol: 'http' }, 'create')).toBe(false);
  });

  it('loads a saved environment without its secrets', () => {
    const f = environmentForm({ id: 2, name: 'x', connectionType: 'direct', host: 'h', port: 2376, protocol: 'https', hasTlsKey: true, labels: ['a', 'b'] });
    expect(f).toMatchObject({ name: 'x', host: 'h', port: '2376', protocol: 'https', tlsKey: '', labels: 'a\nb' });
  });

  const std = { ...socket, connectionType: 'agent-standard', host: 'agent.lan', port: '2376', agentToken: 's3cret', tlsCa: PEM_CERT };

  it('checks a standard agent: host, port, token and how its certificate is trusted', () => {
    expect(validateEnvironment(std)).toEqual({});
    expect(validateEnvironment({ ...std, host: '' }).host).toBe('Host is required for a standard agent');
    expect(validateEnvironment({ ...std, agentToken: '' }).agentToken).toMatch(/token is required/);
    expect(validateEnvironment({ ...std, agentToken: '' }, false, true)).toEqual({}); // the stored token is kept
    expect(validateEnvironment({ ...std, agentToken: 'a b' }).agentToken).toMatch(/no spaces/);
    expect(validateEnvironment({ ...std, tlsCa: '' }).tlsCa).toMatch(/certificate, or skip verification/);
    expect(validateEnvironment({ ...std, tlsCa: '', tlsSkipVerify: true })).toEqual({});
    expect(validateEnvironment({ ...std, tlsCa: 'junk' }).tlsCa).toMatch(/Not a PEM certificate/);
    // an edge environment needs a name only
    expect(validateEnvironment({ ...socket, connectionType: 'agent-edge', socketPath: '' })).toEqual({});
  });

  it('builds agent requests', () => {
    expect(environmentRequest(std, 'create')).toEqual({
      name: 'second',
      connectionType: 'agent-standard',
      host: 'agent.lan',
      port: 2376,
      agentToken: 's3cret',
      tlsCa: PEM_CERT,
      tlsCert: '',
      tlsSkipVerify: false,
      labels: [],
      publicIp: '',
    });
    expect('agentToken' in environmentRequest({ ...std, agentToken: '' }, 'update')).toBe(false);
    expect(environmentRequest({ ...socket, connectionType: 'agent-edge' }, 'create')).toEqual({
      name: 'second',
      connectionType: 'agent-edge',
      labels: [],
      publicIp: '',
    });
    // leaving agent-standard drops its token and TLS material
    expect(environmentRequest({ ...std, connectionType: 'agent-edge' }, 'update')).toMatchObject({ agentToken: '', tlsCa: '', tlsKey: '' });
  });

  it('parses labels and shows addresses', () => {
    expect(parseLabels(' a,b\n\na ')).toEqual(['a', 'b']);
    expect(environmentAddress({ connectionType: 'socket', socketPath: '/run/docker.sock' })).toBe('unix:///run/docker.sock');
    expect(environmentAddress({ connectionType: 'direct', host: 'h', port: 2376, protocol: 'https' })).toBe('https://h:2376');
    expect(environmentAddress({ connectionType: 'agent-edge' })).toBe('edge agent (connects in)');
    expect(environmentAddress({ connectionType: 'agent-standard', host: 'agent.lan', port: 2376, protocol: 'http' })).toBe('agent.lan:2376');
  });
});

describe('Hawser environments and who may change environments', () => {
  it('builds the requests of both Hawser kinds', () => {
    const f = { ...emptyEnvironmentForm(), name: 'old', connectionType: 'hawser-standard', host: '10.0.0.9', port: '2376', agentToken: ' t0k ' };
    expect(validateEnvironment(f)).toEqual({});
    expect(environmentRequest(f, 'create')).toMatchObject({ connectionType: 'hawser-standard', host: '10.0.0.9', port: 2376, protocol: 'http', agentToken: 't0k' });
    expect(validateEnvironment({ ...f, host: '' }).host).toBe('Host is required for a standard agent');
    const e = { ...emptyEnvironmentForm(), name: 'far', connectionType: 'hawser-edge' };
    expect(validateEnvironment(e)).toEqual({});
    const req = environmentRequest(e, 'create');
    expect(req.host).toBeUndefined();
    expect(req.agentToken).toBeUndefined();
    expect(environmentAddress({ connectionType: 'hawser-edge' })).toBe('Hawser edge agent (connects in)');
  });
});
