/**
 * A full disk is called a full disk, with the place, not "corrupt or unreadable". The real case
 * needs a tiny filesystem to fill: a tmpfs, which only root may mount; elsewhere that test is
 * skipped (the reason is below) and the code mapping is still checked.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { StateError } from '../../core/errors.js';
import { diskFullError, toStateError } from './errors.js';
import { openStore } from './open.js';

function mountTinyDisk(): string | null {
  if (process.getuid?.() !== 0 || process.platform !== 'linux') return null;
  const dir = mkdtempSync(join(tmpdir(), 'curupira-full-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir], { stdio: 'ignore' });
    return dir;
  } catch {
    rmSync(dir, { recursive: true, force: true });
    return null;
  }
}

const disk = mountTinyDisk();
afterAll(() => {
  if (!disk) return;
  execFileSync('umount', [disk], { stdio: 'ignore' });
  rmSync(disk, { recursive: true, force: true });
});

describe('a full disk', () => {
  // Skipped where tmpfs cannot be mounted (not root, or not Linux): there is no other way to fill a
  // disk safely from a test.
  it.skipIf(disk === null)(
    'on a full disk, reading the state file still works and writing says the disk is full and where',
    async () => {
      const path = join(disk!, 'state.db');
      const store = await openStore(path);
      await store.close();
      try {
        execFileSync('dd', ['if=/dev/zero', `of=${join(disk!, 'fill')}`, 'bs=64k'], { stdio: 'ignore' });
      } catch {
        // dd stops with an error once the disk is full, which is the point.
      }
      // Read-only commands (`runs`, `gc`, `doctor`) read it without writing anything beside it.
      const reader = await openStore(path, { readonly: true });
      await expect(reader.listSessions()).resolves.toEqual([]);
      await reader.close();
      const writing = openStore(path).then(async (s) => {
        try {
          await s.setMeta('filler', 'x'.repeat(2_000_000));
        } finally {
          await s.close();
        }
      });
      await expect(writing).rejects.toThrow(
        `state database ${path} cannot be used: the disk is full (the filesystem holding ${disk} has no space left)`,
      );
      await expect(writing).rejects.not.toThrow(/corrupt/);
    },
  );
  it('maps SQLITE_FULL and ENOSPC to the full-disk message, and leaves other errors alone', () => {
    const full = new Database.SqliteError('database or disk is full', 'SQLITE_FULL');
    expect(toStateError(full, '/var/lib/c/state.db').message).toMatch(
      /^state database \/var\/lib\/c\/state.db cannot be used: the disk is full \(the filesystem holding \/var\/lib\/c has no space left\)/,
    );
    const enospc = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    expect(diskFullError(enospc, '/x/state.db')).toBeInstanceOf(StateError);
    const io = new Database.SqliteError('disk I/O error', 'SQLITE_IOERR_READ');
    expect(diskFullError(io, join(tmpdir(), 'state.db'))).toBeNull();
  });
});
