import { describe, expect, it } from 'vitest';
import { actionLabel, channelTypeLabel, eventTypeLabel, humanize, objectTypeLabel } from './words';
import { channelTypes, eventTypes } from './api-notifications';

describe('words', () => {
  it('says event ids in words', () => {
    expect(eventTypeLabel('container_started')).toBe('Container started');
    expect(eventTypeLabel('container_oom')).toBe('Container out of memory');
    expect(eventTypeLabel('git_sync_failed')).toBe('Git sync failed');
    expect(eventTypeLabel('some_new_event')).toBe('Some new event');
  });

  it('says channel types in words', () => {
    expect(channelTypeLabel('smtp')).toBe('Email (SMTP)');
    expect(channelTypeLabel('webhook')).toBe('Webhook');
    expect(channelTypeLabel('matrix')).toBe('Matrix');
  });

  it('gives every known id a label that is not the raw id', () => {
    for (const t of channelTypes) expect(channelTypeLabel(t)).not.toMatch(/_/);
    for (const e of eventTypes) {
      const label = eventTypeLabel(e);
      expect(label).not.toMatch(/_/);
      expect(label[0]).toBe(label[0].toUpperCase());
    }
  });

  it('says engine event types and actions in words', () => {
    expect(objectTypeLabel('container')).toBe('Container');
    expect(actionLabel('start')).toBe('Started');
    expect(actionLabel('frobnicate')).toBe('Frobnicate');
    expect(actionLabel('die')).toBe('Exited');
    expect(actionLabel('health_status: unhealthy')).toBe('Health changed: unhealthy');
    expect(actionLabel('exec_start: sh -c ls')).toBe('Exec started: sh -c ls');
  });

  it('keeps empty ids empty', () => {
    expect(humanize('')).toBe('');
    expect(humanize('__')).toBe('');
  });
});
