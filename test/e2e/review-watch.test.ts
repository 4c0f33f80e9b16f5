/**
 * Issue 29, the review watch as a trigger, end to end (the simulator, real git, a fake agent, the
 * built `curupira mcp` standing in for the agent's `findings_done`): a first incremental review is
 * pinned to the branch's head read from GitHub, its worktree starts there and its prompt names the
 * range; after it finished, a tick with no new commit is a skipped run and starts no agent; a new
 * commit is reviewed alone.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { Provider } from '../../src/agents/schemas.js';
import type { RunRecord } from '../../src/core/types.js';
import { createLogger } from '../../src/log.js';
import { reviewDone, reviewedUpTo } from '../../src/review/progress.js';
import { git } from '../../src/workspace/git.js';
import {
  CLI,
  createHarness,
  type Harness,
  onlyRun,
  pushToMain,
  ROOT,
  runBuiltCli,
} from '../helpers/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

const WATCH = `[automations.review]
trigger_type = "review-watch"
repository = "api"
repo = "acme/api"
prompt = "Review \${review_range}. Pinned: \${review_commit}."
`;

/** The review's agent says it is done, through the findings server (`curupira mcp --run`). */
async function findingsDone(harness: Harness, run: RunRecord, commit: string): Promise<string> {
  const client = new Client({ name: 'review-agent', version: '1.0.0' });
  const env = Object.fromEntries(
    Object.entries(harness.env).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'mcp', '-c', harness.settingsFile, '--run', run.id, '--commit', commit],
      env,
      cwd: ROOT,
      stderr: 'pipe',
    }),
  );
  try {
    const result = (await client.callTool({
      name: 'findings_done',
      arguments: { summary: 'Nothing to report.', reviewed_commit: commit },
    })) as { content: { text: string }[] };
    return result.content[0]!.text;
  } finally {
    await client.close();
  }
}

async function runsOf(harness: Harness): Promise<RunRecord[]> {
  const store = await harness.openStore();
  try {
    return await store.listRuns({ automationId: 'review' });
  } finally {
    await store.close();
  }
}

async function markOf(harness: Harness): Promise<string | null> {
  const store = await harness.openStore();
  try {
    return await reviewedUpTo(store, 'review');
  } finally {
    await store.close();
  }
}

