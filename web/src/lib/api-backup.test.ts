import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from './api';
import * as backup from './api-backup';
import { stubApi } from '../test-api';

afterEach(() => vi.unstubAllGlobals());

function sse(chunks: string[]): Response {
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      const enc = new TextEncoder();
      for (const s of chunks) c.enqueue(enc.encode(s));
      c.close();
    },
  });
  return new Response(body, { status: 200, headers: { 'Content-Type': 'text/event-stream' } });
}

const fields = (over: Partial<backup.DestinationFields>): backup.DestinationFields => ({ ...backup.emptyDestinationFields(), name: 'd', password: 'pw', ...over });

describe('destination fields', () => {
  it('builds each repository type and puts secrets in envVars, never in the repository string', () => {
    expect(backup.destinationBody(fields({ type: 'local', hostPath: '/srv/restic', environmentId: 2 }), true)).toEqual({
      name: 'd',
      flags: '',
      repository: '/srv/restic',
      environmentId: 2,
      password: 'pw',
    });
    const sftp = backup.destinationBody(fields({ type: 'sftp', sftpTarget: 'bk@h:/r', sshKey: 'KEY', sshKnownHosts: 'h ssh-ed25519 AAA' }), true);
    expect(sftp).toMatchObject({ repository: 'sftp:bk@h:/r', sshKey: 'KEY\n', sshKnownHosts: 'h ssh-ed25519 AAA' });
    const rest = backup.destinationBody(fields({ type: 'rest', restUrl: 'http://127.0.0.1:8008/x', restUser: 'u', restPassword: 'p' }), true);
    expect(rest).toMatchObject({ repository: 'rest:http://127.0.0.1:8008/x', envVars: { RESTIC_REST_USERNAME: 'u', RESTIC_REST_PASSWORD: 'p' } });
    expect(String(rest.repository)).not.toContain('p@');
    const s3 = backup.destinationBody(
      fields({ type: 's3', s3Endpoint: 'https://s3.example/', s3Bucket: 'b', s3Path: '/berth/', s3AccessKey: 'AK', s3SecretKey: 'SK', s3Region: 'eu' }),
      true,
    );
    expect(s3).toMatchObject({
      repository: 's3:https://s3.example/b/berth',
      envVars: { AWS_ACCESS_KEY_ID: 'AK', AWS_SECRET_ACCESS_KEY: 'SK', AWS_DEFAULT_REGION: 'eu' },
    });
  });

  it('on edit sends no password, and the mask for a secret not typed again (the server keeps the stored one)', () => {
    const b = backup.destinationBody(fields({ type: 'rest', restUrl: 'http://h/x', restUser: 'u2', password: '' }), false);
    expect(b).not.toHaveProperty('password');
    expect(b.envVars).toEqual({ RESTIC_REST_USERNAME: 'u2', RESTIC_REST_PASSWORD: '********' });
    const s3 = backup.destinationBody(fields({ type: 's3', s3Endpoint: 'e', s3Bucket: 'b', s3AccessKey: 'AK', password: '' }), false);
    expect(s3.envVars).toEqual({ AWS_ACCESS_KEY_ID: 'AK', AWS_SECRET_ACCESS_KEY: '********' });
    expect(backup.destinationBody(fields({ type: 'local', hostPath: '/r', environmentId: 1, password: '' }), false)).not.toHaveProperty('envVars');
  });

  it('says what is missing per type', () => {
    expect(backup.destinationProblem(fields({ name: ' ' }), true)).toMatch(/name/);
    expect(backup.destinationProblem(fields({ password: '' }), true)).toMatch(/password/);
    expect(backup.destinationProblem(fields({ type: 'local', hostPath: 'rel', environmentId: 1 }), true)).toMatch(/absolute/);
    expect(backup.destinationProblem(fields({ type: 'local', hostPath: '/a', environmentId: null }), true)).toMatch(/environment/);
    expect(backup.destinationProblem(fields({ type: 'local', hostPath: '/a', environmentId: 1 }), true)).toBe('');
    expect(backup.destinationProblem(fields({ type: 'sftp', sftpTarget: 'host:/r', sshKey: 'k' }), true)).toMatch(/user@host/);
    expect(backup.destinationProblem(fields({ type: 'sftp', sftpTarget: 'u@host:/r' }), true)).toMatch(/SSH key/);
    expect(backup.destinationProblem(fields({ type: 'sftp', sftpTarget: 'u@host:/r' }), false)).toBe('');
    expect(backup.destinationProblem(fields({ type: 'rest', restUrl: 'ftp://x' }), true)).toMatch(/http/);
    expect(backup.destinationProblem(fields({ type: 'rest', restUrl: 'http://u:p@x/' }), true)).toMatch(/not in the URL/);
    expect(backup.destinationProblem(fields({ type: 's3', s3Endpoint: 'e', s3Bucket: 'b' }), true)).toMatch(/access key/);
  });

  it('reads a saved destination back into the dialog without its secrets', () => {
    const f = backup.fieldsOf({
      id: 1,
      name: 's3',
      type: 's3',
      repository: 's3:https://s3.example/b/p/q',
      envVars: { AWS_ACCESS_KEY_ID: 'AK', AWS_SECRET_ACCESS_KEY: 'SK' },
    });
    expect(f).toMatchObject({ type: 's3', s3Endpoint: 'https://s3.example', s3Bucket: 'b', s3Path: 'p/q', s3AccessKey: 'AK', s3SecretKey: '', password: '' });
    expect(JSON.stringify(f)).not.toContain('SK');
    expect(backup.fieldsOf({ id: 2, name: 'l', type: 'local', repository: '/srv/r', environmentId: 3 })).toMatchObject({ type: 'local', hostPath: '/srv/r', environmentId: 3 });
    expect(backup.fieldsOf({ id: 3, name: 'r', type: 'rest', repository: 'rest:http://h/x', envVars: { RESTIC_REST_USERNAME: 'u' } })).toMatchObject({ restUrl: 'http://h/x', restUser: 'u', restPassword: '' });
  });
});

