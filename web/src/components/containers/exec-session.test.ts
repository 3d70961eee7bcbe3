import { afterEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../../lib/api';
import { execAttachUrl } from '../../lib/api-containers';
import { stubApi, type StubApi } from '../../test-api';
import { ExecSession, startFailure, type ExecState } from './exec-session';

class FakeSocket {
  static last: FakeSocket | null = null;
  url: string;
  readyState = 0;
  binaryType = 'blob';
  sent: string[] = [];
  closed: [number?, string?] | null = null;
  onopen: (() => void) | null = null;
  onmessage: ((e: { data: unknown }) => void) | null = null;
  onclose: ((e: { code: number; reason: string }) => void) | null = null;

  constructor(url: string) {
    this.url = url;
    FakeSocket.last = this;
  }
  send(d: string) {
    this.sent.push(d);
  }
  close(code?: number, reason?: string) {
    this.closed = [code, reason];
    this.readyState = 3;
  }
  // test helpers
  open() {
    this.readyState = 1;
    this.onopen?.();
  }
  serverClose(reason: string) {
    this.readyState = 3;
    this.onclose?.({ code: 1000, reason });
  }
}

afterEach(() => {
  vi.unstubAllGlobals();
});

function setup(createExec: unknown = { execId: 'ex1', connectionInfo: { type: 'websocket' } }) {
  const api: StubApi = stubApi({
    'POST /api/containers/c1/exec': createExec,
    'POST /api/containers/exec/ex1/resize': { success: true },
  });
  const states: [ExecState, string | undefined][] = [];
  const output: (string | Uint8Array)[] = [];
  const s = new ExecSession({
    env: 3,
    id: 'c1',
    shell: '/bin/sh',
    onOutput: (d) => output.push(d),
    onState: (st, m) => states.push([st, m]),
    WebSocketImpl: FakeSocket as unknown as typeof WebSocket,
  });
  return { s, api, states, output };
}

describe('ExecSession', () => {
  it('creates the exec, attaches the WebSocket with envId, resizes once open and pipes text both ways', async () => {
    const { s, api, states, output } = setup();
    await s.open(24, 80);
    expect(api.called('POST /api/containers/c1/exec')).toEqual([
      { method: 'POST', path: '/api/containers/c1/exec', query: { envId: '3' }, body: { shell: '/bin/sh' } },
    ]);
    const ws = FakeSocket.last!;
    expect(ws.url).toBe(`ws://${location.host}/api/containers/exec/ex1/attach?envId=3`);
    expect(ws.binaryType).toBe('arraybuffer');
    expect(states).toEqual([['connecting', undefined]]);

    s.send('ignored before open');
    ws.open();
    expect(states.at(-1)).toEqual(['open', undefined]);
    await vi.waitFor(() => expect(api.called('POST /api/containers/exec/ex1/resize')).toHaveLength(1));
    expect(api.called('POST /api/containers/exec/ex1/resize')[0].query).toEqual({ envId: '3', h: '24', w: '80' });

    s.send('echo hi\r');
    expect(ws.sent).toEqual(['echo hi\r']);
    ws.onmessage?.({ data: 'hi\r\n' });
    ws.onmessage?.({ data: new Uint8Array([104, 105]).buffer });
    expect(output[0]).toBe('hi\r\n');
    expect(Array.from(output[1] as Uint8Array)).toEqual([104, 105]);

    await s.resize(24, 80); // same size: not sent again
    await s.resize(40, 120);
    const resizes = api.called('POST /api/containers/exec/ex1/resize');
    expect(resizes).toHaveLength(2);
    expect(resizes[1].query).toEqual({ envId: '3', h: '40', w: '120' });

    ws.serverClose('session ended');
    expect(states.at(-1)).toEqual(['closed', 'session ended']);
  });

  it('closes cleanly when the user disconnects', async () => {
    const { s, states } = setup();
    await s.open(24, 80);
    const ws = FakeSocket.last!;
    ws.open();
    s.close();
    expect(ws.sent).toEqual(['\x03\x04']); // Ctrl+C, Ctrl+D: the shell exits
    expect(ws.closed).toEqual([1000, 'closed by the user']);
    expect(states.at(-1)).toEqual(['closed', 'Disconnected']);
    ws.serverClose('late');
    expect(states.at(-1)).toEqual(['closed', 'Disconnected']);
  });

  it('reports the server message when the exec cannot be created', async () => {
    const { s, states } = setup(() => {
      throw new ApiError(400, 'Container is not running');
    });
    FakeSocket.last = null;
    await s.open(24, 80);
    expect(FakeSocket.last).toBeNull();
    expect(states.at(-1)).toEqual(['error', 'Container is not running']);
  });

  it('reports a WebSocket that closes before opening', async () => {
    const { s, states } = setup();
    await s.open(24, 80);
    FakeSocket.last!.serverClose('');
    expect(states.at(-1)?.[0]).toBe('error');
  });

  it('says in words that the shell could not be started when the engine refuses it', async () => {
    const { s, states, output } = setup();
    await s.open(24, 80);
    const ws = FakeSocket.last!;
    ws.open();
    ws.onmessage?.({
      data: 'OCI runtime exec failed: exec failed: unable to start container process: exec: "/bin/sh": stat /bin/sh: no such file or directory: unknown\r\n',
    });
    ws.serverClose('session ended');
    expect(output).toHaveLength(1);
    expect(states.at(-1)).toEqual([
      'error',
      'The command “/bin/sh” could not be started: it does not exist in the container. Pick another shell or enter a command that exists there.',
    ]);
  });

  it('ends as closed (not an error) when a shell that ran exits', async () => {
    const { s, states } = setup();
    await s.open(24, 80);
    const ws = FakeSocket.last!;
    ws.open();
    ws.onmessage?.({ data: '/ # exit\r\n' });
    ws.serverClose('session ended');
    expect(states.at(-1)).toEqual(['closed', 'session ended']);
  });
});

describe('execAttachUrl', () => {
  it('is a wss address on an https page, with the environment as envId', () => {
    expect(execAttachUrl(3, 'ex1', { protocol: 'https:', host: 'berth.example' })).toBe('wss://berth.example/api/containers/exec/ex1/attach?envId=3');
    expect(execAttachUrl(1, 'a/b', { protocol: 'http:', host: 'h:8080' })).toBe('ws://h:8080/api/containers/exec/a%2Fb/attach?envId=1');
  });
});

describe('startFailure', () => {
  it('names the reason of a refusal', () => {
    expect(startFailure('unable to find user bob: no matching entries in passwd file', '/bin/sh', 'bob')).toBe(
      'The command “/bin/sh” could not be started: the user “bob” does not exist in the container.',
    );
    expect(startFailure('OCI runtime exec failed: exec failed: exec: "x": executable file not found in $PATH: unknown', 'x')).toMatch(
      /it does not exist in the container/,
    );
    expect(startFailure('OCI runtime exec failed: exec failed: open /x: permission denied: unknown', '/x')).toMatch(/permission denied/);
    expect(startFailure('hello\r\n/ # ', '/bin/sh')).toBeNull();
  });
});