describe('a review watch (incremental)', () => {
  it('reviews the branch at the head GitHub names, then skips a tick with nothing new without an agent', async () => {
    h = await createHarness({ issues: [], automation: WATCH });
    const head = await pushToMain(h, { 'src/a.ts': 'export const a = 1;\n' }, 'add a');

    // First tick: the first review, pinned to main's head, the range in its prompt.
    const first = onlyRun((await h.run()).runs);
    expect(first.status, first.reason ?? '').toBe('succeeded');
    expect(first.taskType).toBe('review-watch');
    expect(first.baseCommit).toBe(head);
    expect(first.prompt).toContain(`Pinned: ${head}.`);
    expect(first.prompt).toContain('(first review: the last 20 commits)');
    expect(first.prompt).toContain(`..${head.slice(0, 12)}`);
    expect(h.agentRuns('claude')).toHaveLength(1);

    expect(await findingsDone(h, first, head)).toBe(`Review done at ${head}.`);

    // Second tick, nothing new: a skipped run with the reason, and no agent started.
    expect((await h.run()).runs).toEqual([]);
    const skipped = (await runsOf(h)).filter((r) => r.id !== first.id);
    expect(skipped.map((r) => [r.status, r.reason, r.itemId])).toEqual([
      ['skipped', 'No new commits since the last review', head.slice(0, 12)],
    ]);
    expect(h.agentRuns('claude')).toHaveLength(1);
    expect(await markOf(h)).toBe(head);

    // A new commit: the third tick reviews that one commit only.
    const next = await pushToMain(h, { 'src/b.ts': 'export const b = 2;\n' }, 'add b');
    const third = onlyRun((await h.run()).runs);
    expect(third.status, third.reason ?? '').toBe('succeeded');
    expect(third.baseCommit).toBe(next);
    expect(third.prompt).toContain(
      `${head.slice(0, 12)}..${next.slice(0, 12)} (1 new commit since ${head.slice(0, 12)})`,
    );
    expect(h.agentRuns('claude')).toHaveLength(2);
  }, 120_000);

  it('counts a review whose agent succeeded without findings_done as done at its commit; a failed one is reviewed again', async () => {
    // An agent that was not offered the tools (a CLI the tools are not declared to)
    // or did not call findings_done must not make every later tick or restart pay for the same range.
    h = await createHarness({ issues: [], automation: WATCH });
    const head = await pushToMain(h, { 'src/a.ts': 'export const a = 1;\n' }, 'add a');
    const first = onlyRun((await h.run()).runs);
    expect(first.status, first.reason ?? '').toBe('succeeded');
    const store = await h.openStore();
    try {
      expect(await reviewDone(store, first.id)).toBeUndefined();
    } finally {
      await store.close();
    }
    expect((await h.run()).runs).toEqual([]);
    expect(await markOf(h)).toBe(head);
    expect(h.agentRuns('claude')).toHaveLength(1);

    h.configure({
      automation: WATCH.replace('Pinned: ${review_commit}.', 'Pinned: ${review_commit}. [[fake:fail]]'),
    });
    const next = await pushToMain(h, { 'src/b.ts': 'export const b = 2;\n' }, 'add b');
    const failed = onlyRun((await h.run()).runs);
    expect(failed.status).toBe('failed');
    expect(await markOf(h)).toBe(head);
    h.configure({ automation: WATCH });
    const again = onlyRun((await h.run()).runs);
    expect(again.status, again.reason ?? '').toBe('succeeded');
    expect(again.baseCommit).toBe(next);
    expect(again.prompt).toContain(`${head.slice(0, 12)}..${next.slice(0, 12)}`);
    expect((await h.run()).runs).toEqual([]);
    expect(await markOf(h)).toBe(next);
  }, 120_000);

  it('is explained by validate --explain: the branch, the scan and the pinned code', async () => {
    h = await createHarness({ issues: [], automation: WATCH });
    const shown = await runBuiltCli(['--config', h.settingsFile, 'validate', '--explain'], { env: h.env });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain('acme/api (the default branch)');
    expect(shown.stdout).toContain('incremental: new commits since the last finished review');
    expect(shown.stdout).toContain('a new branch at the commit each task is pinned to');
    // The code it sees is said once (the trigger's own line used to repeat the generic row).
    expect(shown.stdout.match(/^ {2}code: /gm)).toHaveLength(1);
  }, 60_000);

  it('goes back to the last 20 commits, saying so, when the reviewed commit was force-pushed away', async () => {
    h = await createHarness({ issues: [], automation: WATCH });
    const before = (await git(['rev-parse', 'refs/heads/main'], { cwd: h.origin.url })).trim();
    const reviewed = await pushToMain(h, { 'src/a.ts': 'export const a = 1;\n' }, 'add a');
    const first = onlyRun((await h.run()).runs);
    expect(first.status, first.reason ?? '').toBe('succeeded');
    await findingsDone(h, first, reviewed);

    // main is rewritten: the reviewed commit is no longer in its history.
    await git(['update-ref', 'refs/heads/main', before], { cwd: h.origin.url });
    const rewritten = await pushToMain(h, { 'src/a.ts': 'export const a = 2;\n' }, 'add a, again');
    const second = onlyRun((await h.run()).runs);
    expect(second.status, second.reason ?? '').toBe('succeeded');
    expect(second.baseCommit).toBe(rewritten);
    expect(second.prompt).toContain(
      `history was rewritten: ${reviewed.slice(0, 12)}, reviewed last, is no longer in the branch; back to the last 20 commits`,
    );
  }, 120_000);
});

