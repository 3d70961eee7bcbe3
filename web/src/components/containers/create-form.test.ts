import { describe, expect, it } from 'vitest';
import { editBody, emptyForm, fromInspect, removedLimits, splitCommand, splitPair, toBody, validate, type CreateForm } from './create-form';
import { rates } from './stats-history';

const form = (f: Partial<CreateForm>): CreateForm => ({ ...emptyForm(), ...f });

describe('splitCommand', () => {
  it('splits like a shell splits words', () => {
    expect(splitCommand('sleep 600')).toEqual(['sleep', '600']);
    expect(splitCommand('  sh -c "echo hi; sleep 1"  ')).toEqual(['sh', '-c', 'echo hi; sleep 1']);
    expect(splitCommand(`echo 'a "b"' "c \\"d\\"" e\\ f ''`)).toEqual(['echo', 'a "b"', 'c "d"', 'e f', '']);
    expect(splitCommand('')).toEqual([]);
  });
  it('refuses an unclosed quote', () => {
    expect(() => splitCommand('sh -c "echo')).toThrow('Unclosed double quote');
    expect(() => splitCommand("it's")).toThrow('Unclosed single quote');
  });
});

describe('validate', () => {
  it('needs an image and nothing else', () => {
    expect(validate(emptyForm())).toEqual({ image: 'Image is required.' });
    expect(validate(form({ image: 'busybox' }))).toEqual({});
  });

  it('explains each invalid field by its id', () => {
    const e = validate(
      form({
        image: 'bad image',
        name: '-x',
        command: 'sh -c "oops',
        ports: [
          { host: '8080', container: '80', protocol: 'tcp' },
          { host: '8080', container: '81', protocol: 'tcp' },
          { host: '70000', container: '', protocol: 'udp' },
          { host: '', container: '', protocol: 'tcp' },
        ],
        env: [
          { key: 'A', value: '1' },
          { key: 'A', value: '2' },
          { key: 'B C', value: '' },
          { key: '', value: 'orphan' },
        ],
        labels: [{ key: '', value: 'x' }],
        volumes: [
          { source: 'data', target: 'relative', readOnly: false },
          { source: 'not a name', target: '/x', readOnly: false },
          { source: '', target: '', readOnly: true },
        ],
        restartPolicy: 'on-failure',
        restartRetries: 'three',
        memory: '4',
        cpus: '-1',
      }),
    );
    expect(e).toEqual({
      image: 'An image reference has no spaces.',
      name: "Use letters, digits, '_', '.' and '-', starting with a letter or digit.",
      command: 'Unclosed double quote.',
      'ports.1.host': 'Host port 8080/tcp is already used by row 1.',
      'ports.2.container': 'Container port is required.',
      'ports.2.host': 'A port is a number from 1 to 65535.',
      'env.1.key': 'A is already set in row 1.',
      'env.2.key': 'A variable name has no spaces and no "=".',
      'env.3.key': 'Variable name is required.',
      'labels.0.key': 'Label name is required.',
      'volumes.0.target': 'The path in the container is absolute (starts with /).',
      'volumes.1.source': 'Give a volume name or an absolute host path.',
      restartRetries: 'Retries is a whole number (empty for no limit).',
      memory: 'The engine needs at least 6 MiB.',
      cpus: 'CPU limit is a positive number, e.g. 0.5.',
    });
  });

  it('allows the same host port for tcp and udp', () => {
    expect(
      validate(
        form({
          image: 'x',
          ports: [
            { host: '53', container: '53', protocol: 'tcp' },
            { host: '53', container: '53', protocol: 'udp' },
          ],
        }),
      ),
    ).toEqual({});
  });
});

describe('toBody', () => {
  it('builds the POST /api/containers body the server reads', () => {
    expect(
      toBody(
        form({
          name: ' web-1 ',
          image: ' nginx:1.27 ',
          command: 'sh -c "echo hi"',
          ports: [
            { host: '8080', container: '80', protocol: 'tcp' },
            { host: '', container: '53', protocol: 'udp' },
            { host: '', container: '', protocol: 'tcp' },
          ],
          env: [
            { key: 'A', value: 'x=y' },
            { key: '', value: '' },
          ],
          labels: [{ key: 'berth.test', value: 'abc' }],
          volumes: [
            { source: 'data', target: '/data', readOnly: false },
            { source: '/etc/hosts', target: '/h', readOnly: true },
          ],
          network: 'backend',
          restartPolicy: 'on-failure',
          restartRetries: '3',
          memory: '1.5',
          memoryUnit: 'GiB',
          cpus: '0.5',
          tty: true,
          startAfterCreate: false,
        }),
      ),
    ).toEqual({
      name: 'web-1',
      image: 'nginx:1.27',
      command: ['sh', '-c', 'echo hi'],
      ports: [
        { containerPort: '80', hostPort: '8080', protocol: 'tcp' },
        { containerPort: '53', hostPort: '', protocol: 'udp' },
      ],
      env: ['A=x=y'],
      labels: { 'berth.test': 'abc' },
      volumes: ['data:/data', '/etc/hosts:/h:ro'],
      networkMode: 'backend',
      restartPolicy: 'on-failure:3',
      memory: 1.5 * 1024 ** 3,
      nanoCpus: 500_000_000,
      tty: true,
      startAfterCreate: false,
    });
  });

  it('leaves out what was not given', () => {
    expect(toBody(form({ image: 'busybox', restartPolicy: 'unless-stopped', memory: '64' }))).toEqual({
      image: 'busybox',
      restartPolicy: 'unless-stopped',
      memory: 64 * 1024 ** 2,
      startAfterCreate: true,
    });
  });
});

