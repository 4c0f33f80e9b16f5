import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { chmod } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { staticTokenSource } from '../github/token.js';
import { git, sanitizedGitEnv } from '../workspace/git.js';
import { commitFiles, createOrigin, isolateGitForTests, type OriginRepo } from '../workspace/testing.js';
import { httpsHost, PUSH_TOKEN_ENV, pushBranch, pushEnv } from './push.js';

const TOKEN = 'ghp_pushTestToken00000000000000000000001';

beforeAll(() => isolateGitForTests());

/** `git credential fill` as a push would run it: our env, a request on stdin. */
function fill(cwd: string, env: Record<string, string>, host: string) {
  return spawnSync('git', ['credential', 'fill'], {
    cwd,
    env: sanitizedGitEnv(env) as NodeJS.ProcessEnv,
    input: `protocol=https\nhost=${host}\npath=acme/api.git\n\n`,
    encoding: 'utf8',
  });
}

describe('push credentials', () => {
  let origin: OriginRepo | undefined;
  afterEach(async () => {
    await origin?.cleanup();
    origin = undefined;
  });

  it('puts the token only in one variable of the push’s own environment, never in its config or argv', () => {
    const env = pushEnv('https://github.com/acme/api.git', TOKEN);
    const holding = Object.entries(env).filter(([, value]) => value.includes(TOKEN));
    expect(holding).toEqual([[PUSH_TOKEN_ENV, TOKEN]]);
    expect(env.GIT_CONFIG_KEY_0).toBe('core.hooksPath');
    expect(env.GIT_CONFIG_KEY_1).toBe('credential.helper');
    expect(env.GIT_CONFIG_VALUE_1).toBe('');
    // Not https (ssh, file, a path): no token at all.
    for (const remote of [
      'git@github.com:acme/api.git',
      'file:///tmp/x.git',
      '/tmp/x.git',
      'http://h/x.git',
    ]) {
      expect(httpsHost(remote)).toBeUndefined();
      expect(JSON.stringify(pushEnv(remote, TOKEN))).not.toContain(TOKEN);
    }
  });

  it('answers git with the token for the remote’s host only, and no configured helper runs', async () => {
    origin = await createOrigin();
    const repo = join(origin.dir, 'seed');
    const captured = join(origin.dir, 'captured');
    // A helper planted in the repository's config would see the request (and could keep the token).
    await git(['config', 'credential.helper', `!f() { cat > ${captured}; }; f`], { cwd: repo });
    const env = pushEnv('https://github.com/acme/api.git', TOKEN);
    const ok = fill(repo, env, 'github.com');
    expect(ok.status).toBe(0);
    expect(ok.stdout).toContain('username=x-access-token');
    expect(ok.stdout).toContain(`password=${TOKEN}`);
    expect(existsSync(captured)).toBe(false);
    // A remote rewritten to another host (an `insteadOf` an agent added) gets nothing.
    const other = fill(repo, env, 'evil.example');
    expect(other.status).not.toBe(0);
    expect(`${other.stdout}${other.stderr}`).not.toContain(TOKEN);
  });

  it('pushes fast-forward only, with hooks off, writing no credential anywhere', async () => {
    origin = await createOrigin();
    const work = join(origin.dir, 'work');
    await git(['clone', '-q', origin.url, work], { cwd: origin.dir });
    await git(['switch', '-q', '-c', 'curupira/fix'], { cwd: work });
    const first = await commitFiles(work, { 'a.txt': 'a\n' });
    const hookRan = join(origin.dir, 'hook-ran');
    writeFileSync(join(work, '.git', 'hooks', 'pre-push'), `#!/bin/sh\nenv > ${hookRan}\n`);
    await chmod(join(work, '.git', 'hooks', 'pre-push'), 0o755);
    const tokens = staticTokenSource(TOKEN);
    expect(await pushBranch({ cwd: work, remote: origin.url, branch: 'curupira/fix', tokens })).toBe(first);
    expect((await git(['rev-parse', 'refs/heads/curupira/fix'], { cwd: origin.url })).trim()).toBe(first);
    expect((await git(['rev-parse', 'refs/remotes/origin/curupira/fix'], { cwd: work })).trim()).toBe(first);
    expect(existsSync(hookRan)).toBe(false);
    expect(readFileSync(join(work, '.git', 'config'), 'utf8')).not.toContain(TOKEN);
    // A rewritten history is refused, not forced over the remote's.
    await git(['reset', '-q', '--hard', 'HEAD~1'], { cwd: work });
    await commitFiles(work, { 'b.txt': 'b\n' });
    await expect(
      pushBranch({ cwd: work, remote: origin.url, branch: 'curupira/fix', tokens }),
    ).rejects.toThrow(/rejected|non-fast-forward|fetch first/);
    expect((await git(['rev-parse', 'refs/heads/curupira/fix'], { cwd: origin.url })).trim()).toBe(first);
  });

  it("pushes again when the remote's ref was locked by another update (a push a killed process left running)", async () => {
    origin = await createOrigin();
    const work = join(origin.dir, 'work');
    await git(['clone', '-q', origin.url, work], { cwd: origin.dir });
    await git(['switch', '-q', '-c', 'curupira/fix'], { cwd: work });
    const first = await commitFiles(work, { 'a.txt': 'a\n' });
    // The other update holds the ref's lock for a moment, then is done.
    const lock = join(origin.url, 'refs', 'heads', 'curupira', 'fix.lock');
    mkdirSync(dirname(lock), { recursive: true });
    writeFileSync(lock, '');
    const released = setTimeout(() => rmSync(lock, { force: true }), 300);
    try {
      expect(await pushBranch({ cwd: work, remote: origin.url, branch: 'curupira/fix' })).toBe(first);
    } finally {
      clearTimeout(released);
    }
    expect((await git(['rev-parse', 'refs/heads/curupira/fix'], { cwd: origin.url })).trim()).toBe(first);
  });
});
