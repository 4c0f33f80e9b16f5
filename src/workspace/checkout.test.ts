import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WorkspaceError } from '../core/errors.js';
import { silentLogger } from '../log.js';
import { ensureCheckout } from './checkout.js';
import { createOrigin, isolateGitForTests, type OriginOptions, type OriginRepo } from './testing.js';

const log = silentLogger();
let origin: OriginRepo | undefined;

beforeAll(() => isolateGitForTests());
afterEach(async () => {
  await origin?.cleanup();
  origin = undefined;
});

async function setUp(options: OriginOptions = {}): Promise<OriginRepo> {
  origin = await createOrigin(options);
  return origin;
}

function options(repo: OriginRepo, extra: { setupScript?: string; timeoutMs?: number; path?: string } = {}) {
  return {
    alias: 'sample',
    remote: repo.url,
    path: extra.path ?? repo.checkoutPath,
    setupScript: extra.setupScript,
    timeoutMs: extra.timeoutMs ?? 20_000,
    log,
  };
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(WorkspaceError);
    return (error as WorkspaceError).code;
  }
  throw new Error('expected a WorkspaceError');
}

describe('ensureCheckout', () => {
  it('clones once under concurrent calls and runs the setup script once', async () => {
    const repo = await setUp({
      files: {
        'README.md': '# sample\n',
        'setup.sh': { content: '#!/bin/sh\necho ran >> setup-ran.txt\n', executable: true },
      },
    });
    const results = await Promise.all(
      [1, 2, 3, 4].map(() => ensureCheckout(options(repo, { setupScript: 'setup.sh' }))),
    );
    expect(results.filter((r) => r.freshClone)).toHaveLength(1);
    expect(results.every((r) => r.path === repo.checkoutPath)).toBe(true);
    expect(await readFile(join(repo.checkoutPath, 'README.md'), 'utf8')).toBe('# sample\n');
    expect(await readFile(join(repo.checkoutPath, 'setup-ran.txt'), 'utf8')).toBe('ran\n');

    const again = await ensureCheckout(options(repo, { setupScript: 'setup.sh' }));
    expect(again.freshClone).toBe(false);
    expect(await readFile(join(repo.checkoutPath, 'setup-ran.txt'), 'utf8')).toBe('ran\n');
  });

  it('says why a clone has no commit: an empty remote, or a HEAD naming a branch that has none', async () => {
    const repo = await setUp();
    const empty = join(repo.dir, 'empty.git');
    execFileSync('git', ['init', '-q', '--bare', empty]);
    await expect(
      ensureCheckout({ ...options(repo), remote: empty, path: join(repo.dir, 'empty-co') }),
    ).rejects.toThrow(
      `the clone of repository 'sample' has no commit: is ${empty} empty? Push a first commit, then run again`,
    );
    // Branches were pushed, but HEAD names another one (made with another default branch name).
    execFileSync('git', ['--git-dir', repo.url, 'symbolic-ref', 'HEAD', 'refs/heads/trunk']);
    const attempt = ensureCheckout(options(repo));
    await expect(attempt).rejects.toThrow(
      `${repo.url}'s HEAD names 'trunk', which has none, while it has main. Point its HEAD at the default branch (in a bare repository: git symbolic-ref HEAD refs/heads/main), then run again`,
    );
    expect(existsSync(repo.checkoutPath)).toBe(false);
  });

  it('refuses a destination that exists but is not a Git checkout, and leaves it alone', async () => {
    const repo = await setUp();
    await mkdir(repo.checkoutPath, { recursive: true });
    await writeFile(join(repo.checkoutPath, 'precious.txt'), 'mine');
    const attempt = ensureCheckout(options(repo));
    await expect(attempt).rejects.toThrow(
      `workspace destination exists but is not a Git checkout: ${repo.checkoutPath}`,
    );
    expect(await codeOf(ensureCheckout(options(repo)))).toBe('workspace_path');
    expect(await readFile(join(repo.checkoutPath, 'precious.txt'), 'utf8')).toBe('mine');
  });

  it('does not mistake a folder inside another repository for a checkout', async () => {
    const repo = await setUp();
    await ensureCheckout(options(repo));
    const nested = join(repo.checkoutPath, 'nested');
    await mkdir(nested);
    await expect(ensureCheckout(options(repo, { path: nested }))).rejects.toThrow(/not a Git checkout/);
  });

  it('removes the fresh clone when the setup script fails and reports its status and output', async () => {
    const repo = await setUp({
      files: {
        'setup.sh': {
          content:
            '#!/bin/sh\necho "installing dependencies"\necho "npm ERR! registry unreachable" >&2\nexit 3\n',
          executable: true,
        },
      },
    });
    const attempt = ensureCheckout(options(repo, { setupScript: 'setup.sh' }));
    await expect(attempt).rejects.toThrow(
      /^setup script setup\.sh failed with status 3: installing dependencies\nnpm ERR! registry unreachable$/,
    );
    expect(await codeOf(attempt)).toBe('setup_script');
    expect(existsSync(repo.checkoutPath)).toBe(false);
  });

  it('gives up on a setup script that runs past the deadline and removes the clone', async () => {
    const repo = await setUp({
      files: { 'setup.sh': { content: '#!/bin/sh\necho starting\nexec sleep 30\n', executable: true } },
    });
    const started = Date.now();
    const attempt = ensureCheckout(options(repo, { setupScript: 'setup.sh', timeoutMs: 1500 }));
    await expect(attempt).rejects.toThrow(
      /setup script setup\.sh did not finish within .* seconds: starting/,
    );
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(existsSync(repo.checkoutPath)).toBe(false);
  });

  it('reports a setup script that cannot start and removes the clone', async () => {
    const repo = await setUp({ files: { 'setup.sh': '#!/bin/sh\nexit 0\n' } });
    const attempt = ensureCheckout(options(repo, { setupScript: 'setup.sh' }));
    await expect(attempt).rejects.toThrow(
      /setup script setup\.sh could not start: .*EACCES.*\(is it executable\?\)/,
    );
    expect(existsSync(repo.checkoutPath)).toBe(false);
  });

  it('reports a missing setup script and removes the clone so the next run starts clean', async () => {
    const repo = await setUp();
    const attempt = ensureCheckout(options(repo, { setupScript: 'scripts/missing.sh' }));
    await expect(attempt).rejects.toThrow(/setup script scripts\/missing\.sh does not exist/);
    expect(existsSync(repo.checkoutPath)).toBe(false);
    const retry = await ensureCheckout(options(repo));
    expect(retry.freshClone).toBe(true);
  });

  it('refuses setup scripts outside the checkout, by path or by symlink, without running them', async () => {
    const elsewhere = await mkdtemp(join(tmpdir(), 'curupira-outside-'));
    const marker = join(elsewhere, 'outside-ran.txt');
    const outside = join(elsewhere, 'outside.sh');
    await writeFile(outside, `#!/bin/sh\necho ran > ${marker}\n`, { mode: 0o755 });
    const linked = await setUp({ symlinks: { 'setup.sh': outside } });
    const viaLink = ensureCheckout(options(linked, { setupScript: 'setup.sh' }));
    await expect(viaLink).rejects.toThrow(/setup script setup\.sh resolves outside the checkout/);
    expect(await codeOf(ensureCheckout(options(linked, { setupScript: 'setup.sh' })))).toBe('workspace_path');
    expect(existsSync(linked.checkoutPath)).toBe(false);

    await expect(ensureCheckout(options(linked, { setupScript: '../outside.sh' }))).rejects.toThrow(
      "setup_script must be a relative path without '..'",
    );
    await expect(ensureCheckout(options(linked, { setupScript: outside }))).rejects.toThrow(/relative path/);
    expect(existsSync(linked.checkoutPath)).toBe(false);
    expect(existsSync(marker)).toBe(false);
    await rm(elsewhere, { recursive: true, force: true });
  });

  it('requires an absolute destination and reports a failed clone with git’s reason', async () => {
    const repo = await setUp();
    await expect(ensureCheckout(options(repo, { path: 'relative/sample' }))).rejects.toThrow(
      /must be absolute/,
    );
    const broken = ensureCheckout({ ...options(repo), remote: join(repo.dir, 'no-such-origin.git') });
    await expect(broken).rejects.toThrow(/git clone .* failed with status 128: .*does not exist/);
    expect(existsSync(repo.checkoutPath)).toBe(false);
  });
});