it('splitPair splits NAME=VALUE', () => {
  expect(splitPair('A=b=c')).toEqual({ key: 'A', value: 'b=c' });
  expect(splitPair('=x')).toBeNull();
  expect(splitPair('plain')).toBeNull();
});

it('rates turns running totals into per-second rates', () => {
  const s = (t: number, rx: number, tx: number) => ({
    timestamp: t,
    networkRx: rx,
    networkTx: tx,
    blockRead: 0,
    blockWrite: rx,
    cpuPercent: 0,
    memoryUsage: 0,
    memoryLimit: 0,
    memoryPercent: 0,
  });
  expect(rates([s(0, 0, 0), s(2000, 2048, 100), s(4000, 1024, 300), s(4000, 5000, 5000)])).toEqual([
    { rx: 1024, tx: 50, read: 0, write: 1024 },
    { rx: 0, tx: 100, read: 0, write: 0 },
  ]);
});

describe('the advanced options, edit and the image check', () => {
  it('joinCommand quotes what splitCommand splits back', async () => {
    const { joinCommand, splitCommand } = await import('./create-form');
    const args = ['sh', '-c', "echo 'hi there'; sleep 1", '', 'a"b'];
    expect(splitCommand(joinCommand(args))).toEqual(args);
    expect(joinCommand(['sleep', '600'])).toBe('sleep 600');
  });

  it('validates the advanced fields', async () => {
    const { emptyForm, validate } = await import('./create-form');
    const f = {
      ...emptyForm(),
      image: 'x',
      workingDir: 'srv',
      capAdd: 'NET_ADMIN bad-cap',
      dns: '1.1.1.1 dns.example',
      devices: [{ host: 'fuse', container: '', permissions: 'rwx' }],
      healthMode: 'custom' as const,
      healthTest: '',
      healthInterval: '0',
      pidsLimit: 'many',
    };
    expect(validate(f)).toEqual({
      workingDir: 'The working directory is an absolute path (starts with /).',
      capAdd: '“bad-cap” is not a capability name (e.g. NET_ADMIN).',
      dns: '“dns.example” is not an IP address.',
      'devices.0.host': 'A device is a host path such as /dev/fuse.',
      'devices.0.permissions': 'Permissions are letters of r, w and m.',
      healthTest: 'The health check command is required.',
      healthInterval: 'A duration in seconds, at least 0.001 (1 ms).',
      pidsLimit: 'Process limit is a whole number (-1 for no limit).',
    });
  });

  it('an edit sends what was emptied, so the update removes it; "none" turns the health check off', async () => {
    const { emptyForm, toBody } = await import('./create-form');
    const f = { ...emptyForm(), image: 'busybox', healthMode: 'none' as const };
    expect(toBody(f)).toEqual({ image: 'busybox', startAfterCreate: true, healthcheck: null });
    const b = toBody(f, true);
    expect(b).toMatchObject({ image: 'busybox', ports: [], env: [], volumes: [], capAdd: [], privileged: false, memory: 0, networkMode: 'bridge' });
    expect(b).not.toHaveProperty('startAfterCreate');
  });

  it('fromInspect reads a container back into the form', async () => {
    const { fromInspect, toBody } = await import('./create-form');
    const f = fromInspect({
      Id: 'abcdefabcdef' + '0'.repeat(52),
      Name: '/api',
      Config: { Image: 'app:2', Cmd: ['sh', '-c', 'run it'], Hostname: 'abcdefabcdef', Env: ['A=1=2'], Tty: true },
      HostConfig: {
        NetworkMode: 'backend',
        Memory: 2 * 1024 ** 3,
        NanoCpus: 1.5e9,
        RestartPolicy: { Name: 'unless-stopped' },
        Devices: [{ PathOnHost: '/dev/fuse', PathInContainer: '/dev/fuse', CgroupPermissions: 'rwm' }],
        LogConfig: { Type: 'local', Config: { 'max-size': '5m' } },
      },
      Mounts: [{ Type: 'bind', Source: '/srv/conf', Destination: '/conf', RW: false }],
      NetworkSettings: { Networks: { backend: { Aliases: ['abcdefabcdef', 'api', 'db'] } } },
    });
    expect(f).toMatchObject({
      name: 'api',
      command: "sh -c 'run it'",
      hostname: '',
      env: [{ key: 'A', value: '1=2' }],
      network: 'backend',
      memory: '2',
      memoryUnit: 'GiB',
      cpus: '1.5',
      restartPolicy: 'unless-stopped',
      volumes: [{ source: '/srv/conf', target: '/conf', readOnly: true }],
      logDriver: 'local',
      logOptions: [{ key: 'max-size', value: '5m' }],
      networkAliases: 'db',
      tty: true,
    });
    expect(toBody(f)).toMatchObject({ command: ['sh', '-c', 'run it'], volumes: ['/srv/conf:/conf:ro'], memory: 2 * 1024 ** 3, nanoCpus: 1.5e9 });
  });

  it('imageMatches finds a reference among the engine images as the engine names them', async () => {
    const { imageMatches } = await import('./create-form');
    const img = { Id: 'sha256:0123456789abcdef', RepoTags: ['nginx:1.27', 'busybox:latest', 'localhost:5000/team/app:2'] };
    expect(imageMatches(img, 'docker.io/library/nginx:1.27')).toBe(true);
    expect(imageMatches(img, 'busybox')).toBe(true);
    expect(imageMatches(img, 'localhost:5000/team/app:2')).toBe(true);
    expect(imageMatches(img, 'localhost:5000/team/app')).toBe(false);
    expect(imageMatches(img, 'nginx')).toBe(false);
    expect(imageMatches(img, '0123456789ab')).toBe(true);
  });
});

