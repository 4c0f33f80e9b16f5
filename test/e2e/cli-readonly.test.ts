/**
 * `curupira runs` on a state file that sits on a read-only mount. Permission bits do not stop root
 * (the suite may run as root), so the folder is bind-mounted read-only inside a private mount
 * namespace (`unshare -rm`), where even root cannot write it.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/index.js';
import { CLI } from '../helpers/harness.js';

const dir = mkdtempSync(join(tmpdir(), 'curupira-ro-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function inReadOnlyMount(script: string): ReturnType<typeof spawnSync> {
  return spawnSync(
    'unshare',
    ['-rm', 'sh', '-c', `mount --bind "$0" "$0" && mount -o remount,ro,bind "$0" && ${script}`, dir],
    { encoding: 'utf8', env: { PATH: process.env.PATH, HOME: dir } },
  );
}

// Needs user and mount namespaces (util-linux `unshare`); without them there is no honest way to
// make a folder read-only for root, so the test is skipped with that reason.
const probe = inReadOnlyMount('! touch "$0/probe" 2>/dev/null');
const canMountReadOnly = probe.status === 0;

describe.skipIf(!canMountReadOnly)('state file on a read-only mount', () => {
  it('runs lists the history without writing anything', async () => {
    const store = await openStore(join(dir, 'state', 'state.sqlite3'));
    await store.createRun({
      automationId: 'fix',
      taskKey: 'fix:issue:1',
      repo: 'acme/api',
      taskType: 'issue',
      itemId: '1',
      itemKey: 'issue:1',
      itemTitle: 'Read me',
      itemUrl: 'https://github.com/acme/api/issues/1',
      status: 'succeeded',
    });
    await store.close();
    writeFileSync(
      join(dir, 'settings.toml'),
      `[settings]\nstate_db_path = "state/state.sqlite3"\n[repositories.api]\nremote = "https://github.com/acme/api.git"\n[automations.fix]\nrepository = "api"\nrepo = "acme/api"\nprompt = "x"\n`,
    );
    const result = inReadOnlyMount(`"${process.execPath}" "${CLI}" runs -c "$0/settings.toml"`);
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(String(result.stdout)).toMatch(/succeeded .* acme\/api#1 {2}"Read me"\n$/);
    expect(readdirSync(join(dir, 'state'))).toEqual(['state.sqlite3']);
  });
});