describe('destination test states', () => {
  it('is honest: never tested, ok, not initialized, failing with the message', () => {
    expect(backup.testState(null)).toMatchObject({ state: 'untested', label: 'not tested' });
    expect(backup.testState({ status: 'success' })).toMatchObject({ state: 'ok' });
    expect(backup.testState({ status: 'needs_init' }).state).toBe('needs-init');
    expect(backup.testState({ status: 'failed', message: 'Wrong repository password' })).toEqual({ state: 'failing', label: 'failing', why: 'Wrong repository password' });
  });

  it('normalizes either shape of the last test', () => {
    expect(backup.normalizeDestination({ id: 1, name: 'a', repository: '/x', lastTest: { status: 'failed', message: 'm', at: 't' } }).lastTest).toEqual({ status: 'failed', message: 'm', at: 't' });
    expect(backup.normalizeDestination({ id: 1, name: 'a', repository: 'sftp:u@h:/r', lastTestStatus: 'success', lastTestAt: 't' })).toMatchObject({ type: 'sftp', lastTest: { status: 'success', at: 't' } });
    expect(backup.normalizeDestination({ id: 1, name: 'a', repository: '/x' }).lastTest).toBeNull();
  });
});

describe('configurations', () => {
  it('says retention and schedule in words', () => {
    expect(backup.retentionWords({ keepLast: 3, keepDaily: 7, keepWeekly: 4 })).toBe('keeps last 3, 7 daily, 4 weekly');
    expect(backup.retentionWords({})).toBe('keeps every snapshot');
    expect(backup.scheduleWords({ schedule: '', enabled: true })).toBe('manual only');
    expect(backup.scheduleWords({ schedule: '0 3 * * *', enabled: false })).toMatch(/\(disabled\)$/);
  });

  it('builds the body with the reference names and refuses bad fields', () => {
    const f = backup.configFieldsOf(null, { targetName: 'web', environmentId: 1, destinationId: 4, allVolumes: false, volumes: 'a\nb, c', keepDaily: '7', keepWeekly: '' });
    expect(backup.configProblem(f)).toBe('');
    expect(backup.configBody(f)).toMatchObject({
      type: 'container',
      targetName: 'web',
      environmentId: 1,
      destinationId: 4,
      allVolumes: false,
      selectedVolumes: ['a', 'b', 'c'],
      includeStackDir: false,
      retention: { keepDaily: 7 },
    });
    expect(backup.configProblem({ ...f, keepLast: 'x' })).toMatch(/whole number/);
    expect(backup.configProblem({ ...f, destinationId: null })).toMatch(/destination/);
    expect(backup.configProblem({ ...f, schedule: '0 3 * *' })).toMatch(/five fields/);
    expect(backup.configProblem({ ...f, volumes: '' })).toMatch(/volume/);
  });

  it('reads Berth and reference names alike', () => {
    const c = backup.normalizeConfig({ id: 2, targetName: 'db', type: 'stack', volumes: ['v'], allVolumes: false, stopDuringBackup: true, lastRunStatus: 'failed', lastRunMessage: 'x', lastRunAt: 't' });
    expect(c).toMatchObject({ selectedVolumes: ['v'], stopBeforeBackup: true, running: false, lastRun: { status: 'failed', message: 'x', at: 't' } });
    expect(backup.normalizeConfig({ id: 3, running: true, lastRunStatus: null }).running).toBe(true);
    expect(backup.normalizeConfig({ id: 3, lastRunStatus: null }).lastRun).toBeNull();
    expect(backup.configFieldsOf(c)).toMatchObject({ type: 'stack', volumes: 'v', stopBeforeBackup: true, allVolumes: false });
  });
});

