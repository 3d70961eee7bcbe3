import { describe, expect, it } from 'vitest';
import { applyTransferEvent, newTransfer, overallFraction, transferredBytes, type TransferEvent, type TransferState } from './progress';

function run(events: [string, TransferEvent][], from: TransferState = newTransfer()): TransferState {
  return events.reduce((s, [name, data]) => applyTransferEvent(s, name, data), from);
}

const layer = (id: string, status: string, current = 0, total = 0): [string, TransferEvent] => [
  'progress',
  { id, status, progressDetail: { current, total }, progress: '' },
];

describe('pull progress', () => {
  it('keeps one state per layer and the other lines as messages', () => {
    const s = run([
      ['progress', { id: '1', status: 'Pulling from berth-e2e', progressDetail: { current: 0, total: 0 } }],
      layer('aaa', 'Pulling fs layer'),
      layer('bbb', 'Pulling fs layer'),
      layer('aaa', 'Downloading', 500, 1000),
    ]);
    expect(s.layers.map((l) => [l.id, l.phase, l.status])).toEqual([
      ['aaa', 'downloading', 'Downloading'],
      ['bbb', 'waiting', 'Pulling fs layer'],
    ]);
    expect(s.messages).toEqual(['Pulling from berth-e2e']);
    expect(s.layers[0].fraction).toBeCloseTo(0.4); // half the download, the download being 80 %
    expect(s.phase).toBe('running');
  });

  it('weighs layers by size; an unknown size weighs the mean of the known ones', () => {
    let s = run([layer('a', 'Downloading', 0, 3000), layer('b', 'Waiting'), layer('c', 'Downloading', 1000, 1000)]);
    // sizes 3000, mean 2000 (unknown), 1000; fractions 0, 0, 0.8
    expect(overallFraction(s)).toBeCloseTo((1000 * 0.8) / 6000);
    s = run([layer('a', 'Download complete'), layer('a', 'Extracting', 1500, 3000)], s);
    // a: 0.8 + 0.2 * 0.5 = 0.9, size kept from the download
    expect(s.layers[0].size).toBe(3000);
    expect(s.layers[0].fraction).toBeCloseTo(0.9);
    expect(overallFraction(s)).toBeCloseTo((3000 * 0.9 + 1000 * 0.8) / 6000);
    s = run([layer('b', 'Already exists'), layer('a', 'Pull complete'), layer('c', 'Pull complete')], s);
    expect(s.layers.map((l) => l.phase)).toEqual(['done', 'done', 'done']);
    expect(overallFraction(s)).toBe(1);
  });

  it('never goes back when a late line reports less', () => {
    const s = run([layer('a', 'Downloading', 800, 1000), layer('a', 'Downloading', 100, 1000)]);
    expect(s.layers[0].fraction).toBeCloseTo(0.64);
  });

  it('counts bytes of the layers whose size is known', () => {
    const s = run([layer('a', 'Downloading', 250, 1000), layer('b', 'Downloading', 2000, 2000), layer('b', 'Verifying Checksum'), layer('c', 'Waiting')]);
    expect(transferredBytes(s)).toEqual({ done: 2250, total: 3000 });
  });

  it('ends complete (every layer full) or with the error', () => {
    const done = run([layer('a', 'Downloading', 1, 10), ['result', { status: 'complete' }]]);
    expect(done.phase).toBe('complete');
    expect(done.layers[0].fraction).toBe(1);
    expect(overallFraction(done)).toBe(1);
    const failed = run([['result', { status: 'error', error: 'Authentication failed. Check registry credentials.' }]]);
    expect(failed.phase).toBe('error');
    expect(failed.error).toBe('Authentication failed. Check registry credentials.');
  });

  it('follows the scan after the pull', () => {
    const s = run([
      ['progress', { status: 'scanning', message: 'Scanning x for vulnerabilities' }],
      ['progress', { status: 'scan-progress', stage: 'analyzing', message: 'Analyzing with Grype', progress: 10 }],
      ['progress', { status: 'scan-complete', message: 'Scan complete', results: [] }],
    ]);
    expect(s.scan).toMatchObject({ status: 'scan-complete', progress: 100, message: 'Scan complete' });
    expect(s.layers).toEqual([]);
  });

  it('reads push lines: messages, Pushing bytes, already-present layers', () => {
    const s = run([
      ['message', { status: 'tagging', message: 'Tagging x as reg/x:1' }],
      ['message', { status: 'pushing', message: 'Pushing reg/x:1' }],
      layer('a', 'Preparing'),
      layer('b', 'Layer already exists'),
      layer('a', 'Pushing', 512, 1024),
    ]);
    expect(s.messages).toEqual(['Tagging x as reg/x:1', 'Pushing reg/x:1']);
    expect(s.layers.map((l) => l.fraction)).toEqual([0.5, 1]);
    const end = applyTransferEvent(s, 'message', { status: 'complete', message: 'Pushed reg/x:1', targetTag: 'reg/x:1' });
    expect(end).toMatchObject({ phase: 'complete', message: 'Pushed reg/x:1', targetTag: 'reg/x:1' });
  });

  it('ignores events without data and does not change the state given', () => {
    const s0 = newTransfer();
    expect(applyTransferEvent(s0, 'progress', undefined)).toBe(s0);
    applyTransferEvent(s0, 'progress', { id: 'a', status: 'Downloading', progressDetail: { current: 1, total: 2 } });
    expect(s0.layers).toEqual([]);
  });
});
