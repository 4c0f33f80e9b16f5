import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FakeClock } from '../core/clock.js';
import { GitHubAuthError } from '../core/errors.js';
import { redact } from '../log.js';
import { createTokenSource, TOKEN_CACHE_MS } from './token.js';

const root = mkdtempSync(join(tmpdir(), 'curupira-token-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let dirs = 0;

/**
 * A folder holding a fake `gh` (POSIX sh, builtins only: the child's PATH is just this folder).
 * Each run appends its arguments to `calls` and prints `<token>-<run number>` (or what `print` says).
 */
function fakeGh(options: { print?: string; exitCode?: number; stderr?: string } = {}): {
  path: string;
  calls: () => string[];
} {
  dirs += 1;
  const dir = join(root, `gh-${dirs}`);
  mkdirSync(dir);
  const calls = join(dir, 'calls');
  const output =
    options.print === undefined ? 'printf "gho_fake-%s\\n" "$n"' : `printf '%s' '${options.print}'`;
  writeFileSync(
    join(dir, 'gh'),
    `#!/bin/sh
n=1
if [ -f '${calls}' ]; then
  while read -r line; do n=$((n + 1)); done < '${calls}'
fi
echo "$*" >> '${calls}'
${options.stderr ? `echo '${options.stderr}' >&2` : ''}
${output}
exit ${options.exitCode ?? 0}
`,
  );
  chmodSync(join(dir, 'gh'), 0o755);
  return {
    path: dir,
    calls: () => {
      try {
        return readFileSync(calls, 'utf8').trim().split('\n');
      } catch {
        return [];
      }
    },
  };
}

async function failure(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a failure');
}

describe('where the token comes from', () => {
  it('GH_TOKEN wins over GITHUB_TOKEN and gh', async () => {
    const gh = fakeGh();
    const tokens = createTokenSource({
      env: { GH_TOKEN: 'gh-token-value', GITHUB_TOKEN: 'github-token-value', PATH: gh.path },
      clock: new FakeClock(),
    });
    expect(await tokens.get()).toBe('gh-token-value');
    expect(await tokens.describe()).toBe('the GH_TOKEN environment variable');
    expect(gh.calls()).toEqual([]);
  });

  it('GITHUB_TOKEN when GH_TOKEN is unset or blank', async () => {
    const gh = fakeGh();
    const tokens = createTokenSource({
      env: { GH_TOKEN: '  ', GITHUB_TOKEN: 'github-token-value', PATH: gh.path },
      clock: new FakeClock(),
    });
    expect(await tokens.get()).toBe('github-token-value');
    expect(await tokens.describe()).toBe('the GITHUB_TOKEN environment variable');
    expect(gh.calls()).toEqual([]);
  });

  it('`gh auth token` when neither is set', async () => {
    const gh = fakeGh();
    const tokens = createTokenSource({ env: { PATH: gh.path }, clock: new FakeClock() });
    expect(await tokens.get()).toBe('gho_fake-1');
    expect(await tokens.describe()).toBe('`gh auth token`');
    expect(gh.calls()).toEqual(['auth token']);
  });

  it('asks gh for the Enterprise host', async () => {
    const gh = fakeGh();
    const tokens = createTokenSource({
      env: { PATH: gh.path },
      clock: new FakeClock(),
      hostname: 'ghe.example.com',
    });
    await tokens.get();
    expect(gh.calls()).toEqual(['auth token --hostname ghe.example.com']);
  });

  it('the token from gh is never printed by the logger', async () => {
    const gh = fakeGh({ print: 'not-token-shaped-secret' });
    const tokens = createTokenSource({ env: { PATH: gh.path }, clock: new FakeClock() });
    expect(await tokens.get()).toBe('not-token-shaped-secret');
    expect(redact('token is not-token-shaped-secret')).not.toContain('not-token-shaped-secret');
  });
});

describe('cache', () => {
  it('keeps the token from gh for five minutes by the clock', async () => {
    const gh = fakeGh();
    const clock = new FakeClock();
    const tokens = createTokenSource({ env: { PATH: gh.path }, clock });
    expect(await tokens.get()).toBe('gho_fake-1');
    await clock.advance(TOKEN_CACHE_MS - 1);
    expect(await tokens.get()).toBe('gho_fake-1');
    expect(gh.calls()).toHaveLength(1);
    await clock.advance(1);
    expect(await tokens.get()).toBe('gho_fake-2');
    expect(gh.calls()).toHaveLength(2);
    expect(TOKEN_CACHE_MS).toBe(5 * 60_000);
  });
});

describe("the seed's messages when there is no token", () => {
  it('gh prints nothing', async () => {
    const gh = fakeGh({ print: '' });
    const error = await failure(createTokenSource({ env: { PATH: gh.path }, clock: new FakeClock() }).get());
    expect(error).toBeInstanceOf(GitHubAuthError);
    expect(error.message).toMatch(/^gh auth token returned an empty token/);
  });

  it('gh is not on PATH', async () => {
    const empty = join(root, 'no-gh');
    mkdirSync(empty, { recursive: true });
    const error = await failure(createTokenSource({ env: { PATH: empty }, clock: new FakeClock() }).get());
    expect(error).toBeInstanceOf(GitHubAuthError);
    expect(error.message).toMatch(/^Required executable not found: gh/);
  });

  it('gh fails (not logged in)', async () => {
    const gh = fakeGh({ print: '', exitCode: 1, stderr: 'You are not logged into any GitHub hosts.' });
    const error = await failure(createTokenSource({ env: { PATH: gh.path }, clock: new FakeClock() }).get());
    expect(error).toBeInstanceOf(GitHubAuthError);
    expect(error.message).toMatch(/^gh exited with status 1: You are not logged into any GitHub hosts\./);
  });

  it('a failure is not cached: once gh works, the token is found', async () => {
    const gh = fakeGh({ print: '' });
    const env: NodeJS.ProcessEnv = { PATH: gh.path };
    const tokens = createTokenSource({ env, clock: new FakeClock() });
    await expect(tokens.get()).rejects.toBeInstanceOf(GitHubAuthError);
    env.GH_TOKEN = 'now-set';
    expect(await tokens.get()).toBe('now-set');
  });
});