describe('run streams', () => {
  const ev = (event: string, data: unknown) => ({ event, data: JSON.stringify(data) });

  it('follows progress to the final result', () => {
    let s = backup.newRunState();
    s = backup.applyRunEvent(s, ev('progress', { phase: 'backup', progress: { percentDone: 0.5, filesDone: 1, totalFiles: 2, currentFile: '/a' } }));
    expect(s).toMatchObject({ running: true, percent: 0.5, filesDone: 1, totalFiles: 2, currentFile: '/a' });
    s = backup.applyRunEvent(s, ev('progress', { phase: 'stop', message: 'stopping web' }));
    expect(s.lines).toEqual(['stop: stopping web']);
    s = backup.applyRunEvent(s, ev('result', { status: 'success', snapshotId: 'abcdef0123' }));
    expect(s).toMatchObject({ running: false, status: 'success', error: null, snapshotId: 'abcdef0123', percent: 1 });
  });

  it('keeps the error of a failed result', () => {
    const s = backup.applyRunEvent(backup.newRunState(), ev('result', { success: false, error: 'Wrong repository password' }));
    expect(s).toMatchObject({ running: false, status: 'error', error: 'Wrong repository password' });
    const failed = backup.applyRunEvent(backup.newRunState(), ev('result', { status: 'failed', message: 'Repository unreachable', runId: 3 }));
    expect(failed).toMatchObject({ status: 'error', error: 'Repository unreachable' });
    const stopped = backup.applyRunEvent(backup.newRunState(), ev('result', { status: 'stopped', message: 'Restore stopped' }));
    expect(stopped).toMatchObject({ running: false, status: 'stopped', error: null });
  });

  it('runs a configuration through its SSE stream and fails when the stream ends without a result', async () => {
    const fetchMock = vi.fn(async () => sse(['event: progress\ndata: {"percentDone":0.2}\n\n', 'event: result\ndata: {"status":"success","snapshotId":"s1"}\n\n']));
    vi.stubGlobal('fetch', fetchMock);
    const seen: backup.RunState[] = [];
    const end = await backup.runConfig(7, (s) => seen.push(s));
    expect(end).toMatchObject({ status: 'success', snapshotId: 's1' });
    expect(seen.some((s) => s.percent === 0.2)).toBe(true);
    const [url, init] = fetchMock.mock.calls[0] as unknown as [string, RequestInit];
    expect(url).toBe('/api/backup/configs/7/run');
    expect(init.method).toBe('POST');

    vi.stubGlobal('fetch', vi.fn(async () => sse(['event: progress\ndata: {"percentDone":0.2}\n\n'])));
    expect(await backup.runConfig(7, () => {})).toMatchObject({ running: false, status: 'error', error: /without a result/ });
  });

  it('rejects with the server message when a restore is refused', async () => {
    vi.stubGlobal('fetch', vi.fn(async () => new Response('{"error":"targetName is required for new-location"}', { status: 400 })));
    const p = backup.restore({ destinationId: 1, snapshotId: 's', mode: 'new-location' }, () => {});
    await expect(p).rejects.toBeInstanceOf(ApiError);
    await expect(backup.restore({ destinationId: 1, snapshotId: 's', mode: 'new-location' }, () => {})).rejects.toThrow('targetName is required for new-location');
  });
});

