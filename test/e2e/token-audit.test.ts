/**
 * Issue 13, acceptance: "the token appears in no file, URL or agent environment". The built CLI
 * (`node scripts/build.mjs` first) delivers a pull request (`run`), then answers a trusted change
 * request with a remediation that pushes to it (`run --watch`); GH_TOKEN is the engine's token.
 * Afterwards the token is in no file of the world (state database and its journal, transcripts,
 * logs, the checkout's and the worktrees' git files: config, FETCH_HEAD, reflogs; the bare origin),
 * in no remote URL (`git remote -v` of the checkout and of every worktree, the origin's config), in
 * nothing the CLI printed, and in no agent's environment: no GH_TOKEN / GITHUB_TOKEN nor any
 * variable holding its value (the fake agent logs a SHA-256 of every value it was given).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PUSH_TOKEN_ENV } from '../../src/delivery/push.js';
import { REMEDIATION_MARKS } from '../../src/delivery/remediation.js';
import { GITHUB_TOKEN_ENV } from '../../src/process/env.js';
import { setPermission, submitReview } from '../../src/simulator/reviews.js';
import { git } from '../../src/workspace/git.js';
import {
  createHarness,
  filesUnder,
  type Harness,
  issueAutomation,
  runBuiltCli,
  startBuiltCli,
  TOKEN,
  waitFor,
} from '../helpers/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

describe('the token after a delivery and a remediation (slow)', () => {
  it('is in no file, no remote URL, no output and no agent environment', async () => {
    h = await createHarness({
      issues: [{ title: 'Fix the parser [[fake:commit]]', body: 'Please fix.', labels: ['agent-ready'] }],
      automation: issueAutomation('fix', {
        prompt: '${issue_title}',
        extra: 'deliver = "pr"\npr_draft = false\nfollow_interval = 10',
      }),
      settingsExtra: '[settings.polling]\npoll_interval_seconds = 0.2',
    });
    const harness = h;
    expect(harness.env.GH_TOKEN).toBe(TOKEN);
    setPermission(harness.world, 'acme/api', 'alice', 'write');
    const args = ['--config', harness.settingsFile, 'run'];
    const delivered = await runBuiltCli(args, { env: harness.env });
    expect(delivered.code, delivered.stderr).toBe(0);
    expect(harness.world.pullRequest('acme/api', 2)).toBeDefined();

    submitReview(harness.world, 'acme/api', 2, {
      author: 'alice',
      state: 'CHANGES_REQUESTED',
      body: 'Rename it. [[fake:commit]]',
    });
    const watch = startBuiltCli([...args, '--watch'], { env: harness.env });
    const store = await harness.openStore();
    let branch: string;
    try {
      const [record] = await store.listPullRequests();
      branch = record!.headBranch;
      await waitFor(
        'the remediation pushed',
        async () =>
          (await store.listPullRequestMarks(record!.runId)).some((m) => m.key.startsWith('handled:')) &&
          (await store.getPullRequestMark(record!.runId, REMEDIATION_MARKS.action)) === undefined,
        60_000,
      );
      const remediation = (await store.listRuns()).find((r) => r.upstreamRunId === record!.runId);
      expect(remediation?.status).toBe('succeeded');
    } finally {
      await store.close();
      watch.child.kill('SIGINT');
    }
    const watched = await watch.done;
    const updates = await git(['rev-list', '--count', `refs/heads/${branch}`], { cwd: harness.origin.url });
    expect(Number(updates)).toBe(3); // the first commit, the delivery's, the remediation's

    // Nothing the CLI printed holds it.
    for (const out of [delivered.stdout, delivered.stderr, watched.stdout, watched.stderr])
      expect(out.includes(TOKEN)).toBe(false);

    // No file of the world holds it; the scan saw the files that matter.
    const files = filesUnder(harness.dir);
    const checkout = join(harness.dir, 'workspaces', 'api');
    for (const expected of [
      join(checkout, '.git', 'config'),
      join(checkout, '.git', 'FETCH_HEAD'),
      join(harness.dir, 'state', 'state.sqlite3'),
      join(harness.origin.url, 'config'),
    ])
      expect(files).toContain(expected);
    expect(files.some((f) => f.startsWith(join(checkout, '.git', 'logs')))).toBe(true);
    expect(files.some((f) => f.includes(`${join(harness.dir, 'state', 'transcripts')}/`))).toBe(true);
    for (const file of files) expect(readFileSync(file).includes(TOKEN), file).toBe(false);

    // No remote URL holds it: the checkout's, every worktree's (those kept), the origin's.
    const worktrees = (await git(['worktree', 'list', '--porcelain'], { cwd: checkout }))
      .split('\n')
      .filter((line) => line.startsWith('worktree '))
      .map((line) => line.slice('worktree '.length));
    expect(worktrees).toContain(checkout);
    for (const cwd of worktrees) {
      const remotes = await git(['remote', '-v'], { cwd });
      expect(remotes).toContain('origin');
      expect(remotes.includes(TOKEN), cwd).toBe(false);
      expect(remotes, cwd).not.toMatch(/\/\/[^/\s]*@/); // no user or password in any URL
    }
    const originConfig = await git(['config', '--list'], { cwd: harness.origin.url });
    expect(originConfig.includes(TOKEN)).toBe(false);

    // No agent saw it: neither the delivery's nor the remediation's.
    const calls = harness.agentRuns('claude');
    expect(calls.filter((c) => c.resumeOf === null)).toHaveLength(1);
    expect(calls.filter((c) => c.resumeOf !== null)).toHaveLength(1);
    const tokenHash = createHash('sha256').update(TOKEN).digest('hex');
    for (const call of calls) {
      expect(Object.keys(call.env.hashes).length).toBeGreaterThan(0);
      for (const name of [...GITHUB_TOKEN_ENV, PUSH_TOKEN_ENV]) expect(call.env.keys).not.toContain(name);
      expect(Object.entries(call.env.hashes).filter(([, hash]) => hash === tokenHash)).toEqual([]);
      expect(JSON.stringify(call).includes(TOKEN)).toBe(false);
    }
  }, 120_000);
});
