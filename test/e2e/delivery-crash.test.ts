/**
 * kill -9 during delivery (issue 13): `curupira run` (the built CLI, `node scripts/build.mjs`
 * first) kills itself with SIGKILL right after the push, right after GitHub opened the pull
 * request but before the store noted it, right after the agent exited, or once the delivered run's
 * worktree was removed but before the run was finished; a second `curupira run` on the same state
 * must finish the run (succeeded) with exactly one pull request, for the pushed commit. A few
 * trials of each point.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { git } from '../../src/workspace/git.js';
import { createHarness, type Harness, issueAutomation, runBuiltCli } from '../helpers/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

async function trial(point: string): Promise<void> {
  h = await createHarness({
    issues: [{ title: 'Crash [[fake:commit]]', body: 'Please fix.', labels: ['agent-ready'] }],
    automation: issueAutomation('fix', { prompt: '${issue_title}', extra: 'deliver = "pr"' }),
  });
  const args = ['--config', h.settingsFile, 'run'];
  const killed = await runBuiltCli(args, { env: { ...h.env, CURUPIRA_TEST_CRASH_AT: point } });
  expect(killed.signal).toBe('SIGKILL');
  const again = await runBuiltCli(args, { env: h.env });
  expect(again.code, again.stderr).toBe(0);
  const pulls = h.world.allItems().filter((i) => i.__typename === 'PullRequest');
  expect(pulls).toHaveLength(1);
  const store = await h.openStore();
  try {
    const runs = await store.listRuns();
    const delivered = await store.listPullRequests();
    expect(delivered.map((d) => d.state)).toContain('open');
    expect(new Set(delivered.map((d) => d.number))).toEqual(new Set([pulls[0]!.number]));
    const first = runs.find((r) => r.id === delivered[0]!.runId)!;
    expect(first.status, first.reason ?? '').toBe('succeeded');
    // The same readable branch before and after the kill: one curupira branch on the remote.
    expect(delivered[0]!.headBranch).toBe('curupira/fix/1-crash-fake-commit');
    const branches = (
      await git(['for-each-ref', '--format=%(refname)', 'refs/heads/curupira'], { cwd: h.origin.url })
    )
      .trim()
      .split('\n');
    expect(branches).toEqual(['refs/heads/curupira/fix/1-crash-fake-commit']);
    const remote = (
      await git(['rev-parse', `refs/heads/${delivered[0]!.headBranch}`], { cwd: h.origin.url })
    ).trim();
    expect(pulls[0]!.__typename === 'PullRequest' && pulls[0]!.headRefOid).toBe(remote);
    expect(pulls[0]!.__typename === 'PullRequest' && pulls[0]!.headRefName).toBe(delivered[0]!.headBranch);
  } finally {
    await store.close();
  }
}

describe('delivery under kill -9 (slow)', () => {
  for (const point of ['delivery-pushed', 'delivery-pr-opened', 'agent-exited', 'run-cleaned']) {
    for (const n of [1, 2, 3]) {
      it(`killed at ${point} (trial ${n}): the restart opens exactly one pull request`, async () => {
        await trial(point);
      }, 60_000);
    }
  }
});