describe('editBody', () => {
  const base = form({ image: 'busybox', name: 'web', command: 'sleep 600', memory: '64', pidsLimit: '100', restartPolicy: 'always' });
  it('sends only what changed, and nothing when nothing did', () => {
    expect(editBody(base, structuredClone(base))).toEqual({ body: {}, plan: 'none' });
    expect(editBody(base, { ...base, command: '' })).toEqual({ body: { command: [] }, plan: 'recreate' });
    expect(editBody(base, { ...base, env: [{ key: 'A', value: '1' }] })).toEqual({ body: { env: ['A=1'] }, plan: 'recreate' });
  });
  it('applies resources and restart policy in place, but not the removal of a limit', () => {
    expect(editBody(base, { ...base, memory: '128', restartPolicy: 'no' })).toEqual({
      body: { memory: 128 * 1024 ** 2, memorySwap: 256 * 1024 ** 2, restartPolicy: 'no' },
      plan: 'live',
    });
    expect(editBody(base, { ...base, pidsLimit: '' })).toEqual({ body: { pidsLimit: -1 }, plan: 'live' });
    expect(editBody(base, { ...base, memory: '' }).plan).toBe('recreate');
    expect(editBody(base, { ...base, memory: '128', name: 'web2' }).plan).toBe('recreate');
  });
  it('names the limits an edit removes (docker update cannot: they recreate)', () => {
    const limited = { ...base, cpus: '0.5', memoryReservation: '32' };
    expect(removedLimits(limited, { ...limited, memory: '', cpus: '' })).toEqual(['memory limit', 'CPU limit']);
    expect(removedLimits(limited, { ...limited, memoryReservation: '' })).toEqual(['memory reservation']);
    expect(removedLimits(limited, { ...limited, memory: '128' })).toEqual([]);
    expect(removedLimits(base, { ...base, cpus: '1' })).toEqual([]);
  });
  it("goes back to the image's health check with an empty test (the engine's inherit), from a command or from none", () => {
    const custom = { ...base, healthMode: 'custom' as const, healthTest: 'true' };
    expect(editBody(custom, { ...custom, healthMode: 'image' })).toEqual({ body: { healthcheck: { test: [] } }, plan: 'recreate' });
    const off = { ...base, healthMode: 'none' as const };
    expect(editBody(off, { ...off, healthMode: 'image' }).body).toEqual({ healthcheck: { test: [] } });
    expect(editBody(base, { ...base, healthMode: 'none' }).body).toEqual({ healthcheck: null });
  });
});

describe('fromInspect', () => {
  it("leaves out the image's own variables and labels, keeps the container's", () => {
    const f = fromInspect(
      { Config: { Image: 'x', Env: ['PATH=/bin', 'MODE=1', 'HOME=/root2'], Labels: { a: '1', b: '2', c: '3' } } },
      { Env: ['PATH=/bin', 'HOME=/root'], Labels: { a: '1', b: 'x' } },
    );
    expect(f.env).toEqual([
      { key: 'MODE', value: '1' },
      { key: 'HOME', value: '/root2' },
    ]);
    expect(f.labels.map((l) => l.key)).toEqual(['b', 'c']);
  });
  it("shows the image's health check (which the engine copies into the container) as the image's, not as a command", () => {
    const hc = { Test: ['CMD-SHELL', 'wget -q localhost'], Interval: 30e9 };
    expect(fromInspect({ Config: { Image: 'x', Healthcheck: hc } }, { Healthcheck: hc }).healthMode).toBe('image');
    const own = fromInspect({ Config: { Image: 'x', Healthcheck: { ...hc, Interval: 10e9 } } }, { Healthcheck: hc });
    expect([own.healthMode, own.healthTest, own.healthInterval]).toEqual(['custom', 'wget -q localhost', '10']);
    expect(fromInspect({ Config: { Image: 'x', Healthcheck: { Test: ['NONE'] } } }, { Healthcheck: hc }).healthMode).toBe('none');
  });
});