describe('snapshots', () => {
  const snap = (over: Partial<backup.Snapshot>): backup.Snapshot => ({ id: 'a', shortId: 'a', time: '', hostname: '', paths: [], tags: [], ...over });

  it('tells own snapshots from foreign ones by the instance id', () => {
    expect(backup.isOwn(snap({ hostname: 'inst-1' }), 'inst-1')).toBe(true);
    expect(backup.isOwn(snap({ hostname: 'x', tags: ['berth:instance=inst-1'] }), 'inst-1')).toBe(true);
    expect(backup.isOwn(snap({ hostname: 'other' }), 'inst-1')).toBe(false);
    expect(backup.isOwn(snap({ hostname: 'inst-1' }), null)).toBe(false);
    // the server's own flag wins
    expect(backup.isOwn(snap({ hostname: 'inst-1', own: false }), 'inst-1')).toBe(false);
    expect(backup.snapshotsOf({ instanceId: 'i', snapshots: [{ id: 'x', own: true, configId: 4, tags: [] }] })[0]).toMatchObject({ own: true, configId: 4 });
    expect(backup.configOfSnapshot(snap({ tags: ['berth:config=12'] }))).toBe(12);
    expect(backup.configOfSnapshot(snap({ tags: ['x'] }))).toBeNull();
    // the environment a snapshot's buttons are decided on
    expect(backup.envOfSnapshot(snap({ tags: ['berth:env=3', 'berth:config=12'] }))).toBe(3);
    expect(backup.envOfSnapshot(snap({ tags: ['berth:env=x'] }))).toBeNull();
    expect(backup.envOfSnapshot(snap({ tags: [] }))).toBeNull();
  });

  it('lists newest first from either answer shape', () => {
    const list = [
      { id: '1111111111', time: '2026-01-01T00:00:00Z', hostname: 'h', paths: ['/backup/volumes/v'], tags: [] },
      { id: '2222222222', short_id: '22222222', time: '2026-02-01T00:00:00Z', hostname: 'h' },
    ];
    expect(backup.snapshotsOf(list).map((s) => s.shortId)).toEqual(['22222222', '11111111']);
    expect(backup.snapshotsOf({ snapshots: list })).toHaveLength(2);
    expect(backup.snapshotsOf(null)).toEqual([]);
  });

  it('sorts directories first and walks up paths', () => {
    const e = backup.entriesOf([
      { name: 'b.txt', type: 'file', path: '/b.txt', size: 3 },
      { name: 'z', type: 'dir', path: '/z', size: 0 },
    ]);
    expect(e.map((x) => x.name)).toEqual(['z', 'b.txt']);
    expect(backup.parentOf('/backup/volumes/v')).toBe('/backup/volumes');
    expect(backup.parentOf('/backup')).toBe('/');
    expect(backup.parentOf('/')).toBe('/');
  });

  it('calls browse, diff, dump and forget with the destination', async () => {
    const api = stubApi({
      'GET /api/backup/snapshots/abc/browse': [{ name: 'f', type: 'file', path: '/f', size: 1 }],
      'GET /api/backup/snapshots/diff': { added: ['/n'], removed: [], changed: ['/m'] },
      'DELETE /api/backup/snapshots/abc': { success: true },
      'GET /api/backup/snapshots': [],
    });
    expect(await backup.browseSnapshot('abc', 3, '/backup')).toHaveLength(1);
    expect(api.called('GET /api/backup/snapshots/abc/browse')[0].query).toEqual({ destinationId: '3', path: '/backup' });
    expect(await backup.diffSnapshots(3, 'a', 'b')).toEqual({ added: ['/n'], removed: [], modified: ['/m'] });
    expect(api.called('GET /api/backup/snapshots/diff')[0].query).toEqual({ destinationId: '3', snapshotA: 'a', snapshotB: 'b' });
    await backup.forgetSnapshot('abc', 3);
    expect(api.called('DELETE /api/backup/snapshots/abc')[0].query).toEqual({ destinationId: '3' });
    await backup.listSnapshots({ configId: 9 });
    expect(api.called('GET /api/backup/snapshots')[0].query).toEqual({ configId: '9' });
    expect(backup.dumpUrl('abc', 3, '/backup/volumes/v/f.txt')).toBe('/api/backup/snapshots/abc/dump?destinationId=3&path=%2Fbackup%2Fvolumes%2Fv%2Ff.txt&download=true');
    expect(backup.dumpUrl('abc', 3, '/backup/volumes/v', true)).toBe('/api/backup/snapshots/abc/dump?destinationId=3&path=%2Fbackup%2Fvolumes%2Fv&type=dir&download=true');
  });
});

