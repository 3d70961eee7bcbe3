// ANSI escape sequences in container output: SGR colours (30–37, 90–97, the
// 16 first colours of 38;5;n), bold and their resets become styled segments;
// every other escape sequence and control character is removed. Also: search
// highlighting over styled segments, and the timestamp prefix the engine adds.

/** Text with one style. fg is an SGR foreground code (30–37, 90–97) or 0 for the default. */
export interface Segment {
  text: string;
  fg: number;
  bold: boolean;
}

/** The style in effect at the end of a line, carried to the next one. */
export interface AnsiState {
  fg: number;
  bold: boolean;
}

export const plainState: AnsiState = Object.freeze({ fg: 0, bold: false });

function applySGR(params: string, st: AnsiState): AnsiState {
  let { fg, bold } = st;
  // Sub-parameters (38:2::r:g:b) belong to their parameter: only the first part counts.
  const codes = (params === '' ? ['0'] : params.split(';')).map((p) => {
    const n = Number.parseInt(p.split(':')[0] || '0', 10);
    return Number.isFinite(n) ? n : -1;
  });
  for (let i = 0; i < codes.length; i++) {
    const c = codes[i];
    if (c === 0) {
      fg = 0;
      bold = false;
    } else if (c === 1) bold = true;
    else if (c === 22) bold = false;
    else if ((c >= 30 && c <= 37) || (c >= 90 && c <= 97)) fg = c;
    else if (c === 39) fg = 0;
    else if (c === 38 || c === 48) {
      // Extended colour: 5;n (256 colours) or 2;r;g;b. Only 38;5;0–15 map to a colour here.
      const mode = codes[i + 1];
      if (mode === 5) {
        const n = codes[i + 2];
        if (c === 38 && n >= 0 && n < 8) fg = 30 + n;
        else if (c === 38 && n >= 8 && n < 16) fg = 90 + n - 8;
        i += 2;
      } else if (mode === 2) {
        i += 4;
      }
    }
    // Everything else (underline, background, blink, …) is dropped.
  }
  return { fg, bold };
}

/**
 * Splits one line into styled segments, starting in `state` (the end state of
 * the previous line). A carriage return keeps what was written after it, as a
 * terminal shows a progress line.
 */
export function parseAnsi(line: string, state: AnsiState = plainState): { segments: Segment[]; state: AnsiState } {
  const cr = line.lastIndexOf('\r');
  if (cr >= 0 && cr < line.length - 1) line = line.slice(cr + 1);
  const segments: Segment[] = [];
  let st: AnsiState = { fg: state.fg, bold: state.bold };
  let buf = '';
  const flush = () => {
    if (!buf) return;
    const last = segments[segments.length - 1];
    if (last && last.fg === st.fg && last.bold === st.bold) last.text += buf;
    else segments.push({ text: buf, fg: st.fg, bold: st.bold });
    buf = '';
  };
  let i = 0;
  while (i < line.length) {
    const ch = line.charCodeAt(i);
    if (ch === 0x1b || ch === 0x9b) {
      let j = ch === 0x9b ? i + 1 : i + 2;
      const kind = ch === 0x9b ? '[' : line[i + 1];
      if (kind === '[') {
        // CSI: parameters 0x30–0x3F, intermediates 0x20–0x2F, one final byte 0x40–0x7E.
        const start = j;
        while (j < line.length && line.charCodeAt(j) >= 0x30 && line.charCodeAt(j) <= 0x3f) j++;
        const params = line.slice(start, j);
        while (j < line.length && line.charCodeAt(j) >= 0x20 && line.charCodeAt(j) <= 0x2f) j++;
        if (j < line.length && line.charCodeAt(j) >= 0x40 && line.charCodeAt(j) <= 0x7e) {
          if (line[j] === 'm' && /^[\d;:]*$/.test(params)) {
            flush();
            st = applySGR(params, st);
          }
          j++;
        }
        i = j;
      } else if (kind === ']' || kind === 'P' || kind === '_' || kind === '^' || kind === 'X') {
        // OSC / DCS / APC / PM / SOS: up to BEL or ESC \ (or the end of the line).
        while (j < line.length && line[j] !== '\x07' && !(line[j] === '\x1b' && line[j + 1] === '\\')) j++;
        i = j >= line.length ? j : line[j] === '\x07' ? j + 1 : j + 2;
      } else if (kind === undefined) {
        i = line.length; // a lone ESC at the end
      } else {
        // Two-character or nF sequences: ESC, intermediates 0x20–0x2F, a final byte.
        j = i + 1;
        while (j < line.length && line.charCodeAt(j) >= 0x20 && line.charCodeAt(j) <= 0x2f) j++;
        i = Math.min(j + 1, line.length);
      }
      continue;
    }
    if ((ch < 0x20 && ch !== 0x09) || ch === 0x7f || (ch >= 0x80 && ch < 0xa0)) {
      i++; // other control characters
      continue;
    }
    buf += line[i];
    i++;
  }
  flush();
  return { segments, state: st };
}

/** The line's text without any escape sequence. */
export function stripAnsi(line: string): string {
  return parseAnsi(line)
    .segments.map((s) => s.text)
    .join('');
}

export interface MarkedSegment extends Segment {
  mark: boolean;
}

/** Ranges [start, end) of every case-insensitive occurrence of query in text. */
export function findMatches(text: string, query: string): [number, number][] {
  if (!query) return [];
  const hay = text.toLowerCase();
  const needle = query.toLowerCase();
  const out: [number, number][] = [];
  let from = 0;
  for (;;) {
    const at = hay.indexOf(needle, from);
    if (at < 0) break;
    out.push([at, at + needle.length]);
    from = at + needle.length;
  }
  return out;
}

/** Splits styled segments so that the occurrences of query are segments of their own with mark set. */
export function highlight(segments: readonly Segment[], query: string): MarkedSegment[] {
  const text = segments.map((s) => s.text).join('');
  const ranges = findMatches(text, query);
  if (!ranges.length) return segments.map((s) => ({ ...s, mark: false }));
  const out: MarkedSegment[] = [];
  let pos = 0; // offset of the current segment in text
  let r = 0;
  for (const s of segments) {
    const end = pos + s.text.length;
    let at = pos;
    while (at < end) {
      while (r < ranges.length && ranges[r][1] <= at) r++;
      const range = ranges[r];
      if (!range || range[0] >= end) {
        out.push({ ...s, text: s.text.slice(at - pos), mark: false });
        at = end;
      } else if (range[0] > at) {
        out.push({ ...s, text: s.text.slice(at - pos, range[0] - pos), mark: false });
        at = range[0];
      } else {
        const stop = Math.min(range[1], end);
        out.push({ ...s, text: s.text.slice(at - pos, stop - pos), mark: true });
        at = stop;
      }
    }
    pos = end;
  }
  return out;
}

const TS = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)) /;

/** Splits the engine's timestamp prefix ("2024-05-01T10:00:00.123456789Z text") from a line. */
export function splitTimestamp(line: string): { ts: string; text: string } {
  const m = TS.exec(line);
  if (!m) return { ts: '', text: line };
  return { ts: m[1], text: line.slice(m[0].length) };
}

/** A timestamp shortened to milliseconds for display (2024-05-01 10:00:00.123). */
export function shortTimestamp(ts: string): string {
  const m = /^(\d{4}-\d\d-\d\d)T(\d\d:\d\d:\d\d)(\.\d{1,3})?\d*(.*)$/.exec(ts);
  if (!m) return ts;
  return `${m[1]} ${m[2]}${m[3] ?? ''}${m[4] === 'Z' ? '' : m[4]}`;
}
