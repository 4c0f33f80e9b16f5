/**
 * Issue 26, point 6: the effective sandbox is visible before and after a run: `validate
 * --explain`, `run --dry-run`, `doctor` (which says what to install when bubblewrap cannot start)
 * and `runs show`; opting out where strangers write the text is a warning of `validate`.
 */
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findExecutable } from '../../src/process/env.js';
import { sandboxBackend } from '../../src/sandbox/registry.js';
import { createHarness, type Harness, onlyRun, runBuiltCli } from '../helpers/harness.js';

const probe = await sandboxBackend('bubblewrap').probe();

let h: Harness | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

const cli = (args: string[], env?: NodeJS.ProcessEnv) =>
  runBuiltCli(['--config', h!.settingsFile, ...args], { env: env ?? h!.env, cwd: h!.dir });

describe('the sandbox policy in the CLI', () => {
  it('validate --explain names the sandbox; opting out on untrusted text is a warning', async () => {
    h = await createHarness({ provider: 'claude', profileExtra: 'sandbox_hosts = ["registry.npmjs.org"]' });
    const explain = await cli(['validate', '--explain']);
    expect(explain.code, explain.stderr).toBe(0);
    expect(explain.stdout).toMatch(
      /sandbox: +auto \(the default for text strangers write\): bubblewrap where it starts, else none with a warning on the run; writable: the worktree and its git directories, .*hosts: claude's API, registry\.npmjs\.org; limits: 8192 MiB, 1024 processes/,
    );
    expect(explain.stderr).not.toContain('sandbox = "none"');
    h.configure({ profileExtra: 'sandbox_mode = "none"' });
    const optedOut = await cli(['validate']);
    expect(optedOut.stderr + optedOut.stdout).toContain(
      `automations.fix: sandbox = "none" (profile 'main') runs the agent on text strangers write`,
    );
  });

  it.skipIf(!probe.ok)('run --dry-run shows the sandbox the run would get here', async () => {
    h = await createHarness({ provider: 'claude' });
    const dry = await cli(['run', '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain(
      'sandbox:  bubblewrap (sandbox = "auto", the default for text strangers write)',
    );
    expect(dry.stdout).toContain('          hosts: api.anthropic.com, statsig.anthropic.com');
  });

  it.skipIf(!probe.ok)(
    'doctor says bubblewrap starts, or what to install when a required sandbox cannot',
    async () => {
      h = await createHarness({ provider: 'claude' });
      const ok = await cli(['doctor']);
      expect(ok.stdout).toMatch(/ok {4}sandbox: bubblewrap starts \(sandboxed: fix\)/);
      // The same machine without bwrap on PATH, and an automation that requires a sandbox.
      const bin = join(h.dir, 'no-bwrap');
      mkdirSync(bin);
      for (const tool of ['git', 'node', 'sh'])
        symlinkSync(findExecutable(tool, process.env.PATH)!, join(bin, tool));
      h.configure({ settingsExtra: 'sandbox = "required"' });
      const missing = await cli(['doctor'], { ...h.env, PATH: `${h.binDir}:${bin}` });
      expect(missing.stdout).toContain(
        'FAIL  sandbox: bwrap is not installed: install the bubblewrap package (apt-get install bubblewrap); runs of fix fail until it starts',
      );
      expect(missing.code).not.toBe(0);
    },
  );

  it.skipIf(!probe.ok)('runs show prints the sandbox a run had', async () => {
    h = await createHarness({ provider: 'claude' });
    const run = onlyRun((await h.run()).runs);
    const show = await cli(['runs', 'show', run.id]);
    expect(show.stdout).toMatch(
      / {2}sandbox: {5}bubblewrap \(sandbox = "auto", the default for text strangers write\); writable: /,
    );
    expect(show.stdout).not.toContain('sandbox/policy');
  });
});
