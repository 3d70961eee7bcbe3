import { describe, expect, it } from 'vitest';
import { findMatches, highlight, parseAnsi, shortTimestamp, splitTimestamp, stripAnsi } from './ansi';
import { LogLines, countMatches, logFileName, logText, matchIndexes, stepMatch, visibleLines } from './log-lines';

const ESC = '\x1b';

describe('parseAnsi', () => {
  it('keeps plain text as one default segment', () => {
    expect(parseAnsi('hello world').segments).toEqual([{ text: 'hello world', fg: 0, bold: false }]);
    expect(parseAnsi('').segments).toEqual([]);
  });

  it('renders the 8 and 8 bright foreground colours, bold and resets', () => {
    const { segments, state } = parseAnsi(`a${ESC}[31mred${ESC}[1;92mbold green${ESC}[22mgreen${ESC}[39mdefault${ESC}[0m end`);
    expect(segments).toEqual([
      { text: 'a', fg: 0, bold: false },
      { text: 'red', fg: 31, bold: false },
      { text: 'bold green', fg: 92, bold: true },
      { text: 'green', fg: 92, bold: false },
      { text: 'default end', fg: 0, bold: false },
    ]);
    expect(state).toEqual({ fg: 0, bold: false });
  });

  it('treats ESC[m as a reset and drops other SGR attributes', () => {
    expect(parseAnsi(`${ESC}[1;4;33;44mx${ESC}[my`).segments).toEqual([
      { text: 'x', fg: 33, bold: true },
      { text: 'y', fg: 0, bold: false },
    ]);
  });

  it('maps 38;5;0-15 to the basic colours and skips other extended colours with their arguments', () => {
    expect(parseAnsi(`${ESC}[38;5;2mg${ESC}[38;5;9mr${ESC}[38;5;200mx`).segments).toEqual([
      { text: 'g', fg: 32, bold: false },
      { text: 'rx', fg: 91, bold: false }, // 38;5;200 keeps the colour: one segment
    ]);
    // 38;2;r;g;b must not read its 1 (the red value) as bold.
    expect(parseAnsi(`${ESC}[38;2;1;2;3;34mz`).segments).toEqual([{ text: 'z', fg: 34, bold: false }]);
    expect(parseAnsi(`${ESC}[48;5;1;1mq`).segments).toEqual([{ text: 'q', fg: 0, bold: true }]);
  });

  it('strips every other escape sequence and control character', () => {
    const line = `${ESC}[2K${ESC}[1G${ESC}]0;title\x07${ESC}(Bpro${ESC}[?25lgress\t${ESC}]8;;http://x${ESC}\\link${ESC}]8;;${ESC}\\\x00\x08 ok${ESC}`;
    expect(stripAnsi(line)).toBe('progress\tlink ok');
  });

  it('keeps what follows the last carriage return, as a terminal shows it', () => {
    expect(stripAnsi('10%\r50%\r100%')).toBe('100%');
    expect(stripAnsi('done\r')).toBe('done');
  });

  it('continues the style of the previous line', () => {
    const first = parseAnsi(`${ESC}[32mstarts green`);
    expect(parseAnsi('still green', first.state).segments).toEqual([{ text: 'still green', fg: 32, bold: false }]);
  });
});

describe('highlight', () => {
  const segs = parseAnsi(`plain ${ESC}[31mRED error${ESC}[0m and error`).segments;

  it('finds matches case-insensitively', () => {
    expect(findMatches('Error error', 'ERROR')).toEqual([
      [0, 5],
      [6, 11],
    ]);
    expect(findMatches('abc', '')).toEqual([]);
  });

  it('marks matches across style boundaries and keeps the styles', () => {
    expect(highlight(segs, 'error')).toEqual([
      { text: 'plain ', fg: 0, bold: false, mark: false },
      { text: 'RED ', fg: 31, bold: false, mark: false },
      { text: 'error', fg: 31, bold: false, mark: true },
      { text: ' and ', fg: 0, bold: false, mark: false },
      { text: 'error', fg: 0, bold: false, mark: true },
    ]);
    expect(highlight(segs, 'n red').filter((s) => s.mark)).toEqual([
      { text: 'n ', fg: 0, bold: false, mark: true },
      { text: 'RED', fg: 31, bold: false, mark: true },
    ]);
    expect(highlight(segs, '').every((s) => !s.mark)).toBe(true);
    expect(
      highlight(segs, 'error')
        .map((s) => s.text)
        .join(''),
    ).toBe('plain RED error and error');
  });
});

