import { afterEach, describe, expect, it, vi } from 'vitest';
import type { AuditEntry } from '../../lib/api-admin';
import { AUDIT_COLUMNS, auditCsv, auditJson, csvField, defuse, download, exportFilename, toCsv } from './csv';

const entry: AuditEntry = {
  id: 3,
  timestamp: '2025-03-04T05:06:07Z',
  userId: 1,
  username: 'admin',
  environmentId: null,
  action: 'user.create',
  entityType: 'user',
  entityId: '9',
  entityName: 'bob',
  description: 'created "bob", with a role',
  details: 'line one\nline two',
  ipAddress: '127.0.0.1',
};

describe('CSV export', () => {
  it('leaves plain fields alone', () => {
    expect(csvField('user.create')).toBe('user.create');
    expect(csvField(42)).toBe('42');
    expect(csvField(null)).toBe('');
    expect(csvField(undefined)).toBe('');
  });

  it('quotes fields with a comma, a quote or a line break, doubling quotes', () => {
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('one\ntwo')).toBe('"one\ntwo"');
    expect(csvField('one\r\ntwo')).toBe('"one\r\ntwo"');
    expect(csvField('"')).toBe('""""');
  });

  it('defuses text a spreadsheet would run as a formula, but not numbers', () => {
    expect(defuse('=HYPERLINK("x")')).toBe(`'=HYPERLINK("x")`);
    expect(defuse('+1')).toBe("'+1");
    expect(defuse('-1')).toBe("'-1");
    expect(defuse('@SUM(A1)')).toBe("'@SUM(A1)");
    expect(defuse('plain')).toBe('plain');
    expect(csvField('=1+2,3')).toBe(`"'=1+2,3"`);
    expect(csvField(-1)).toBe('-1');
  });

  it('writes a header and CRLF-ended rows in column order', () => {
    const rows = [{ a: 1, b: 'x,y' }, { a: 2, b: '' }];
    expect(toCsv(rows, ['b', 'a'])).toBe('b,a\r\n"x,y",1\r\n,2\r\n');
    expect(toCsv([], ['a'])).toBe('a\r\n');
  });

  it('exports audit entries with the server export columns', () => {
    const csv = auditCsv([entry]);
    const [header, row, end] = csv.split('\r\n');
    expect(header).toBe(AUDIT_COLUMNS.join(','));
    expect(header).toBe('id,timestamp,userId,username,environmentId,action,entityType,entityId,entityName,description,details,ipAddress');
    expect(row).toBe('3,2025-03-04T05:06:07Z,1,admin,,user.create,user,9,bob,"created ""bob"", with a role","line one\nline two",127.0.0.1');
    expect(end).toBe('');
  });

  it('exports audit entries as a JSON array that reads back the same', () => {
    expect(JSON.parse(auditJson([entry]))).toEqual([entry]);
  });

  it('names the file with the date and time of the export', () => {
    const at = new Date(Date.UTC(2025, 0, 2, 3, 4, 5));
    expect(exportFilename('csv', at)).toBe('berth-audit-20250102-030405.csv');
    expect(exportFilename('json', at)).toBe('berth-audit-20250102-030405.json');
  });
});

describe('download', () => {
  afterEach(() => vi.restoreAllMocks());

  it('clicks a temporary link with the file name and removes it', () => {
    const created: string[] = [];
    URL.createObjectURL = vi.fn(() => 'blob:x');
    URL.revokeObjectURL = vi.fn();
    const click = vi.spyOn(HTMLAnchorElement.prototype, 'click').mockImplementation(function (this: HTMLAnchorElement) {
      created.push(`${this.download} ${this.getAttribute('href')}`);
    });
    download('f.csv', 'a\r\n', 'text/csv');
    expect(click).toHaveBeenCalledTimes(1);
    expect(created).toEqual(['f.csv blob:x']);
    expect(document.querySelector('a[download]')).toBeNull();
  });
});
