// What the stack list says of each stack: its state from its containers
// (running / partial / stopped, or unknown while the environment does not
// answer: an earlier answer is not today's state), and the pending updates
// of the last update check grouped by stack.
import type { StackEntry } from '../../lib/api-stacks';

/** One pending update of GET /api/containers/check-updates. */
export interface PendingUpdate {
  containerId: string;
  containerName: string;
  currentImage: string;
  checkedAt?: string;
  newDigest?: string;
}

export interface StackState {
  state: 'running' | 'partial' | 'stopped' | 'unknown' | string;
  /** The badge tone (app.css .badge.ok/.warn/.bad). */
  tone: string;
  /** Why, when the state is not read from the engine now. */
  why: string;
}

/** The state to show: from the containers when there are any, the server's word otherwise; unknown when stale. */
export function stackState(s: Pick<StackEntry, 'status' | 'containerDetails'>, stale: boolean): StackState {
  if (stale) return { state: 'unknown', tone: 'bad', why: 'the environment is not answering' };
  const all = s.containerDetails ?? [];
  if (all.length === 0) return { state: s.status === 'running' || s.status === 'partial' ? 'stopped' : s.status, tone: '', why: '' };
  const up = all.filter((c) => c.state === 'running').length;
  const state = up === all.length ? 'running' : up === 0 ? 'stopped' : 'partial';
  return { state, tone: state === 'running' ? 'ok' : state === 'partial' ? 'warn' : '', why: '' };
}

const sameId = (a: string, b: string) => !!a && !!b && (a.startsWith(b) || b.startsWith(a));

/** The pending updates of each stack's containers (by container id, full or short), by stack name. */
export function updatesByStack(list: Pick<StackEntry, 'name' | 'containers' | 'containerDetails'>[], pending: PendingUpdate[]): Map<string, PendingUpdate[]> {
  const out = new Map<string, PendingUpdate[]>();
  for (const s of list) {
    const ids = [...(s.containers ?? []), ...(s.containerDetails ?? []).map((c) => c.id)];
    const mine = pending.filter((p) => ids.some((id) => sameId(id, p.containerId)));
    if (mine.length) out.set(s.name, mine);
  }
  return out;
}
