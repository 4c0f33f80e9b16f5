import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outcomeSet, parseResultLine } from '../../core/result-line.js';
import { lastWords } from '../../pipeline/report.js';
import { spawnAgent } from '../../process/agent.js';
import { runCommand } from '../../process/command.js';
import { buildAgentEnv } from '../../process/env.js';
import { listDrivers, loadDriver } from '../registry.js';
import { PROFILE_SCHEMAS, PROVIDERS, type Provider } from '../schemas.js';
import type { AgentEvent } from '../types.js';
import { FAKE_EXECUTABLES, installFakeAgents } from './install.js';

const root = mkdtempSync(join(tmpdir(), "curupira fake's agents-"));
const bin = join(root, 'bin dir');
const logs = join(root, 'logs');
let wrappers: Record<Provider, string>;
afterAll(() => rmSync(root, { recursive: true, force: true }));

const gitDir = dirname(execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim());
const PATH = [bin, dirname(process.execPath), gitDir, '/usr/bin', '/bin'].join(':');

beforeAll(() => {
  wrappers = installFakeAgents(bin, { logDir: logs });
});

it("names each fake after its driver's executable", async () => {
  const drivers = await listDrivers();
  expect(Object.fromEntries(drivers.map((d) => [d.provider, d.executable]))).toEqual(FAKE_EXECUTABLES);
});

let worktreeCounter = 0;
function newWorktree(): string {
  worktreeCounter += 1;
  const dir = join(root, `wt-${worktreeCounter}`);
  mkdirSync(dir);
  execFileSync('git', ['init', '-q', '-b', 'main', dir]);
  execFileSync('git', [
    '-C',
    dir,
    '-c',
    'user.name=t',
    '-c',
    'user.email=t@example.invalid',
    'commit',
    '-q',
    '--allow-empty',
    '-m',
    'root',
  ]);
  return dir;
}

interface RunOutcome {
  events: AgentEvent[];
  exitCode: number | null;
  timedOut: boolean;
  stderr: string;
  log: Record<string, unknown>;
}

interface RunOptions {
  prompt?: string;
  resumeSessionId?: string;
  assignedSessionId?: string;
  worktree?: string;
  source?: NodeJS.ProcessEnv;
  profile?: Record<string, unknown>;
  githubToken?: string;
  timeoutMs?: number;
  version?: string;
}

/** The full path a run takes: driver argv, built env, spawnAgent, the driver's own parser. */
async function run(provider: Provider, options: RunOptions = {}): Promise<RunOutcome> {
  const driver = await loadDriver(provider);
  const profile = PROFILE_SCHEMAS[provider].parse({
    provider,
    env: { FAKE_AGENT_LOG: logs },
    ...options.profile,
  }) as never;
  const worktree = options.worktree ?? newWorktree();
  const invocation = driver.buildInvocation({
    profile,
    prompt: options.prompt ?? 'Fix issue #7',
    worktree,
    ...(options.resumeSessionId ? { resumeSessionId: options.resumeSessionId } : {}),
    ...(options.assignedSessionId ? { assignedSessionId: options.assignedSessionId } : {}),
    ...(options.version ? { version: options.version } : {}),
  });
  const p = profile as { env: Record<string, string>; pass_env: string[] };
  const env = buildAgentEnv({
    source: { PATH, HOME: root, ...options.source },
    providerAllowlist: driver.envAllowlist,
    extra: p.env,
    passEnv: p.pass_env,
    invocationEnv: invocation.env,
    cwd: worktree,
    ...(options.githubToken ? { githubToken: options.githubToken } : {}),
  });
  const parser = driver.createParser();
  const events: AgentEvent[] = [];
  const result = await spawnAgent({
    executable: driver.executable,
    args: invocation.args,
    cwd: worktree,
    env,
    maxOutputBytes: 64 * 1024,
    killGraceMs: 300,
    ...(options.timeoutMs ? { timeoutMs: options.timeoutMs } : {}),
    onStdoutLine: (line) => events.push(...parser.parseLine(line)),
  });
  events.push(...parser.end());
  const logLines = readFileSync(join(logs, `${provider}.jsonl`), 'utf8')
    .trim()
    .split('\n');
  return {
    events,
    exitCode: result.exitCode,
    timedOut: result.timedOut,
    stderr: result.stderrTail,
    log: JSON.parse(logLines.at(-1)!),
  };
}

