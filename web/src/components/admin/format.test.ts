import { describe, expect, it } from 'vitest';
import { localInputToRfc3339, timeRange } from './format';

describe('timeRange', () => {
  it('leaves out an empty bound', () => {
    expect(timeRange('', '')).toEqual({});
    expect(timeRange('2024-05-01T10:00', '')).toEqual({ since: localInputToRfc3339('2024-05-01T10:00') });
    expect(timeRange('', '2024-05-01T10:00')).toEqual({ until: localInputToRfc3339('2024-05-01T10:00') });
  });

  it('refuses an end that does not come after the start', () => {
    expect(timeRange('2024-05-01T10:00', '2024-05-01T10:00')).toEqual({
      error: 'The end of the time range must come after its start',
    });
    expect(timeRange('2024-05-02T10:00', '2024-05-01T10:00')).toHaveProperty('error');
  });

  it('keeps a range whose end comes after its start', () => {
    const r = timeRange('2024-05-01T10:00', '2024-05-01T11:00');
    expect(r).toEqual({ since: localInputToRfc3339('2024-05-01T10:00'), until: localInputToRfc3339('2024-05-01T11:00') });
  });
});