describe('timestamps', () => {
  it('splits the engine timestamp prefix', () => {
    expect(splitTimestamp('2024-05-01T10:00:00.123456789Z hello world')).toEqual({
      ts: '2024-05-01T10:00:00.123456789Z',
      text: 'hello world',
    });
    expect(splitTimestamp('no timestamp')).toEqual({ ts: '', text: 'no timestamp' });
  });
  it('shortens it to milliseconds', () => {
    expect(shortTimestamp('2024-05-01T10:00:00.123456789Z')).toBe('2024-05-01 10:00:00.123');
    expect(shortTimestamp('2024-05-01T10:00:00Z')).toBe('2024-05-01 10:00:00');
  });
});

describe('LogLines', () => {
  it('parses lines once, carries styles per stream and keeps at most limit lines', () => {
    const b = new LogLines(3);
    b.push(
      [
        { text: `${ESC}[33mwarn starts`, stream: 'stdout' },
        { text: 'err line', stream: 'stderr' },
        { text: 'warn goes on', stream: 'stdout' },
      ],
      false,
    );
    expect(b.lines.map((l) => [l.plain, l.segments[0].fg, l.stream])).toEqual([
      ['warn starts', 33, 'stdout'],
      ['err line', 0, 'stderr'],
      ['warn goes on', 33, 'stdout'],
    ]);
    const all = b.push([{ text: '2024-05-01T10:00:00Z fourth' }], true);
    expect(all.map((l) => l.plain)).toEqual(['err line', 'warn goes on', 'fourth']);
    expect(all[2].ts).toBe('2024-05-01T10:00:00Z');
    expect(b.dropped).toBe(1);
    expect(new Set(all.map((l) => l.id)).size).toBe(3);
  });

  it('filters and counts matching lines', () => {
    const b = new LogLines();
    const lines = b.push([{ text: 'GET /a 200' }, { text: 'GET /b 500 error' }, { text: 'POST /c 200' }], false);
    expect(countMatches(lines, ' 200')).toBe(2);
    expect(countMatches(lines, '')).toBe(0);
    expect(visibleLines(lines, 'error', true).map((l) => l.plain)).toEqual(['GET /b 500 error']);
    expect(visibleLines(lines, 'error', false)).toHaveLength(3);
    expect(visibleLines(lines, '  ', true)).toHaveLength(3);
  });
});

describe('log search, copy and download', () => {
  const lines = new LogLines().push(
    [
      { text: '2024-05-01T10:00:00.000000001Z GET /a 200' },
      { text: '2024-05-01T10:00:01.000000001Z \x1b[31mGET /b 500 error\x1b[0m' },
      { text: '2024-05-01T10:00:02.000000001Z get /c 200' },
    ],
    true,
  );

  it('finds the matching lines and steps through them both ways, wrapping around', () => {
    expect(matchIndexes(lines, 'get')).toEqual([0, 1, 2]);
    expect(matchIndexes(lines, ' 200')).toEqual([0, 2]);
    expect(matchIndexes(lines, '')).toEqual([]);
    expect(stepMatch(-1, 3, 1)).toBe(0);
    expect(stepMatch(-1, 3, -1)).toBe(2);
    expect(stepMatch(2, 3, 1)).toBe(0);
    expect(stepMatch(0, 3, -1)).toBe(2);
    expect(stepMatch(0, 0, 1)).toBe(-1);
  });

  it('writes lines as plain text, with the timestamp and container when asked for', () => {
    expect(logText(lines)).toBe('GET /a 200\nGET /b 500 error\nget /c 200\n');
    expect(logText(lines.slice(1, 2), { timestamps: true })).toBe('2024-05-01T10:00:01.000000001Z GET /b 500 error\n');
    const merged = new LogLines().push([{ text: 'hi', source: 'web', ts: '2024-05-01T10:00:00Z' }], false);
    expect(logText(merged, { timestamps: true, sources: true })).toBe('2024-05-01T10:00:00Z web | hi\n');
    expect(logText([])).toBe('');
  });

  it('names the downloaded file after the container and the time', () => {
    expect(logFileName('my app/1', new Date(2026, 10, 27, 9, 5, 3))).toBe('my-app-1-20261127-090503.log');
    expect(logFileName('///')).toMatch(/^logs-\d{8}-\d{6}\.log$/);
  });
});