function sessionIds(events: AgentEvent[]): string[] {
  return events.flatMap((e) => (e.kind === 'session' ? [e.sessionId] : []));
}

function texts(events: AgentEvent[]): string[] {
  return events.flatMap((e) => (e.kind === 'assistant' ? [e.text] : []));
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
}

const COPILOT_ID = '0b5c7d1e-2f3a-4b4c-8d5e-6f7a8b9c0d1e';

describe('fake agent CLIs', () => {
  it('installs one executable wrapper per provider, named like the real CLI', () => {
    expect(Object.keys(wrappers).sort()).toEqual([...PROVIDERS].sort());
    expect(wrappers.cursor).toBe(join(bin, 'agent'));
    for (const path of Object.values(wrappers)) expect(statSync(path).mode & 0o111).not.toBe(0);
  });

  describe.each(PROVIDERS)('%s', (provider) => {
    const assigned = provider === 'copilot' ? { assignedSessionId: COPILOT_ID } : {};

    it('speaks the provider’s format: the parser sees session, message, tool, and done', async () => {
      const worktree = newWorktree();
      const outcome = await run(provider, { worktree, ...assigned });
      expect(outcome.exitCode).toBe(0);
      const ids = sessionIds(outcome.events);
      expect(ids).toHaveLength(1);
      expect(outcome.events[0]).toEqual({ kind: 'session', sessionId: ids[0] });
      expect(texts(outcome.events)).toContain('Starting on the task.');
      expect(outcome.events).toContainEqual(
        expect.objectContaining({ kind: 'tool_call', input: expect.stringContaining('ls') }),
      );
      expect(outcome.events).toContainEqual(expect.objectContaining({ kind: 'tool_result', isError: false }));
      if (provider !== 'copilot') expect(outcome.events.some((e) => e.kind === 'usage')).toBe(true);
      expect(outcome.events.at(-1)).toEqual({
        kind: 'done',
        isError: false,
        result: 'Done: the task is complete.',
      });
      expect(outcome.log).toMatchObject({ provider, cwd: worktree, resumeOf: null, sessionId: ids[0] });
      expect((outcome.log.env as { values: Record<string, string> }).values.PWD).toBe(worktree);
    });

    it('ends its final message with the result line it is asked for, which the driver reads back', async () => {
      const outcome = await run(provider, {
        prompt: 'Triage issue #7 [[fake:result=#7 needs-info: no steps to reproduce]]',
        ...assigned,
      });
      expect(outcome.exitCode).toBe(0);
      const words = outcome.events.reduce(lastWords, '');
      expect(parseResultLine(words, outcomeSet(['ready-for-agent', 'needs-info']))).toEqual({
        kind: 'result',
        result: { outcome: 'needs-info', reason: 'no steps to reproduce', item: 7, via: 'line' },
      });
    });

    it('resumes the session it is given and announces the same id', async () => {
      const first = await run(provider, assigned);
      const id = sessionIds(first.events)[0]!;
      const resumed = await run(provider, { resumeSessionId: id, prompt: 'Continue the interrupted task.' });
      expect(resumed.exitCode).toBe(0);
      expect(sessionIds(resumed.events)).toEqual([id]);
      expect(texts(resumed.events).some((t) => t.startsWith(`Resumed session ${id}`))).toBe(true);
      expect(resumed.log.resumeOf).toBe(id);
    });

    it('fails on request with an error event, a failed done where the format has one, and exit 1', async () => {
      const outcome = await run(provider, { prompt: 'Break [[fake:fail]]', ...assigned });
      expect(outcome.exitCode).toBe(1);
      expect(sessionIds(outcome.events)).toHaveLength(1);
      expect(outcome.events).toContainEqual({
        kind: 'error',
        message: 'simulated failure requested by the prompt',
      });
      expect(outcome.events.some((e) => e.kind === 'done' && !e.isError)).toBe(false);
      expect(outcome.stderr).toContain('simulated failure');
    });

    it('keeps a prompt that starts with - as the prompt', async () => {
      const outcome = await run(provider, { prompt: '--version [[fake:echo-env=PWD]]', ...assigned });
      expect(outcome.exitCode).toBe(0);
      expect(outcome.log.prompt).toBe('--version [[fake:echo-env=PWD]]');
    });
  });

  it('commits in the worktree on request, and leaves uncommitted work on request', async () => {
    const worktree = newWorktree();
    await run('claude', { worktree, prompt: 'Change it [[fake:commit]] [[fake:dirty]]' });
    const count = execFileSync('git', ['-C', worktree, 'rev-list', '--count', 'HEAD'], { encoding: 'utf8' });
    expect(Number(count)).toBe(2);
    const status = execFileSync('git', ['-C', worktree, 'status', '--porcelain'], { encoding: 'utf8' });
    expect(status).toMatch(/^\?\? fake-claude-[0-9a-f]+\.txt\.draft$/m);
  });

  it('with FAKE_AGENT_RESUME_UNFINISHED, a resumed session does what its first prompt asked until it finished once', async () => {
    const worktree = newWorktree();
    const profile = { env: { FAKE_AGENT_LOG: logs, FAKE_AGENT_RESUME_UNFINISHED: '1' } };
    const commits = () =>
      Number(execFileSync('git', ['-C', worktree, 'rev-list', '--count', 'HEAD'], { encoding: 'utf8' }));
    // Stopped in its sleep, before the commit its prompt asks for.
    const cut = await run('claude', {
      worktree,
      profile,
      prompt: 'Change it [[fake:sleep=2]] [[fake:commit]]',
      timeoutMs: 700,
    });
    expect(cut.timedOut).toBe(true);
    const [id] = sessionIds(cut.events);
    expect(commits()).toBe(1);
    // Resumed with a prompt that only says to continue: the unfinished work is done.
    const resumed = await run('claude', {
      worktree,
      profile,
      prompt: 'Continue the task.',
      resumeSessionId: id!,
    });
    expect(resumed.exitCode).toBe(0);
    expect(commits()).toBe(2);
    // That session reached its final message: resumed again, it repeats nothing.
    await run('claude', { worktree, profile, prompt: 'Continue the task.', resumeSessionId: id! });
    expect(commits()).toBe(2);
    // Without the variable, a resume does only what its own prompt asks (as before).
    const other = newWorktree();
    const plainCut = await run('claude', {
      worktree: other,
      prompt: 'Change it [[fake:sleep=2]] [[fake:commit]]',
      timeoutMs: 700,
    });
    await run('claude', {
      worktree: other,
      prompt: 'Continue the task.',
      resumeSessionId: sessionIds(plainCut.events)[0]!,
    });
    expect(
      Number(execFileSync('git', ['-C', other, 'rev-list', '--count', 'HEAD'], { encoding: 'utf8' })),
    ).toBe(1);
  });

  it('sees only the environment curupira builds: no GitHub token unless asked, profile env set', async () => {
    const source = {
      GH_TOKEN: 'ghp_hostTokenNotForAgents',
      ANTHROPIC_API_KEY: 'sk-test',
      GIT_DIR: '/elsewhere/.git',
    };
    const prompt =
      '[[fake:echo-env=GH_TOKEN]] [[fake:echo-env=ANTHROPIC_API_KEY]] [[fake:echo-env=GIT_DIR]] [[fake:echo-env=TEAM]]';
    const plain = await run('claude', {
      source,
      prompt,
      profile: { env: { FAKE_AGENT_LOG: logs, TEAM: 'core' } },
    });
    expect(texts(plain.events)).toEqual(
      expect.arrayContaining([
        'GH_TOKEN is not set',
        'ANTHROPIC_API_KEY=sk-test',
        'GIT_DIR is not set',
        'TEAM=core',
      ]),
    );
    const withToken = await run('claude', {
      source,
      prompt,
      profile: { github_token: true },
      githubToken: 'ghs_grantedToThisProfile',
    });
    // The agent got the token; what it prints about it is scrubbed before anyone reads the line.
    expect(texts(withToken.events)).toContain('GH_TOKEN=[redacted]');
    expect(JSON.stringify(withToken.events)).not.toContain('ghs_grantedToThisProfile');
  });

  it('on timeout, stops the fake and the grandchild it left behind', async () => {
    const childFile = join(logs, 'children.pids');
    const before = existsSync(childFile) ? readFileSync(childFile, 'utf8').trim().split('\n').length : 0;
    const outcome = await run('codex', {
      prompt: 'Slow [[fake:spawn-child]] [[fake:sleep=30]]',
      timeoutMs: 500,
    });
    expect(outcome.timedOut).toBe(true);
    expect(sessionIds(outcome.events)).toHaveLength(1);
    const pids = readFileSync(childFile, 'utf8').trim().split('\n').slice(before).map(Number);
    expect(pids).toHaveLength(1);
    expect(pids.filter(isRunning)).toEqual([]);
    expect(isRunning(outcome.log.pid as number)).toBe(false);
  });

  it('[[fake:sleep-first=N]] waits the first time its prompt line is seen, not when the task runs again', async () => {
    const prompt = 'Fix #31: Long [[fake:sleep-first=30]]';
    const first = await run('claude', { prompt, timeoutMs: 700 });
    expect(first.timedOut).toBe(true);
    // The same line again (a restart, with a note of the lost attempt after it): no wait.
    const again = await run('claude', {
      prompt: `${prompt}\n\nA previous attempt was interrupted.`,
      timeoutMs: 20_000,
    });
    expect(again.timedOut).toBe(false);
    expect(again.exitCode).toBe(0);
    // Another task's line is a first sighting of its own.
    const other = await run('claude', { prompt: 'Fix #32: Long [[fake:sleep-first=30]]', timeoutMs: 700 });
    expect(other.timedOut).toBe(true);
  });

  it('answers opencode --version, and a 1.x run gets --dir and its own database', async () => {
    const probe = await runCommand(wrappers.opencode, ['--version'], {
      env: { PATH, FAKE_AGENT_OPENCODE_VERSION: '1.4.2' },
    });
    expect(probe.stdout.trim()).toBe('1.4.2');
    const worktree = newWorktree();
    const outcome = await run('opencode', { worktree, version: probe.stdout });
    expect(outcome.exitCode).toBe(0);
    expect(outcome.log.argv).toEqual(['run', '--format', 'json', '--dir', worktree, '--', 'Fix issue #7']);
    expect((outcome.log.env as { values: Record<string, string> }).values.OPENCODE_DB).toBe(
      `${worktree}.opencode.db`,
    );
  });

  it('rejects arguments the real CLI would reject', async () => {
    const bad = await runCommand(
      wrappers.claude,
      ['-p', '--output-format', 'stream-json', '--verbose', '--yolo', '--', 'x'],
      {
        env: { PATH },
      },
    );
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain("unknown option '--yolo'");
    const noJson = await runCommand(wrappers.codex, ['exec', '--', 'x'], { env: { PATH } });
    expect(noJson.exitCode).toBe(2);
  });
});