/** A watch whose agent reports through the findings tools (the fake agent's directives). */
const REPORTING_WATCH = `[automations.review]
trigger_type = "review-watch"
repository = "api"
repo = "acme/api"
prompt = "Review \${review_range}. [[fake:finding=src/a.ts:1:high:Hard-coded secret]] [[fake:finding=src/a.ts:2:low:Unused export]] [[fake:review-done]]"
`;

describe('a review run offers its agent the findings tools', () => {
  it.each<Provider>(['claude', 'codex'])(
    '%s: the agent reports through the server declared to its CLI; the findings are stored and listed by the CLI',
    async (provider) => {
      h = await createHarness({ issues: [], automation: REPORTING_WATCH, provider });
      const head = await pushToMain(
        h,
        { 'src/a.ts': 'export const key = "s3cr3t";\nexport const x = 1;\n' },
        'add a',
      );

      const run = onlyRun((await h.run()).runs);
      expect(run.status, run.reason ?? '').toBe('succeeded');
      const [call] = h.agentRuns(provider);
      // Declared for this run only: its id and commit in the server's arguments.
      const declared = call!.argv.join(' ');
      expect(declared).toMatch(new RegExp(`"mcp", ?"--run", ?"${run.id}", ?"--commit", ?"${head}"`));
      expect(declared).toContain(
        provider === 'claude' ? '--mcp-config' : 'mcp_servers.curupira-findings.command=',
      );

      const store = await h.openStore();
      try {
        const findings = await store.listFindings({ watch: 'review' });
        expect(
          findings.map((f) => [f.title, f.severity, f.file, f.lineStart, f.lastSeenCommit, f.status]).sort(),
        ).toEqual([
          ['Hard-coded secret', 'high', 'src/a.ts', 1, head, 'open'],
          ['Unused export', 'low', 'src/a.ts', 2, head, 'open'],
        ]);
        expect((await reviewDone(store, run.id))?.reviewedCommit).toBe(head);
      } finally {
        await store.close();
      }

      const listed = await runBuiltCli(['--config', h.settingsFile, 'findings', '--watch', 'review'], {
        env: h.env,
      });
      expect(listed.code, listed.stderr).toBe(0);
      expect(listed.stdout).toContain('Hard-coded secret');
      expect(listed.stdout).toContain('Unused export');

      // The agent's findings_done moved "reviewed up to": the next tick has nothing new.
      expect((await h.run()).runs).toEqual([]);
      expect(await markOf(h)).toBe(head);
    },
    120_000,
  );

  it('is offered to Gemini CLI outside a sandbox in a home of curupira’s that GEMINI_CLI_HOME names (it reads servers from settings only)', async () => {
    h = await createHarness({ issues: [], automation: REPORTING_WATCH, provider: 'gemini' });
    const head = await pushToMain(h, { 'src/a.ts': 'export const key = "s3cr3t";\n' }, 'add a');
    const lines: string[] = [];
    const log = createLogger({ console: { write: (t: string) => lines.push(t) } as never, level: 'warn' });
    const run = onlyRun((await h.run({ log })).runs);
    expect(run.status, run.reason ?? '').toBe('succeeded');
    const [call] = h.agentRuns('gemini');
    expect(call!.argv).toContain('curupira-findings');
    // The variable named a home of curupira's holding the declaration; the agent's HOME and the
    // user's settings are the operator's, unwritten.
    const home = call!.env.values.GEMINI_CLI_HOME;
    expect(home, JSON.stringify(call!.env.keys)).toMatch(/\/sandbox\/cli-homes\/[0-9a-f]{24}$/);
    expect(
      JSON.parse(readFileSync(join(home!, '.gemini', 'settings.json'), 'utf8')).mcpServers,
    ).toHaveProperty('curupira-findings');
    expect(call!.env.values.HOME).toBe(h.env.HOME);
    expect(existsSync(join(h.env.HOME!, '.gemini', 'settings.json'))).toBe(false);
    expect(lines.join('')).not.toContain('not offered');
    const store = await h.openStore();
    try {
      const findings = await store.listFindings({ watch: 'review' });
      expect(findings.map((f) => [f.title, f.lastSeenCommit]).sort()).toEqual([
        ['Hard-coded secret', head],
        ['Unused export', head],
      ]);
      expect((await reviewDone(store, run.id))?.reviewedCommit).toBe(head);
    } finally {
      await store.close();
    }
  }, 120_000);
  // Inside a sandbox the tools are reached through the relay: test/e2e/sandbox-tools.test.ts.
});

