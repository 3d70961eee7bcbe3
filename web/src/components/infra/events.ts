// The engine events of the dashboard's "Recent events": the relay names each
// "<type>-<action>" (container-start, network-connect, container-health_status: healthy)
// with data {id, name, time}; time is the engine's (Unix seconds), else when the console received it.
import type { EngineEvent } from '../../lib/api-infra';

export interface EventRow {
  key: string;
  time: Date;
  envId: number;
  envName: string;
  type: string;
  action: string;
  /** The object's name, else its short id. */
  actor: string;
  id?: string;
}

/** Splits "container-health_status: healthy" into type and action (types have no hyphen). */
export function parseEventName(name: string): { type: string; action: string } {
  const i = name.indexOf('-');
  if (i <= 0) return { type: name || 'event', action: '' };
  return { type: name.slice(0, i), action: name.slice(i + 1) };
}

/**
 * Exec events of health checks and `docker exec` arrive every few seconds for
 * each checked container; they would push everything else off the list.
 */
export function isNoise(type: string, action: string): boolean {
  return type === 'container' && /^exec_(create|start|die|detach)\b/.test(action);
}

let seq = 0;

/** The row of an event, or null when it is noise. */
export function toEventRow(e: EngineEvent, envId: number, envName: string, now = new Date()): EventRow | null {
  const { type, action } = parseEventName(e.event);
  if (isNoise(type, action)) return null;
  const actor = e.name || (e.id ? e.id.replace(/^sha256:/, '').slice(0, 12) : '');
  const time = e.time ? new Date(e.time * 1000) : now;
  return { key: `${now.getTime()}-${++seq}`, time, envId, envName, type, action, actor, id: e.id };
}

/** Newest first, at most max rows. */
export function addEvent(list: readonly EventRow[], row: EventRow, max = 20): EventRow[] {
  return [row, ...list].slice(0, max);
}

/** "14:03:07" in the user's locale. */
export function formatTime(d: Date): string {
  return d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

/** An event whose kind changes the dashboard's counts (worth refreshing them). */
export function changesCounts(row: EventRow): boolean {
  if (row.type === 'container') return /^(create|start|die|stop|kill|destroy|pause|unpause|health_status)/.test(row.action);
  return ['image', 'volume', 'network'].includes(row.type) && /^(create|destroy|delete|pull|remove|tag|untag)/.test(row.action);
}
