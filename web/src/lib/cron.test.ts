import { describe, expect, it } from 'vitest';
import { describeCron } from './cron';

describe('describeCron', () => {
  it.each([
    ['0 3 * * *', 'Every day at 03:00'],
    ['30 23 * * *', 'Every day at 23:30'],
    ['0 4 * * 1', 'Every Monday at 04:00'],
    ['0 4 * * 0', 'Every Sunday at 04:00'],
    ['0 4 * * 7', 'Every Sunday at 04:00'],
    ['0 4 * * 1-5', 'At 04:00, Monday to Friday'],
    ['0 4 * * 6,0', 'At 04:00, Saturday and Sunday'],
    ['0 8,20 * * *', 'Every day at 08:00 and 20:00'],
    ['* * * * *', 'Every minute'],
    ['*/15 * * * *', 'Every 15 minutes'],
    ['0 * * * *', 'Every hour, on the hour'],
    ['5 * * * *', 'Every hour at minute 5'],
    ['30 */2 * * *', 'Every 2 hours at minute 30'],
    ['0 3 1 * *', 'At 03:00, on day 1 of the month'],
    ['0 3 1,15 * *', 'At 03:00, on days 1 and 15 of the month'],
    ['0 3 1 1 *', 'At 03:00, on day 1 of the month, in January'],
    ['0 0 * 1-3 *', 'At 00:00, in January to March'],
    ['0,30 8-18 * * 1-5', 'At minutes 0 and 30 past hours 8 to 18, Monday to Friday'],
    ['*/10 9-17 * * *', 'Every 10 minutes past hours 9 to 17'],
  ])('%s → %s', (expr, words) => {
    expect(describeCron(expr)).toBe(words);
  });

  it('shows what it cannot read as it is', () => {
    expect(describeCron('@daily')).toBe('@daily');
    expect(describeCron('0 3 * *')).toBe('0 3 * *');
    expect(describeCron('0 3 * * MON')).toBe('0 3 * * MON');
    expect(describeCron(null)).toBe('');
  });
});
