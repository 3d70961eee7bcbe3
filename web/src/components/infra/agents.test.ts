import { describe, expect, it } from 'vitest';
import type { EnvironmentDetail } from '../../lib/api-infra';
import { agentFacts, agentState, handOverInstall, lastErrorTitle, lastSeenOf, randomToken, relativeTime, takeInstall } from './agents';

const edge = (e: Partial<EnvironmentDetail> = {}): EnvironmentDetail => ({ id: 5, name: 'far', connectionType: 'agent-edge', ...e });
const standard = (e: Partial<EnvironmentDetail> = {}): EnvironmentDetail => ({
  id: 6,
  name: 'lan',
  connectionType: 'agent-standard',
  host: 'agent.lan',
  port: 2376,
  ...e,
});

describe('agent state', () => {
  it('tells the edge states apart', () => {
    expect(agentState(edge()).kind).toBe('no-token');
    expect(agentState(edge({ hasAgentToken: true, agentStatus: { connected: false } })).kind).toBe('waiting');
    const seen = edge({ hasAgentToken: true, agentLastSeen: '2025-01-01T10:00:00Z', agentId: 'a1', agentStatus: { connected: false } });
    expect(agentState(seen)).toMatchObject({ kind: 'disconnected', label: 'Disconnected', tone: 'bad' });
    expect(agentState(seen, { connected: true })).toMatchObject({ kind: 'connected', label: 'Connected', tone: 'ok' });
    // The polled status wins over the one the environment carried.
    expect(agentState(edge({ hasAgentToken: true, agentConnected: true, agentStatus: { connected: true } }), { connected: false }).kind).toBe('waiting');
    // Without agentStatus, agentConnected is read.
    expect(agentState(edge({ hasAgentToken: true, agentConnected: true })).kind).toBe('connected');
  });

  it('tells the standard states apart', () => {
    expect(agentState(standard()).kind).toBe('unchecked');
    expect(agentState(standard({ agentStatus: { connected: false, lastError: 'dial tcp: refused' } })).kind).toBe('unreachable');
    expect(agentState(standard({ agentStatus: { connected: true, lastSeen: '2025-01-01T10:00:00Z' } })).kind).toBe('connected');
  });

  it('names the last errors', () => {
    expect(lastErrorTitle('agent "b" (h2, from 10.0.0.2:1) presented the token of environment 5, whose agent "a" … is connected and healthy: refused')).toBe(
      'A second agent was refused',
    );
    expect(lastErrorTitle('Disconnected: the edge token was rotated: this connection\'s token is no longer valid')).toBe('Token rotated');
    expect(lastErrorTitle('Disconnected: no heartbeat within the heartbeat window')).toBe('No heartbeat');
    expect(lastErrorTitle("The agent refused Berth's token")).toBe('Token refused');
    expect(lastErrorTitle('dial tcp 10.0.0.5:2376: connection refused')).toBe('Last error');
  });

  it('takes the later last-seen time and the live facts first', () => {
    const e = edge({ agentLastSeen: '2025-01-01T10:00:00Z', agentName: 'pi', agentVersion: '1.0', agentCapabilities: ['exec'] });
    expect(lastSeenOf(e)).toBe('2025-01-01T10:00:00Z');
    expect(lastSeenOf(e, { connected: true, lastSeen: '2025-01-01T10:05:00Z' })).toBe('2025-01-01T10:05:00Z');
    expect(lastSeenOf(e, { connected: false, lastSeen: '2024-12-31T10:05:00Z' })).toBe('2025-01-01T10:00:00Z');
    expect(lastSeenOf(edge())).toBeNull();
    expect(agentFacts(e)).toEqual({ id: null, name: 'pi', version: '1.0', capabilities: ['exec'] });
    expect(agentFacts(e, { connected: true, agentId: 'x', agentName: 'pi2', agentVersion: '1.1', agentCapabilities: ['exec', 'compose'] })).toEqual({
      id: 'x',
      name: 'pi2',
      version: '1.1',
      capabilities: ['exec', 'compose'],
    });
  });
});

describe('relative time', () => {
  const now = Date.parse('2025-01-01T12:00:00Z');
  it('says how long ago, coarsely', () => {
    expect(relativeTime('2025-01-01T12:00:00Z', now)).toBe('just now');
    expect(relativeTime('2025-01-01T11:59:48Z', now)).toBe('12 s ago');
    expect(relativeTime('2025-01-01T11:55:00Z', now)).toBe('5 min ago');
    expect(relativeTime('2025-01-01T09:00:00Z', now)).toBe('3 h ago');
    expect(relativeTime('2024-12-31T11:00:00Z', now)).toBe('1 day ago');
    expect(relativeTime('2024-12-25T11:00:00Z', now)).toBe('7 days ago');
    expect(relativeTime('2025-01-01T12:01:00Z', now)).toBe('in 1 min');
    expect(relativeTime(null, now)).toBe('');
    expect(relativeTime('garbage', now)).toBe('');
  });
});

describe('install hand-over', () => {
  it('is taken once, by its environment only', () => {
    const install = { token: 'bae_x', command: 'c', dockerRun: 'd', serverUrl: 'http://h:3001' };
    handOverInstall({ envId: 5, install });
    expect(takeInstall(5)).toEqual({ envId: 5, install });
    expect(takeInstall(5)).toBeNull();
    handOverInstall({ envId: 5, install });
    expect(takeInstall(6)).toBeNull();
    expect(takeInstall(5)).toBeNull(); // another page took (and dropped) it
  });

  it('makes 48 hex digit tokens', () => {
    const a = randomToken();
    expect(a).toMatch(/^[0-9a-f]{48}$/);
    expect(randomToken()).not.toBe(a);
  });
});
