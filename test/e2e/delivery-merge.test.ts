/**
 * Issue 13 (merging, end to end): a real engine in watch mode follows the pull request it delivered
 * (simulator backed by a bare repository, real git, the fake agent). With `merge = "auto"`, once a
 * person with write access approved and the head's checks are green, curupira merges it (squash, at
 * the head sha it checked): the base branch of the bare repository gets the agent's change, the
 * same look ends the run `merged` and the issue is closed. A file matching `human_merge_paths`
 * keeps it from merging. No branch is ever rewritten.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { NotificationEvent } from '../../src/notify/index.js';
import { simChecks } from '../../src/simulator/checks.js';
import { forcedUpdates } from '../../src/simulator/merging.js';
import { setPermission, submitReview } from '../../src/simulator/reviews.js';
import { git } from '../../src/workspace/git.js';
import {
  createHarness,
  deliveredBranch,
  type Harness,
  issueAutomation,
  onlyRun,
} from '../helpers/harness.js';
import { watchUntil } from '../helpers/watch.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

/** A delivered, ready pull request #2 with a green check and alice's (write access) approval. */
async function approvedAndGreen(extra: string): Promise<{ harness: Harness; runId: string; head: string }> {
  const harness = await createHarness({
    issues: [{ title: 'Merge me [[fake:commit]]', body: 'Please fix.', labels: ['agent-ready'] }],
    automation: issueAutomation('fix', {
      prompt: '${issue_title}',
      extra: `deliver = "pr"\npr_draft = false\nmerge = "auto"\n${extra}`,
    }),
    settingsExtra: '[settings.polling]\npoll_interval_seconds = 0.2',
  });
  h = harness;
  const run = onlyRun((await harness.run()).runs);
  const head = (
    await git(['rev-parse', `refs/heads/${deliveredBranch(run)}`], { cwd: harness.origin.url })
  ).trim();
  simChecks(harness.world).addCheckRun('acme/api', {
    name: 'test',
    headSha: head,
    status: 'completed',
    conclusion: 'success',
  });
  setPermission(harness.world, 'acme/api', 'alice', 'write');
  submitReview(harness.world, 'acme/api', 2, { author: 'alice', state: 'APPROVED' });
  return { harness, runId: run.id, head };
}

describe('merge = "auto"', () => {
  it('approved and green: merged (squash) in the bare repository, the run ends merged, the issue closes', async () => {
    const { harness, runId, head } = await approvedAndGreen('');
    const store = await harness.openStore();
    try {
      // The look that merges it also ends the delivery: one watch process, no second look needed
      // (follow_interval is the default 300 s, so a second look could not come within the wait).
      const events: NotificationEvent[] = [];
      await watchUntil(
        harness,
        'the merged run',
        async () => (await store.getRun(runId))?.status === 'merged',
        {
          store,
          events,
        },
      );
      expect(harness.world.pullRequest('acme/api', 2)!.state).toBe('MERGED');
      expect((await store.getPullRequest(runId))!.state).toBe('merged');
      expect(events.filter((e) => e.event === 'pr_merged')).toHaveLength(1);
    } finally {
      await store.close();
    }
    const gitDir = harness.origin.url;
    const tip = (await git(['rev-parse', 'refs/heads/main'], { cwd: gitDir })).trim();
    // A squash: one parent, the agent's file on the base, the head's tree.
    expect((await git(['show', '-s', '--format=%P', tip], { cwd: gitDir })).trim().split(' ')).toHaveLength(
      1,
    );
    expect((await git(['rev-parse', `${tip}^{tree}`], { cwd: gitDir })).trim()).toBe(
      (await git(['rev-parse', `${head}^{tree}`], { cwd: gitDir })).trim(),
    );
    expect(harness.world.pullRequest('acme/api', 2)!.state).toBe('MERGED');
    expect(harness.world.issue('acme/api', 1)).toMatchObject({ state: 'CLOSED' });
    expect(forcedUpdates(gitDir)).toEqual([]);
  }, 90_000);

  it('human_merge_paths: a matching file keeps curupira from merging; the gate says a person merges', async () => {
    const { harness, runId } = await approvedAndGreen('human_merge_paths = ["fake-*.txt"]');
    const store = await harness.openStore();
    try {
      await watchUntil(
        harness,
        'the ready gate',
        async () => (await store.getPullRequest(runId))?.gate === 'ready',
        {
          store,
          events: [],
        },
      );
      const delivery = (await store.getPullRequest(runId))!;
      expect(delivery.state).toBe('open');
      expect(delivery.gateDetail).toMatch(
        /^a person merges: touches fake-claude-[0-9a-f]+\.txt \(human_merge_paths fake-\*\.txt\)$/,
      );
    } finally {
      await store.close();
    }
    expect(harness.world.pullRequest('acme/api', 2)!.state).toBe('OPEN');
    expect(harness.world.issue('acme/api', 1)!.state).toBe('OPEN');
  }, 90_000);
});
