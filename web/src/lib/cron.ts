// Cron expressions in words, for the Schedules screen: the five fields of
// the spec (minute hour day month weekday; *, */n, n-m and lists of those;
// weekday 0 and 7 are Sunday). Anything else is shown as it is.

const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];
const MONTHS = ['', 'January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const FIELD = /^(\*|\*\/\d+|\d+(-\d+)?(,\d+(-\d+)?)*)$/;
const NUMBER = /^\d+$/;

const pad = (n: string | number) => String(n).padStart(2, '0');

/** "a", "a and b", "a, b and c". */
function joinWords(items: string[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

/** A list field ("1-5,10") in words, each value named by name. */
function values(field: string, name: (v: string) => string = (v) => v): string {
  return joinWords(
    field.split(',').map((part) => {
      const [lo, hi] = part.split('-');
      return hi === undefined ? name(lo) : `${name(lo)} to ${name(hi)}`;
    }),
  );
}

const step = (field: string) => (field.startsWith('*/') ? Number(field.slice(2)) : 0);

/** The time of day part. */
function timeOfDay(min: string, hour: string): string {
  const n = step(min);
  if (NUMBER.test(min) && hour.split(',').every((h) => NUMBER.test(h))) {
    return `at ${joinWords(hour.split(',').map((h) => `${pad(h)}:${pad(min)}`))}`;
  }
  if (min === '*' && hour === '*') return 'every minute';
  if (n && hour === '*') return n === 1 ? 'every minute' : `every ${n} minutes`;
  if (min === '0' && hour === '*') return 'every hour, on the hour';
  if (NUMBER.test(min) && hour === '*') return `every hour at minute ${min}`;
  if (NUMBER.test(min) && step(hour)) {
    const h = step(hour);
    return `${h === 1 ? 'every hour' : `every ${h} hours`} at minute ${min}`;
  }
  const minutes = min === '*' ? 'every minute' : n ? `every ${n} minutes` : `at minute${min.includes(',') || min.includes('-') ? 's' : ''} ${values(min)}`;
  const hours = hour === '*' ? '' : step(hour) ? ` of every ${step(hour)} hours` : ` past hour${hour.includes(',') || hour.includes('-') ? 's' : ''} ${values(hour)}`;
  return minutes + hours;
}

/** The days part: weekdays, days of the month, months. */
function days(dom: string, mon: string, dow: string): string {
  const parts: string[] = [];
  if (dow !== '*') {
    parts.push(step(dow) ? `every ${step(dow)} days of the week` : values(dow, (d) => WEEKDAYS[Number(d)] ?? d));
  }
  if (dom !== '*') parts.push(step(dom) ? `every ${step(dom)} days of the month` : `on day${dom.includes(',') || dom.includes('-') ? 's' : ''} ${values(dom)} of the month`);
  if (mon !== '*') parts.push(step(mon) ? `every ${step(mon)} months` : `in ${values(mon, (m) => MONTHS[Number(m)] ?? m)}`);
  return parts.join(', ');
}

const capital = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** expr in words ("0 3 * * *" → "Every day at 03:00"); an invalid expression as it is. */
export function describeCron(expr: string | null | undefined): string {
  if (!expr) return '';
  const f = expr.trim().split(/\s+/);
  if (f.length !== 5 || !f.every((x) => FIELD.test(x))) return expr;
  const [min, hour, dom, mon, dow] = f;
  const time = timeOfDay(min, hour);
  const when = days(dom, mon, dow);
  if (!when) return capital(time.startsWith('at ') ? `every day ${time}` : time);
  if (NUMBER.test(dow) && dom === '*' && mon === '*' && time.startsWith('at ')) return `Every ${WEEKDAYS[Number(dow)] ?? dow} ${time}`;
  return capital(`${time}, ${when}`);
}