describe('two incremental reviews through the trigger', () => {
  it('the second, after one problem is fixed and a new commit lands: one resolved, one still open, one new, none duplicated', async () => {
    h = await createHarness({ issues: [], automation: REPORTING_WATCH });
    const first = await pushToMain(
      h,
      { 'src/a.ts': 'export const key = "s3cr3t";\nexport const x = 1;\n' },
      'add a',
    );
    const review1 = onlyRun((await h.run()).runs);
    expect(review1.status, review1.reason ?? '').toBe('succeeded');
    expect(review1.baseCommit).toBe(first);
    expect(review1.prompt).toContain('(first review: the last 20 commits)');

    // One commit: the secret is gone, and new code brings a new problem.
    const fix = await pushToMain(
      h,
      {
        'src/a.ts': 'export const key = process.env.KEY;\nexport const x = 1;\n',
        'src/b.ts': 'export const query = (id: string) => `SELECT * FROM t WHERE id = ${id}`;\n',
      },
      'read the key from the environment; add b',
    );
    h.configure({
      automation: REPORTING_WATCH.replace(
        /prompt = .*/,
        'prompt = "Review ${review_range}. [[fake:resolve=Hard-coded secret]] [[fake:finding=src/a.ts:2:low:Unused export]] [[fake:finding=src/b.ts:1:critical:SQL injection]] [[fake:review-done]]"',
      ),
    });
    const review2 = onlyRun((await h.run()).runs);
    expect(review2.status, review2.reason ?? '').toBe('succeeded');
    expect(review2.baseCommit).toBe(fix);
    expect(review2.prompt).toContain(
      `${first.slice(0, 12)}..${fix.slice(0, 12)} (1 new commit since ${first.slice(0, 12)})`,
    );

    const store = await h.openStore();
    try {
      const findings = await store.listFindings({ watch: 'review' });
      const byTitle = (title: string) => findings.filter((f) => f.title === title);
      // Three findings, one each: the one seen again is the same finding, not a second.
      expect(findings.map((f) => f.title).sort()).toEqual([
        'Hard-coded secret',
        'SQL injection',
        'Unused export',
      ]);
      expect(
        byTitle('Hard-coded secret').map((f) => [
          f.status,
          f.firstSeenCommit,
          f.resolvedCommit,
          f.resolvedRunId,
        ]),
      ).toEqual([['resolved', first, fix, review2.id]]);
      expect(
        byTitle('Unused export').map((f) => [
          f.status,
          f.firstSeenCommit,
          f.lastSeenCommit,
          f.firstRunId,
          f.lastRunId,
        ]),
      ).toEqual([['open', first, fix, review1.id, review2.id]]);
      expect(
        byTitle('SQL injection').map((f) => [f.status, f.severity, f.firstSeenCommit, f.firstRunId]),
      ).toEqual([['open', 'critical', fix, review2.id]]);
      expect((await reviewDone(store, review2.id))?.reviewedCommit).toBe(fix);
    } finally {
      await store.close();
    }

    // The CLI lists the two open ones, and the resolved one when asked.
    const open = await runBuiltCli(['--config', h.settingsFile, 'findings', '--watch', 'review'], {
      env: h.env,
    });
    expect(open.code, open.stderr).toBe(0);
    expect(open.stdout).toContain('SQL injection');
    expect(open.stdout).toContain('Unused export');
    expect(open.stdout).not.toContain('Hard-coded secret');
    const resolved = await runBuiltCli(
      ['--config', h.settingsFile, 'findings', '--watch', 'review', '--status', 'resolved'],
      { env: h.env },
    );
    expect(resolved.stdout).toContain('Hard-coded secret');
    expect(resolved.stdout).not.toContain('SQL injection');

    // Nothing new since: skipped, and no agent starts.
    expect((await h.run()).runs).toEqual([]);
    expect(h.agentRuns('claude')).toHaveLength(2);
    expect(await markOf(h)).toBe(fix);
    expect((await runsOf(h)).filter((r) => r.status === 'skipped').map((r) => r.reason)).toEqual([
      'No new commits since the last review',
    ]);
  }, 120_000);
});

