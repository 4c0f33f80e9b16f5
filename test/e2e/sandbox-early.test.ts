/**
 * Issue 26 (the sandbox's cost): a contained run's sandbox starts while git fills its worktree, and
 * the agent is launched in it afterwards. Through the engine: every run of a drain starts its
 * sandbox early (fresh worktrees and pooled ones), each agent commits on its own branch, and no
 * sandbox is left running; a run cancelled while its worktree is filled leaves none either.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { transcriptsDir } from '../../src/engine/paths.js';
import { createLogger } from '../../src/log.js';
import { findExecutable } from '../../src/process/env.js';
import { sandboxBackend } from '../../src/sandbox/registry.js';
import { createHarness, type Harness } from '../helpers/harness.js';

const probe = await sandboxBackend('bubblewrap').probe();
const ready =
  probe.ok && Boolean(findExecutable('socat', '/usr/bin:/bin') && findExecutable('bash', '/usr/bin:/bin'));

let h: Harness | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

/** bubblewrap processes whose argv names a path under `dir`. */
function sandboxesUnder(dir: string): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const argv = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
      if (argv[0]?.endsWith('bwrap') && argv.some((arg) => arg.startsWith(dir))) pids.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

function debugLog(): { logger: ReturnType<typeof createLogger>; lines: () => Record<string, unknown>[] } {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8');
  });
  return {
    logger: createLogger({ level: 'debug', console: stream, format: 'json' }),
    lines: () =>
      text
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

const automation = `[automations.fix]
trigger_type = "github-issues"
repository = "api"
repo = "acme/api"
labels = ["agent-ready"]
prompt = "Fix issue \${issue_number} [[fake:commit]]"
`;

describe.skipIf(!ready)('a sandbox started while the worktree is filled', () => {
  it('every run of a drain starts it early, each agent commits on its branch, and none is left', async () => {
    h = await createHarness({
      provider: 'claude',
      issues: [1, 2, 3].map((n) => ({ title: `Issue ${n}`, labels: ['agent-ready'] })),
      settingsExtra: 'max_active_tasks = 1',
      automation,
    });
    const log = debugLog();
    const result = await h.run({ log: log.logger });
    expect(result.runs).toHaveLength(3);
    for (const run of result.runs) {
      expect(run.status, run.reason ?? '').toBe('succeeded');
      expect(run.commits).toBeGreaterThan(0);
      expect(run.screeningFindings?.find((f) => f.rule === 'policy')?.excerpt).toMatch(/^bubblewrap /);
    }
    const early = log
      .lines()
      .filter((line) => line.msg === 'The sandbox started while the worktree was filled');
    // The first run's worktree is a fresh one, the next two come from the pool: all three start early.
    expect(early).toHaveLength(3);
    // Each agent ran in its own task's worktree.
    const calls = h.agentRuns('claude');
    expect(calls).toHaveLength(3);
    expect(new Set(calls.map((call) => call.cwd)).size).toBe(3);
    expect(sandboxesUnder(h.dir)).toEqual([]);
  });

  it('a run whose agent cannot start stops the sandbox it started early', async () => {
    h = await createHarness({ provider: 'claude', automation });
    // The automation's transcript folder is a file: the agent step fails before it launches the
    // agent in the sandbox that started early.
    const transcripts = join(transcriptsDir(h.settings()), 'fix');
    mkdirSync(dirname(transcripts), { recursive: true });
    writeFileSync(transcripts, 'not a folder');
    const log = debugLog();
    const result = await h.run({ log: log.logger });
    expect(result.runs).toHaveLength(1);
    expect(result.runs[0]!.status).toBe('failed');
    expect(result.runs[0]!.reason).toMatch(/cannot write transcript/);
    expect(log.lines().some((line) => line.msg === 'The sandbox started while the worktree was filled')).toBe(
      true,
    );
    expect(h.agentRuns('claude')).toHaveLength(0);
    expect(sandboxesUnder(h.dir)).toEqual([]);
  });
});