describe('restore preview', () => {
  it('reads targets, volumes and paths', () => {
    const p = backup.previewOf({
      volumes: [{ name: 'data' }, 'logs'],
      paths: ['/srv/stacks/web'],
      targets: [{ source: 'data', target: 'web_data', exists: true }],
    });
    expect(p.volumes).toEqual(['data', 'logs']);
    expect(p.paths).toEqual(['/srv/stacks/web']);
    expect(p.targets).toMatchObject([{ what: 'data', where: 'web_data', exists: true }]);
  });

  it("reads Berth's items with their kinds, targets and the snapshot's target", () => {
    const p = backup.previewOf({
      targetType: 'container',
      targetName: 'web',
      files: 3,
      size: 10,
      items: [
        { kind: 'volume', source: 'web_data', target: 'web_data', exists: true, entries: ['a.txt'], files: 1, size: 5 },
        { kind: 'path', source: '/srv/web', entries: [], files: 0, size: 0 },
      ],
    });
    expect(p).toMatchObject({ targetType: 'container', targetName: 'web', files: 3, size: 10, volumes: ['web_data'], paths: ['/srv/web'] });
    expect(p.targets[0]).toMatchObject({ what: 'web_data', where: 'web_data', exists: true, note: 'volume', entries: ['a.txt'] });
    expect(p.targets[1]).toMatchObject({ what: '/srv/web', where: '', exists: false, note: 'path' });
  });

  it('accepts only names Docker accepts for a new location', () => {
    expect(backup.validRestoreName('web-restored')).toBe(true);
    expect(backup.validRestoreName('-x')).toBe(false);
    expect(backup.validRestoreName('a b')).toBe(false);
  });
});

describe('maintenance output', () => {
  it('shows output, figures and failures', () => {
    expect(backup.taskOutput({ success: true, output: 'no errors were found\n' })).toBe('no errors were found');
    expect(backup.taskOutput({ success: true, stats: { totalSize: 2048, totalFileCount: 3, snapshotsCount: 1 } })).toBe('Total size: 2.0 KiB\nFiles: 3\nSnapshots: 1');
    expect(backup.taskOutput({ success: false, error: 'Repository is locked by another run' })).toBe('Failed: Repository is locked by another run');
    expect(backup.taskOutput({ success: true })).toBe('Done.');
  });
});

