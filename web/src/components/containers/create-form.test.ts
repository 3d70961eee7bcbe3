import { describe, expect, it } from 'vitest';
import { emptyForm, splitCommand, splitPair, toBody, validate, type CreateForm } from './create-form';
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