describe('a baseline watch', () => {
  it('reviews the whole repository at each new head through the tools; the same problem found again is the same finding', async () => {
    h = await createHarness({
      issues: [],
      automation: `[automations.review]
trigger_type = "review-watch"
repository = "api"
repo = "acme/api"
scan = "baseline"
prompt = "Review \${review_range}. [[fake:finding=src/a.ts:1:medium:Magic number]] [[fake:review-done]]"
`,
    });
    const head = await pushToMain(h, { 'src/a.ts': 'export const a = 42;\n' }, 'add a');
    const first = onlyRun((await h.run()).runs);
    expect(first.status, first.reason ?? '').toBe('succeeded');
    expect(first.baseCommit).toBe(head);
    expect(first.prompt).toContain(
      `Review the whole repository at ${head.slice(0, 12)} (baseline: the whole repository).`,
    );
    // Its findings_done moved "reviewed up to" to the head it reviewed.
    expect(await markOf(h)).toBe(head);
    // Started again (a restart) on the same head: nothing new, no agent, not paid for twice.
    expect((await h.run()).runs).toEqual([]);
    expect(h.agentRuns('claude')).toHaveLength(1);
    expect((await runsOf(h)).filter((r) => r.status === 'skipped').map((r) => r.reason)).toEqual([
      'No new commits since the last review',
    ]);

    // A new head: the whole repository again; the problem still there is the same finding, seen again.
    const next = await pushToMain(h, { 'src/b.ts': 'export const b = 1;\n' }, 'add b');
    const second = onlyRun((await h.run()).runs);
    expect(second.status, second.reason ?? '').toBe('succeeded');
    expect(second.baseCommit).toBe(next);
    expect(second.prompt).toContain(`the whole repository at ${next.slice(0, 12)}`);
    const store = await h.openStore();
    try {
      const findings = await store.listFindings({ watch: 'review' });
      expect(findings.map((f) => [f.title, f.firstSeenCommit, f.lastSeenCommit, f.lastRunId])).toEqual([
        ['Magic number', head, next, second.id],
      ]);
    } finally {
      await store.close();
    }
    expect(await markOf(h)).toBe(next);
  }, 120_000);
});

describe('a watch that starts from now (first_review = "from_now")', () => {
  it('marks the head it first sees as reviewed without an agent, then reviews only what lands after', async () => {
    h = await createHarness({ issues: [], automation: `${WATCH}first_review = "from_now"\n` });
    const start = await pushToMain(h, { 'src/a.ts': 'export const a = 1;\n' }, 'add a');
    expect((await h.run()).runs).toEqual([]);
    expect((await runsOf(h)).map((r) => [r.status, r.reason])).toEqual([
      ['skipped', `Starting from ${start.slice(0, 12)}: the history before it is not reviewed`],
    ]);
    expect(h.agentRuns('claude')).toEqual([]);
    expect(await markOf(h)).toBe(start);

    const next = await pushToMain(h, { 'src/b.ts': 'export const b = 2;\n' }, 'add b');
    const run = onlyRun((await h.run()).runs);
    expect(run.status, run.reason ?? '').toBe('succeeded');
    expect(run.prompt).toContain(
      `${start.slice(0, 12)}..${next.slice(0, 12)} (1 new commit since ${start.slice(0, 12)})`,
    );
    expect(h.agentRuns('claude')).toHaveLength(1);
  }, 120_000);
});
