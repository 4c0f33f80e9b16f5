import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fakeAgentScript } from '../fake/install.js';
import { PiProfile } from '../pi/schema.js';
import { createCodexDriver } from './index.js';
import { CodexProfile } from './schema.js';

const driver = createCodexDriver();
/** A folder that does not exist: no git directories to add. */
const worktree = '/w/tree';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'curupira-codex-')));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.invalid', ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1' },
  });
}

let repos = 0;
/** A checkout with one commit and a linked worktree of it, laid out as curupira lays them out. */
function checkoutWithWorktree(): { checkout: string; worktree: string } {
  repos += 1;
  const checkout = join(root, `checkout-${repos}`);
  git(root, 'init', '-q', '-b', 'main', checkout);
  git(checkout, 'commit', '-q', '--allow-empty', '-m', 'root');
  const linked = join(root, `checkout-${repos}.worktrees`, 'fix', 'issue-1');
  git(checkout, 'worktree', 'add', '-q', '-b', `curupira/fix/issue-${repos}`, linked);
  return { checkout, worktree: linked };
}

function profileOf(fields: Record<string, unknown>): CodexProfile {
  return CodexProfile.parse({ provider: 'codex', ...fields });
}

/** Runs the fake Codex CLI with these arguments in `cwd`. */
function runFake(args: string[], cwd: string): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(process.execPath, [fakeAgentScript(), 'codex', ...args], {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', HOME: root },
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('codex driver', () => {
  it('runs a bare profile as exec --json', () => {
    const inv = driver.buildInvocation({ profile: profileOf({}), prompt: 'Fix', worktree });
    expect(inv.args).toEqual(['exec', '--json', '--', 'Fix']);
  });

  it("passes every option, exec's own first, config values JSON-quoted in one argument", () => {
    const profile = profileOf({
      model: 'gpt-5-codex',
      agent: 'work',
      effort: 'high',
      sandbox: 'workspace-write',
      auto_review: true,
    });
    expect(driver.buildInvocation({ profile, prompt: 'Fix', worktree }).args).toEqual([
      'exec',
      '--profile',
      'work',
      '--sandbox',
      'workspace-write',
      '--model',
      'gpt-5-codex',
      '--config',
      'model_reasoning_effort="high"',
      '--config',
      'approval_policy="on-request"',
      '--config',
      'approvals_reviewer="auto_review"',
      '--json',
      '--',
      'Fix',
    ]);
  });

  it('resumes as exec [--profile --sandbox] resume <thread id> [--model --config]: resume refuses the first two', () => {
    const profile = profileOf({ model: 'gpt-5-codex', agent: 'work', sandbox: 'read-only', effort: 'low' });
    const inv = driver.buildInvocation({
      profile,
      prompt: 'Continue',
      worktree,
      resumeSessionId: '0199-thread',
    });
    expect(inv.args).toEqual([
      'exec',
      '--profile',
      'work',
      '--sandbox',
      'read-only',
      'resume',
      '0199-thread',
      '--model',
      'gpt-5-codex',
      '--config',
      'model_reasoning_effort="low"',
      '--json',
      '--',
      'Continue',
    ]);
  });

  it('declares the run’s MCP servers as mcp_servers.<name> config overrides (TOML values), for a resume too', () => {
    const mcpServers = [
      {
        name: 'curupira-findings',
        command: '/usr/bin/node',
        args: ['/opt/cu "x"/main.js', 'mcp', '--run', 'r1'],
        env: { CURUPIRA_X: 'y' },
      },
    ];
    const expected = [
      '--config',
      'mcp_servers.curupira-findings.command="/usr/bin/node"',
      '--config',
      'mcp_servers.curupira-findings.args=["/opt/cu \\"x\\"/main.js", "mcp", "--run", "r1"]',
      '--config',
      'mcp_servers.curupira-findings.env={ "CURUPIRA_X" = "y" }',
      '--json',
      '--',
      'Review',
    ];
    const fresh = driver.buildInvocation({ profile: profileOf({}), prompt: 'Review', worktree, mcpServers });
    expect(fresh.args.slice(-9)).toEqual(expected);
    const resumed = driver.buildInvocation({
      profile: profileOf({}),
      prompt: 'Review',
      worktree,
      resumeSessionId: 't1',
      mcpServers,
    });
    expect(resumed.args).toEqual(['exec', 'resume', 't1', ...expected]);
  });

  it("names what a commit in a worktree writes (the common dir's objects, refs and logs, then its own git dir) as writable roots for workspace-write", () => {
    const { checkout, worktree: linked } = checkoutWithWorktree();
    // Not the common dir as a whole: in curupira's sandbox it is read-only but for these, and
    // Codex's bubblewrap cannot set up a writable root there (real-cli.test.ts).
    const gitDirs = [
      '--add-dir',
      join(checkout, '.git', 'objects'),
      '--add-dir',
      join(checkout, '.git', 'refs'),
      '--add-dir',
      join(checkout, '.git', 'logs'),
      '--add-dir',
      join(checkout, '.git', 'worktrees', 'issue-1'),
    ];
    const argsFor = (sandbox?: string, resumeSessionId?: string): string[] =>
      driver.buildInvocation({
        profile: profileOf(sandbox ? { sandbox } : {}),
        prompt: 'Fix',
        worktree: linked,
        ...(resumeSessionId ? { resumeSessionId } : {}),
      }).args;
    expect(argsFor('workspace-write')).toEqual([
      'exec',
      '--sandbox',
      'workspace-write',
      ...gitDirs,
      '--json',
      '--',
      'Fix',
    ]);
    expect(argsFor('workspace-write', 'T1')).toEqual([
      'exec',
      '--sandbox',
      'workspace-write',
      ...gitDirs,
      'resume',
      'T1',
      '--json',
      '--',
      'Fix',
    ]);
    // No sandbox in the profile: Codex's own configuration may choose workspace-write.
    expect(argsFor()).toEqual(['exec', ...gitDirs, '--json', '--', 'Fix']);
    expect(argsFor('read-only')).not.toContain('--add-dir');
    expect(argsFor('danger-full-access')).not.toContain('--add-dir');
  });

  it('names the .git folder of a shared checkout (checkout = "main")', () => {
    const { checkout } = checkoutWithWorktree();
    const inv = driver.buildInvocation({
      profile: profileOf({ sandbox: 'workspace-write' }),
      prompt: 'Fix',
      worktree: checkout,
    });
    expect(inv.args).toEqual([
      'exec',
      '--sandbox',
      'workspace-write',
      '--add-dir',
      join(checkout, '.git'),
      '--json',
      '--',
      'Fix',
    ]);
  });

  it('keeps a prompt starting with - as prompt text', () => {
    const inv = driver.buildInvocation({ profile: profileOf({}), prompt: '--json', worktree });
    expect(inv.args.slice(-2)).toEqual(['--', '--json']);
  });

  it('rejects a profile of another provider', () => {
    const other = PiProfile.parse({ provider: 'pi' });
    expect(() => driver.buildInvocation({ profile: other as never, prompt: 'x', worktree })).toThrow(
      'codex adapter cannot use pi profile',
    );
  });
});

describe('codex driver against the fake Codex CLI (argument rules of codex-cli 0.171.0)', () => {
  const full = {
    model: 'gpt-5-codex',
    agent: 'work',
    effort: 'high',
    sandbox: 'workspace-write',
    auto_review: true,
  };

  it('a resume with sandbox and profile set is accepted, and the old order is refused as the real CLI refuses it', () => {
    const { worktree: linked } = checkoutWithWorktree();
    const args = driver.buildInvocation({
      profile: profileOf(full),
      prompt: 'Continue',
      worktree: linked,
      resumeSessionId: 'thread-1',
    }).args;
    const accepted = runFake(args, linked);
    expect(accepted.status, accepted.stderr).toBe(0);
    expect(accepted.stdout).toContain('"thread_id":"thread-1"');

    // Options of exec after `resume`, as the driver used to write them: clap's refusal, status 2.
    const old = [
      'exec',
      'resume',
      'thread-1',
      '--model',
      'gpt-5-codex',
      '--sandbox',
      'workspace-write',
      '--json',
      '--',
      'x',
    ];
    const refused = runFake(old, linked);
    expect(refused.status).toBe(2);
    expect(refused.stderr.split('\n')[0]).toBe("error: unexpected argument '--sandbox' found");
    expect(
      runFake(['exec', 'resume', 'thread-1', '--profile', 'work', '--json', '--', 'x'], linked).stderr,
    ).toContain("unexpected argument '--profile' found");
  });

  it("takes the key proxy's config override before exec, fresh and resumed (as codex-cli 0.171.0 does)", () => {
    const { worktree: linked } = checkoutWithWorktree();
    const prefix = driver.sandbox?.keys?.[0]?.baseUrlArgs?.('http://127.0.0.1:3128/_key/0') ?? [];
    expect(prefix).toEqual(['--config', 'openai_base_url="http://127.0.0.1:3128/_key/0"']);
    for (const resumeSessionId of [undefined, 'thread-3']) {
      const args = driver.buildInvocation({
        profile: profileOf(full),
        prompt: 'Fix',
        worktree: linked,
        ...(resumeSessionId ? { resumeSessionId } : {}),
      }).args;
      const result = runFake([...prefix, ...args], linked);
      expect(result.status, result.stderr).toBe(0);
      if (resumeSessionId) expect(result.stdout).toContain(`"thread_id":"${resumeSessionId}"`);
    }
  });

  it('commits from a worktree in the workspace-write sandbox, fresh and resumed', () => {
    for (const resumeSessionId of [undefined, 'thread-2']) {
      const { worktree: linked } = checkoutWithWorktree();
      const args = driver.buildInvocation({
        profile: profileOf(full),
        prompt: 'Fix [[fake:commit]]',
        worktree: linked,
        ...(resumeSessionId ? { resumeSessionId } : {}),
      }).args;
      const result = runFake(args, linked);
      expect(result.status, result.stderr).toBe(0);
      expect(git(linked, 'log', '--format=%s', '-1').trim()).toBe('codex: fake change');
    }
  });

  it('without the git directories as writable roots the sandboxed commit fails (the fake models the sandbox)', () => {
    const { checkout, worktree: linked } = checkoutWithWorktree();
    const args = [
      'exec',
      '--sandbox',
      'workspace-write',
      '--add-dir',
      join(checkout, '.git'),
      '--json',
      '--',
      '[[fake:commit]]',
    ];
    const result = runFake(args, linked);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(
      `Unable to create '${join(checkout, '.git', 'worktrees', 'issue-1', 'index.lock')}': Read-only file system`,
    );
    expect(git(linked, 'log', '--format=%s', '-1').trim()).toBe('root');
  });
});
