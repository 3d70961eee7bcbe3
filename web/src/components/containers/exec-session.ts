// An interactive terminal session in a container, as the server speaks it:
// POST /api/containers/{id}/exec?envId= creates the exec (TTY + stdin), the
// WebSocket /api/containers/exec/{execId}/attach?envId= (to open within two
// minutes, once) carries input and output as text frames, and
// POST /api/containers/exec/{execId}/resize?envId=&h=&w= sets rows × columns.
// Closing the WebSocket ends the shell.
import { execAttachUrl } from '../../lib/api-containers';
import { client, unwrap, type Schema } from '../../lib/client';
import { messageOf } from '../../lib/session.svelte';

export type ExecState = 'idle' | 'connecting' | 'open' | 'closed' | 'error';

export interface ExecSessionOptions {
  env: number;
  id: string;
  /** Command of the shell, e.g. /bin/sh. */
  shell: string;
  user?: string;
  onOutput: (data: string | Uint8Array) => void;
  onState: (state: ExecState, message?: string) => void;
  /** For tests. */
  WebSocketImpl?: typeof WebSocket;
}

/**
 * What the engine's refusal to start a command means, in words: the engine
 * writes it to the terminal ("OCI runtime exec failed: … exec: "/bin/bash":
 * stat /bin/bash: no such file or directory") and ends the session. null when
 * output is not such a refusal.
 */
export function startFailure(output: string, shell: string, user = ''): string | null {
  const o = output.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
  if (!/OCI runtime exec failed|exec failed:|unable to start container process|unable to find user|no matching entries in passwd/i.test(o)) return null;
  const what = `The command “${shell}” could not be started`;
  if (/unable to find user|no matching entries in passwd/i.test(o)) return `${what}: the user “${user || 'root'}” does not exist in the container.`;
  if (/no such file or directory|executable file not found|not found in \$PATH/i.test(o))
    return `${what}: it does not exist in the container. Pick another shell or enter a command that exists there.`;
  if (/permission denied/i.test(o)) return `${what}: permission denied (it is not executable for this user).`;
  const detail = /exec failed:\s*(.*?)(?::\s*unknown)?\s*$/im.exec(o)?.[1]?.trim();
  return `${what}: the engine refused it${detail ? ` (${detail})` : ''}.`;
}

export class ExecSession {
  #o: ExecSessionOptions;
  #ws: WebSocket | null = null;
  #execId = '';
  #size = { rows: 0, cols: 0 };
  #sent = '';
  #closedByUs = false;
  /** The first output of the session, to recognise a refusal to start. */
  #head = '';
  state: ExecState = 'idle';

  constructor(opts: ExecSessionOptions) {
    this.#o = opts;
  }

  get execId(): string {
    return this.#execId;
  }

  #set(state: ExecState, message?: string) {
    this.state = state;
    this.#o.onState(state, message);
  }

  /** Creates the exec and attaches to it; rows × cols is the terminal's size. */
  async open(rows: number, cols: number): Promise<void> {
    const { env, id, shell, user } = this.#o;
    this.#size = { rows, cols };
    this.#closedByUs = false;
    this.#set('connecting');
    let inst: Schema<'containers.ExecInstance'>;
    try {
      inst = await unwrap(
        client.POST('/api/containers/{id}/exec', { params: { path: { id }, query: { envId: env } }, body: { shell, user: user || undefined } }),
      );
    } catch (e) {
      this.#set('error', messageOf(e));
      return;
    }
    if (this.#closedByUs) return;
    this.#execId = inst.execId;
    const WS = this.#o.WebSocketImpl ?? WebSocket;
    let ws: WebSocket;
    try {
      ws = new WS(execAttachUrl(env, inst.execId));
    } catch (e) {
      this.#set('error', messageOf(e));
      return;
    }
    this.#ws = ws;
    ws.binaryType = 'arraybuffer';
    let opened = false;
    ws.onopen = () => {
      opened = true;
      this.#set('open');
      this.#sent = '';
      void this.resize(this.#size.rows, this.#size.cols);
    };
    this.#head = '';
    const decoder = new TextDecoder();
    ws.onmessage = (ev: MessageEvent) => {
      const d = ev.data;
      if (this.#head.length < 4096) this.#head += typeof d === 'string' ? d : decoder.decode(d as ArrayBuffer, { stream: true });
      this.#o.onOutput(typeof d === 'string' ? d : new Uint8Array(d as ArrayBuffer));
    };
    ws.onclose = (ev: CloseEvent) => {
      if (this.#ws !== ws) return;
      this.#ws = null;
      if (this.#closedByUs) return;
      const refused = startFailure(this.#head, this.#o.shell, this.#o.user);
      if (!opened) this.#set('error', 'The terminal could not connect (the session may have expired or the shell may not exist)');
      else if (refused) this.#set('error', refused);
      else this.#set('closed', ev.reason || 'The session ended');
    };
  }

  /** Sends terminal input (keystrokes, pasted text). */
  send(data: string): void {
    if (this.#ws && this.#ws.readyState === 1) this.#ws.send(data);
  }

  /** Tells the engine the terminal's size (once per distinct size while open). */
  async resize(rows: number, cols: number): Promise<void> {
    this.#size = { rows, cols };
    if (this.state !== 'open' || !this.#execId || rows < 1 || cols < 1) return;
    const key = `${rows}x${cols}`;
    if (key === this.#sent) return;
    this.#sent = key;
    try {
      await unwrap(
        client.POST('/api/containers/exec/{execId}/resize', {
          params: { path: { execId: this.#execId }, query: { envId: this.#o.env, h: rows, w: cols } },
        }),
      );
    } catch {
      this.#sent = ''; // a later resize tries again; the session goes on at its old size
    }
  }

  /**
   * Ends the session. The engine keeps an exec's process running when its
   * connection closes, so an open session first gets Ctrl+C (ends what runs
   * in the foreground, clears the line) and Ctrl+D (end of input: the shell
   * exits), as a terminal window that closes hangs up its shell.
   */
  close(): void {
    this.#closedByUs = true;
    const ws = this.#ws;
    this.#ws = null;
    if (ws && ws.readyState === 1) ws.send('\x03\x04');
    if (ws && (ws.readyState === 0 || ws.readyState === 1)) ws.close(1000, 'closed by the user');
    if (this.state !== 'idle') this.#set('closed', 'Disconnected');
  }
}
