import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { versionInSandbox } from '../index.js';
import { sandboxBackend } from '../registry.js';
import { etcLayout } from './etc.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function temp(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
}

/** A small /etc: open and closed files, a link, a folder with a closed folder inside. */
function plantEtc(): { root: string; entries: string[] } {
  const root = temp('etc-src-');
  writeFileSync(join(root, 'hosts'), '127.0.0.1 localhost\n');
  writeFileSync(join(root, 'shadow'), 'root:$6$secret\n');
  chmodSync(join(root, 'shadow'), 0o600);
  symlinkSync('/usr/share/zoneinfo/UTC', join(root, 'localtime'));
  mkdirSync(join(root, 'ssl', 'certs'), { recursive: true });
  writeFileSync(join(root, 'ssl', 'certs', 'bundle.crt'), 'CERT ONE\n');
  symlinkSync('bundle.crt', join(root, 'ssl', 'certs', 'abcd1234.0'));
  writeFileSync(join(root, 'ssl', 'openssl.cnf'), '[openssl]\n');
  mkdirSync(join(root, 'ssl', 'private'));
  writeFileSync(join(root, 'ssl', 'private', 'server.key'), 'PRIVATE KEY\n');
  chmodSync(join(root, 'ssl', 'private'), 0o710);
  const entries = ['hosts', 'shadow', 'localtime', 'ssl', 'missing'].map((name) => join(root, name));
  return { root, entries };
}

describe("the sandbox's /etc", () => {
  it('is one copy of what anyone may read: files, links, folders whole; nothing closed to others', () => {
    const { entries } = plantEtc();
    const cache = temp('etc-cache-');
    const { dir } = etcLayout(cache, entries, 1_000);
    expect(readFileSync(join(dir, 'hosts'), 'utf8')).toBe('127.0.0.1 localhost\n');
    expect(readlinkSync(join(dir, 'localtime'))).toBe('/usr/share/zoneinfo/UTC');
    expect(readFileSync(join(dir, 'ssl', 'certs', 'bundle.crt'), 'utf8')).toBe('CERT ONE\n');
    expect(lstatSync(join(dir, 'ssl', 'certs', 'abcd1234.0')).isSymbolicLink()).toBe(true);
    expect(readFileSync(join(dir, 'ssl', 'certs', 'abcd1234.0'), 'utf8')).toBe('CERT ONE\n');
    expect(readFileSync(join(dir, 'ssl', 'openssl.cnf'), 'utf8')).toBe('[openssl]\n');
    // Closed to others: left out, also for root (who could read them as their owner).
    expect(existsSync(join(dir, 'shadow'))).toBe(false);
    expect(existsSync(join(dir, 'ssl', 'private'))).toBe(false);
    expect(existsSync(join(dir, 'missing'))).toBe(false);
    expect(statSync(join(dir, 'ssl', 'certs')).mode & 0o777).toBe(0o755);
  });

  it('is made again when an entry changes: a top-level file at once, a file deep in a folder within seconds', () => {
    const { root, entries } = plantEtc();
    const cache = temp('etc-cache-');
    const first = etcLayout(cache, entries, 10_000).dir;
    expect(etcLayout(cache, entries, 10_001).dir).toBe(first);

    writeFileSync(join(root, 'ssl', 'certs', 'bundle.crt'), 'CERT ONE\nCERT TWO\n');
    // Within the walk's interval the folder is not walked again...
    expect(etcLayout(cache, entries, 11_000).dir).toBe(first);
    // ...after it, the change is found, and a new copy holds it.
    const second = etcLayout(cache, entries, 16_000).dir;
    expect(second).not.toBe(first);
    expect(readFileSync(join(second, 'ssl', 'certs', 'bundle.crt'), 'utf8')).toBe('CERT ONE\nCERT TWO\n');
    // The copy a running sandbox started with stays as it was.
    expect(readFileSync(join(first, 'ssl', 'certs', 'bundle.crt'), 'utf8')).toBe('CERT ONE\n');

    writeFileSync(join(root, 'hosts'), '127.0.0.1 localhost\n10.0.0.1 db\n');
    const third = etcLayout(cache, entries, 16_001).dir;
    expect(third).not.toBe(second);
    expect(readFileSync(join(third, 'hosts'), 'utf8')).toContain('10.0.0.1 db');
  });

  it('walked again with nothing changed, is the same copy', () => {
    const { entries } = plantEtc();
    const cache = temp('etc-cache-');
    const first = etcLayout(cache, entries, 1_000).dir;
    const again = etcLayout(cache, entries, 1_000 + 60_000).dir;
    expect(again).toBe(first);
  });
});

const bwrap = await sandboxBackend('bubblewrap').probe();
const HOST_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';
const HOST_PRIVATE = '/etc/ssl/private';

describe("the sandbox's /etc inside bubblewrap", () => {
  it.skipIf(!bwrap.ok)(
    'holds the certificate bundle the host has, and not the host’s closed /etc/ssl/private',
    async () => {
      const dir = temp('etc-sbx-');
      const cli = join(dir, 'bin', 'probe');
      mkdirSync(join(dir, 'bin'));
      writeFileSync(
        cli,
        [
          '#!/bin/sh',
          `if [ -r ${HOST_BUNDLE} ]; then echo "bundle=$(wc -c < ${HOST_BUNDLE})"; else echo bundle=none; fi`,
          `if [ -e ${HOST_PRIVATE} ]; then echo private=visible; else echo private=absent; fi`,
          'if [ -r /etc/passwd ]; then echo passwd=readable; else echo passwd=none; fi',
          '',
        ].join('\n'),
      );
      chmodSync(cli, 0o755);
      const result = await versionInSandbox({
        choice: { mode: 'required', source: 'the automation' },
        executable: cli,
        args: [],
        env: { PATH: '/usr/bin:/bin', HOME: dir },
        stateDir: join(dir, 'state'),
        limits: { memoryMb: 1024, maxProcesses: 64 },
      });
      const bundle = existsSync(HOST_BUNDLE) ? `bundle=${statSync(HOST_BUNDLE).size}` : 'bundle=none';
      // Where the host has no closed private folder the check still runs; it then finds nothing to hide.
      expect(result).toEqual({
        sandboxed: true,
        stdout: `${bundle}\nprivate=absent\npasswd=readable\n`,
      });
    },
  );
});
