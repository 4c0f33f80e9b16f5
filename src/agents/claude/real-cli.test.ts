/**
 * The Claude driver and the agent environment against the real Claude Code, run as root with
 * `permission_mode = "bypassPermissions"`: refused unless IS_SANDBOX=1 reaches it, accepted (it
 * starts its session) when curupira has IS_SANDBOX=1. The model endpoint is a closed local port, so
 * nothing leaves the machine; the test stops the CLI once it has started its session.
 *
 * Skipped unless CURUPIRA_REAL_CLAUDE names a Claude Code executable and the test runs as root (the
 * refusal only exists for root): the suite installs nothing and reaches no network. Run it with
 * the CLI installed outside the repository, e.g.
 *   (cd /tmp/cli && npm install @anthropic-ai/claude-code)
 *   CURUPIRA_REAL_CLAUDE=/tmp/cli/node_modules/.bin/claude npx vitest run src/agents/claude/real-cli.test.ts
 * Last run green with Claude Code 2.1.197.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildAgentEnv } from '../../process/env.js';
import { createClaudeDriver } from './index.js';
import { ClaudeProfile } from './schema.js';

const CLAUDE = process.env.CURUPIRA_REAL_CLAUDE;
const AS_ROOT = process.getuid?.() === 0;

/** Runs the CLI until it exits or prints its session's init line (then stops it). */
function startOrRefuse(
  args: string[],
  cwd: string,
  env: Record<string, string>,
): Promise<{ started: boolean; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(CLAUDE!, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    let settled = false;
    const finish = (started: boolean): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      child.kill('SIGKILL');
      resolve({ started, stderr });
    };
    const timer = setTimeout(() => finish(false), 60_000);
    child.stdout.on('data', (d: Buffer) => {
      if (d.toString().includes('"subtype":"init"')) finish(true);
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.on('error', reject);
    child.on('close', () => finish(false));
  });
}

describe.skipIf(!CLAUDE || !AS_ROOT)('the real Claude Code as root (CURUPIRA_REAL_CLAUDE)', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('takes bypassPermissions only when IS_SANDBOX=1 passes through the agent environment', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'curupira-real-claude-'));
    dirs.push(cwd);
    const driver = createClaudeDriver();
    const profile = ClaudeProfile.parse({ provider: 'claude', permission_mode: 'bypassPermissions' });
    const args = driver.buildInvocation({ profile, prompt: 'hello', worktree: cwd }).args;
    const source = {
      PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
      HOME: cwd,
      ANTHROPIC_API_KEY: 'not-a-real-key-0000',
      ANTHROPIC_BASE_URL: 'http://127.0.0.1:9',
    };
    const envFor = (extra: Record<string, string>): Record<string, string> =>
      buildAgentEnv({ source: { ...source, ...extra }, providerAllowlist: driver.envAllowlist, cwd });

    const refused = await startOrRefuse(args, cwd, envFor({}));
    expect(refused.started).toBe(false);
    expect(refused.stderr).toContain('cannot be used with root/sudo privileges');

    const accepted = await startOrRefuse(args, cwd, envFor({ IS_SANDBOX: '1' }));
    expect(accepted.stderr).not.toContain('cannot be used with root/sudo privileges');
    expect(accepted.started).toBe(true);
  }, 150_000);
});