describe('stack directory', () => {
  it("says where a stack's directory is read from, or why not", () => {
    expect(backup.stackPathWords({ kind: 'candidate', hostPath: '/srv/stacks/web' })).toBe("The stack's directory is read from /srv/stacks/web on the environment's host.");
    expect(backup.stackPathWords({ kind: 'tar', composeFile: '/data/stacks/web/compose.yaml', reason: "The stack's directory is on the Berth host, not on this environment's" })).toMatch(/Berth's copy/);
    expect(backup.stackPathWords({ kind: 'unknown', reason: 'Berth keeps no files of this stack' })).toBe("The stack's directory cannot be backed up: Berth keeps no files of this stack.");
    expect(backup.stackPathWords(null)).toBe('');
  });
});

describe('the second pass helpers', () => {
  it('names a restored volume as the server does', () => {
    expect(backup.renamedVolume('shop_db', 'stack', 'shop', 'copy')).toBe('copy_db');
    expect(backup.renamedVolume('other_db', 'stack', 'shop', 'copy')).toBe('copy_other_db');
    expect(backup.renamedVolume('data', 'container', 'web', 'copy')).toBe('copy_data');
  });

  it('takes only absolute, clean host paths other than /', () => {
    for (const ok of ['/srv/app', '/a/b.c/d']) expect(backup.validHostPath(ok), ok).toBe(true);
    for (const bad of ['/', 'srv', '/srv/', '/a//b', '/a/./b', '/a/../b', '']) expect(backup.validHostPath(bad), bad).toBe(false);
  });

  it("takes a verify's data subset as restic does", () => {
    for (const ok of ['', '5%', '12.5%', '1/10']) expect(backup.validDataSubset(ok), ok).toBe(true);
    for (const bad of ['half', '5', '1/', '%', '10000%']) expect(backup.validDataSubset(bad), bad).toBe(false);
  });

  it("keeps a maintenance task's final data as the run's result", () => {
    let s = backup.newRunState();
    s = backup.applyRunEvent(s, { event: 'progress', data: '{"message":"load indexes"}' });
    s = backup.applyRunEvent(s, { event: 'result', data: '{"success":true,"task":"stats","output":[],"stats":{"totalSize":10,"totalFileCount":2,"snapshotsCount":1}}' });
    expect(s.status).toBe('success');
    expect(s.lines).toEqual(['load indexes']);
    expect(backup.statsOf(s.result)).toEqual({ totalSize: 10, totalFileCount: 2, snapshotsCount: 1 });
  });
});

describe('endpointOf', () => {
  const f = (over: Partial<backup.DestinationFields>) => ({ ...backup.emptyDestinationFields(), ...over });
  it('tells endpoints apart as the server does: scheme, host and port; a local path by its environment', () => {
    expect(backup.endpointOf(f({ type: 's3', s3Endpoint: 's3.example.com', s3Bucket: 'a' }))).toBe(backup.endpointOf(f({ type: 's3', s3Endpoint: 'https://S3.example.com:443', s3Bucket: 'b' })));
    expect(backup.endpointOf(f({ type: 's3', s3Endpoint: 'http://s3.example.com' }))).not.toBe(backup.endpointOf(f({ type: 's3', s3Endpoint: 's3.example.com' })));
    expect(backup.endpointOf(f({ type: 'rest', restUrl: 'http://h:8000/a/' }))).toBe(backup.endpointOf(f({ type: 'rest', restUrl: 'http://h:8000/b/' })));
    expect(backup.endpointOf(f({ type: 'rest', restUrl: 'http://h:8000/a/' }))).not.toBe(backup.endpointOf(f({ type: 'rest', restUrl: 'http://h:8001/a/' })));
    expect(backup.endpointOf(f({ type: 'sftp', sftpTarget: 'u@h:/a' }))).toBe(backup.endpointOf(f({ type: 'sftp', sftpTarget: '//v@h:22/b' })));
    expect(backup.endpointOf(f({ type: 'sftp', sftpTarget: 'u@h:/a' }))).not.toBe(backup.endpointOf(f({ type: 'sftp', sftpTarget: 'u@other:/a' })));
    expect(backup.endpointOf(f({ type: 'local', hostPath: '/a', environmentId: 1 }))).toBe(backup.endpointOf(f({ type: 'local', hostPath: '/b', environmentId: 1 })));
    expect(backup.endpointOf(f({ type: 'local', hostPath: '/a', environmentId: 1 }))).not.toBe(backup.endpointOf(f({ type: 'local', hostPath: '/a', environmentId: 2 })));
  });

  it('reads a stopped task as stopped, not failed', () => {
    const s = backup.applyRunEvent(backup.newRunState(), { event: 'result', data: JSON.stringify({ success: false, task: 'check', cancelled: true, error: 'Stopped before it finished' }) } as never);
    expect(s.status).toBe('stopped');
    expect(s.error).toBeNull();
    expect(backup.taskOutput(s.result)).toBe('Stopped.');
  });
});
