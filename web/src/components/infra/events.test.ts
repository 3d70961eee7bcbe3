import { describe, expect, it } from 'vitest';
import { addEvent, changesCounts, isNoise, parseEventName, toEventRow, type EventRow } from './events';

describe('parseEventName', () => {
  it('splits the type from the action at the first hyphen', () => {
    expect(parseEventName('container-start')).toEqual({ type: 'container', action: 'start' });
    expect(parseEventName('container-health_status: healthy')).toEqual({ type: 'container', action: 'health_status: healthy' });
    expect(parseEventName('network-connect')).toEqual({ type: 'network', action: 'connect' });
    expect(parseEventName('container-exec_start: sh -c a-b')).toEqual({ type: 'container', action: 'exec_start: sh -c a-b' });
    expect(parseEventName('odd')).toEqual({ type: 'odd', action: '' });
    expect(parseEventName('')).toEqual({ type: 'event', action: '' });
  });
});

describe('toEventRow', () => {
  const now = new Date('2025-01-02T03:04:05Z');
  it('names the actor, or its short id when the engine gave no name', () => {
    const r = toEventRow({ event: 'container-die', id: 'abc', name: 'web' }, 1, 'local', now);
    expect(r).toMatchObject({ type: 'container', action: 'die', actor: 'web', envId: 1, envName: 'local', time: now });
    expect(toEventRow({ event: 'image-pull', id: 'sha256:0123456789abcdef0123' }, 1, 'local', now)?.actor).toBe('0123456789ab');
    expect(toEventRow({ event: 'volume-create' }, 1, 'local', now)?.actor).toBe('');
    expect(toEventRow({ event: 'volume-create' }, 1, 'local', now)?.time).toBe(now);
    expect(toEventRow({ event: 'volume-create', time: 1700000000 }, 1, 'local', now)?.time.getTime()).toBe(1700000000000);
  });

  it('drops the exec events of health checks', () => {
    expect(isNoise('container', 'exec_start: /bin/sh -c true')).toBe(true);
    expect(isNoise('container', 'exec_create: true')).toBe(true);
    expect(isNoise('container', 'exec_die')).toBe(true);
    expect(isNoise('container', 'start')).toBe(false);
    expect(toEventRow({ event: 'container-exec_die', id: 'x' }, 1, 'local')).toBeNull();
  });

  it('gives every row its own key', () => {
    const a = toEventRow({ event: 'container-start' }, 1, 'l', now)!;
    const b = toEventRow({ event: 'container-start' }, 1, 'l', now)!;
    expect(a.key).not.toBe(b.key);
  });
});

describe('addEvent', () => {
  it('puts the newest first and keeps at most max rows', () => {
    let list: EventRow[] = [];
    for (let i = 0; i < 25; i++) list = addEvent(list, toEventRow({ event: `container-start`, name: `c${i}` }, 1, 'l')!);
    expect(list).toHaveLength(20);
    expect(list[0].actor).toBe('c24');
    expect(list[19].actor).toBe('c5');
  });
});

describe('changesCounts', () => {
  const row = (event: string) => toEventRow({ event }, 1, 'l')!;
  it('is true for events that change the dashboard figures', () => {
    expect(changesCounts(row('container-start'))).toBe(true);
    expect(changesCounts(row('container-destroy'))).toBe(true);
    expect(changesCounts(row('container-health_status: unhealthy'))).toBe(true);
    expect(changesCounts(row('volume-create'))).toBe(true);
    expect(changesCounts(row('network-destroy'))).toBe(true);
    expect(changesCounts(row('container-attach'))).toBe(false);
    expect(changesCounts(row('network-connect'))).toBe(false);
  });
});
