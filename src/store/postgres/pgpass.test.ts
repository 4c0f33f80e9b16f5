import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findPgpassPassword, lookUpPassword, parsePgpassLine, pgpassPath } from './pgpass.js';

const TARGET = { host: 'db.internal', port: '5432', database: 'curupira', user: 'curupira' };

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'curupira-pgpass-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function passFile(text: string, mode = 0o600): string {
  const path = join(dir, 'pgpass');
  writeFileSync(path, text);
  chmodSync(path, mode);
  return path;
}

describe('the password file format', () => {
  it('splits five fields, unescaping \\: and \\\\, and skips comments, blank and short lines', () => {
    expect(parsePgpassLine('h:5432:db:u:p\\:w\\\\d')).toEqual(['h', '5432', 'db', 'u', 'p:w\\d']);
    expect(parsePgpassLine('h:5432:db:u:pa:ss')).toEqual(['h', '5432', 'db', 'u', 'pa:ss']);
    expect(parsePgpassLine('# h:5432:db:u:p')).toBeUndefined();
    expect(parsePgpassLine('   ')).toBeUndefined();
    expect(parsePgpassLine('h:5432:db:u')).toBeUndefined();
  });

  it('gives the password of the first matching line, * matching anything', () => {
    const text = [
      'other:5432:curupira:curupira:wrong',
      'db.internal:5433:*:*:wrong-port',
      'db.internal:*:curupira:curupira:first',
      '*:*:*:*:fallback',
    ].join('\n');
    expect(findPgpassPassword(text, TARGET)).toBe('first');
    expect(findPgpassPassword(text, { ...TARGET, host: 'elsewhere' })).toBe('fallback');
    expect(findPgpassPassword('other:*:*:*:x\r\n', TARGET)).toBeUndefined();
  });
});

describe('looking up the password', () => {
  it('takes PGPASSWORD first, then the file PGPASSFILE names, else ~/.pgpass', () => {
    const file = passFile('*:*:*:curupira:from-file\n');
    expect(lookUpPassword(TARGET, { PGPASSWORD: 'from-env', PGPASSFILE: file })).toEqual({
      password: 'from-env',
    });
    expect(lookUpPassword(TARGET, { PGPASSFILE: file })).toEqual({ password: 'from-file' });
    expect(pgpassPath({ HOME: '/home/x' })).toBe('/home/x/.pgpass');
    expect(lookUpPassword(TARGET, { HOME: dir })).toEqual({});
  });

  it('ignores a file others may read, and says so for the login error', () => {
    const file = passFile('*:*:*:*:secret\n', 0o644);
    const found = lookUpPassword(TARGET, { PGPASSFILE: file });
    expect(found.password).toBeUndefined();
    expect(found.note).toBe(`the password file ${file} was ignored: others may read it (chmod 600 ${file})`);
  });

  it('says when the file has no line for the server', () => {
    const file = passFile('other:*:*:*:x\n');
    expect(lookUpPassword(TARGET, { PGPASSFILE: file })).toEqual({
      note: `the password file ${file} has no line for this server`,
    });
  });
});
