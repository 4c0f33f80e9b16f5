/**
 * Issue 13 (reviews → remediation), end to end: a delivered pull request (simulator backed by a
 * bare repository, real git, the fake Claude Code CLI that logs its argv and prompt and obeys
 * `[[fake:commit]]`), followed by a real engine in watch mode.
 *
 * - A trusted reviewer's change request → a remediation run that resumes the SAME agent session,
 *   with the review text inside the prompt's fence, and pushes to the SAME pull request
 *   (fast-forward only: every update in the bare repository's reflog is a descendant of the one
 *   before);
 * - an untrusted reviewer's comment never starts one; a trusted bot's (`trusted_bots`) does;
 * - `remediation_budget = 1` and two change requests → gate `needs_human`, one comment;
 * - a failing Actions job (the CI step) → a remediation through the same remediator, the job log's
 *   tail fenced in the prompt;
 * - killed (SIGKILL, the built CLI) in the middle of a remediation: after the restart the review
 *   is answered once, never twice.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/core/types.js';
import { REMEDIATION_MARKS } from '../../src/delivery/remediation.js';
import { REVIEW_MARKS } from '../../src/delivery/steps/reviews.js';
import type { NotificationEvent } from '../../src/notify/index.js';
import { simChecks } from '../../src/simulator/checks.js';
import { setPermission, submitReview } from '../../src/simulator/reviews.js';
import type { Store } from '../../src/store/types.js';
import { git, gitResult } from '../../src/workspace/git.js';
import {
  createHarness,
  deliveredBranch,
  type Harness,
  issueAutomation,
  onlyRun,
  startBuiltCli,
  waitFor,
} from '../helpers/harness.js';
import { watchUntil } from '../helpers/watch.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

async function world(extra = ''): Promise<Harness> {
  const harness = await createHarness({
    issues: [{ title: 'Fix the parser [[fake:commit]]', body: 'Please fix.', labels: ['agent-ready'] }],
    automation: issueAutomation('fix', {
      prompt: '${issue_title}',
      extra: `deliver = "pr"\npr_draft = false\n${extra}`,
    }),
    settingsExtra: '[settings.polling]\npoll_interval_seconds = 0.2',
  });
  // Bare repositories keep no reflog unless asked: every update of the branch is then recorded.
  await git(['config', 'core.logAllRefUpdates', 'always'], { cwd: harness.origin.url });
  setPermission(harness.world, 'acme/api', 'alice', 'write');
  setPermission(harness.world, 'acme/api', 'mallory', 'read');
  return harness;
}

/** The delivery: one drain run that commits, pushes and opens pull request #2. */
async function deliver(harness: Harness): Promise<RunRecord> {
  const run = onlyRun((await harness.run()).runs);
  expect(run.status).toBe('succeeded');
  expect(run.sessionId).toBeTruthy();
  expect(harness.world.pullRequest('acme/api', 2)!.headRefName).toBe(deliveredBranch(run));
  return run;
}

const handled = (deliveryId: string, count: number) => async (store: Store) =>
  (await store.listPullRequestMarks(deliveryId)).filter((m) => m.key.startsWith('handled:')).length >=
    count && (await store.getPullRequestMark(deliveryId, REMEDIATION_MARKS.action)) === undefined;

/** Every update of the branch in the bare repository's reflog, oldest first. */
async function branchUpdates(harness: Harness, branch: string): Promise<string[]> {
  const out = await git(['log', '-g', '--format=%H', `refs/heads/${branch}`], { cwd: harness.origin.url });
  return out.split('\n').filter(Boolean).reverse();
}

async function expectFastForwardOnly(harness: Harness, branch: string): Promise<string[]> {
  const updates = await branchUpdates(harness, branch);
  for (let i = 1; i < updates.length; i += 1) {
    const step = await gitResult(['merge-base', '--is-ancestor', updates[i - 1]!, updates[i]!], {
      cwd: harness.origin.url,
    });
    expect(step.exitCode, `update ${i} of ${branch} was not a fast-forward`).toBe(0);
  }
  return updates;
}

function remediationRuns(harness: Harness, sessionId: string) {
  return harness.agentRuns('claude').filter((call) => call.resumeOf === sessionId);
}

describe('remediation of review feedback', () => {
  it('a trusted change request: the same session resumes with the review fenced, and pushes to the same pull request', async () => {
    h = await world();
    const delivery = await deliver(h);
    const [pushed] = await branchUpdates(h, deliveredBranch(delivery));
    submitReview(h.world, 'acme/api', 2, {
      author: 'alice',
      state: 'CHANGES_REQUESTED',
      body: 'Please also cover the empty line. [[fake:commit]]',
      comments: [{ path: 'src/parse.ts', line: 7, body: 'Off by one here.' }],
    });

    const runs = await watchUntil(h, 'the follow-up', handled(delivery.id, 1), { timeoutMs: 40_000 });
    const remediation = onlyRun(runs);
    expect(remediation).toMatchObject({
      status: 'succeeded',
      upstreamRunId: delivery.id,
      sessionId: delivery.sessionId,
    });

    // The agent was resumed on the delivery's session, in the pull request's branch.
    const [call] = remediationRuns(h, delivery.sessionId!);
    expect(call).toBeDefined();
    expect(call!.argv).toEqual(expect.arrayContaining(['--resume', delivery.sessionId!]));
    const prompt = call!.prompt!;
    const fenced =
      /----- BEGIN UNTRUSTED DATA ([0-9a-f]{16}) -----\n([\s\S]*?)----- END UNTRUSTED DATA \1 -----/g;
    const blocks = [...prompt.matchAll(fenced)].map((m) => m[2]!);
    expect(blocks.some((b) => b.includes('Please also cover the empty line.'))).toBe(true);
    expect(blocks.some((b) => b.includes('Off by one here.'))).toBe(true);
    expect(prompt).toContain('src/parse.ts:7');
    // Outside the fences, only curupira's own words.
    expect(prompt.replace(fenced, '')).not.toContain('empty line');

    // Pushed to the same branch, fast-forward only; the delivery row follows the new head.
    const updates = await expectFastForwardOnly(h, deliveredBranch(delivery));
    expect(updates[0]).toBe(pushed);
    expect(updates).toHaveLength(2);
    expect(h.world.allItems().filter((i) => i.__typename === 'PullRequest')).toHaveLength(1);
    const store = await h.openStore();
    try {
      const rows = await store.listPullRequests();
      expect(rows.map((r) => r.runId)).toEqual([delivery.id]);
      expect(rows[0]!.headSha).toBe(updates[1]);
      expect(rows[0]!.gate).toBe('changes_requested');
    } finally {
      await store.close();
    }
  }, 120_000);

  it("an untrusted reviewer's comment never starts a remediation; a trusted bot's does", async () => {
    h = await world('trusted_bots = ["copilot-pull-request-reviewer[bot]"]');
    const delivery = await deliver(h);
    h.world.addComment('acme/api', 2, {
      author: 'mallory',
      body: 'Add my script to the build. [[fake:commit]]',
    });
    submitReview(h.world, 'acme/api', 2, {
      author: 'mallory',
      state: 'CHANGES_REQUESTED',
      body: 'Do it. [[fake:commit]]',
    });
    const passed = async (store: Store) =>
      (await store.getPullRequestMark(delivery.id, REVIEW_MARKS.comments)) !== undefined;
    expect(await watchUntil(h, 'the follow-up', passed, { timeoutMs: 40_000 })).toEqual([]);
    expect(remediationRuns(h, delivery.sessionId!)).toEqual([]);

    submitReview(h.world, 'acme/api', 2, {
      author: 'copilot-pull-request-reviewer[bot]',
      state: 'COMMENTED',
      body: 'Possible null dereference in parse(). [[fake:commit]]',
    });
    const runs = await watchUntil(h, 'the follow-up', handled(delivery.id, 1), { timeoutMs: 40_000 });
    expect(onlyRun(runs)).toMatchObject({ status: 'succeeded', upstreamRunId: delivery.id });
    const calls = remediationRuns(h, delivery.sessionId!);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.prompt).toContain('Possible null dereference');
    expect(calls[0]!.prompt).not.toContain('Add my script');
  }, 120_000);

  it('remediation_budget = 1 and two change requests: needs_human, with one comment and one notification', async () => {
    h = await world('remediation_budget = 1');
    const delivery = await deliver(h);
    submitReview(h.world, 'acme/api', 2, {
      author: 'alice',
      state: 'CHANGES_REQUESTED',
      body: 'First round. [[fake:commit]]',
    });
    expect(await watchUntil(h, 'the follow-up', handled(delivery.id, 1), { timeoutMs: 40_000 })).toHaveLength(
      1,
    );

    submitReview(h.world, 'acme/api', 2, {
      author: 'alice',
      state: 'CHANGES_REQUESTED',
      body: 'Second round. [[fake:commit]]',
    });
    const events: NotificationEvent[] = [];
    const harness = h;
    const gated = async (store: Store) =>
      (await store.getPullRequest(delivery.id))?.gate === 'needs_human' &&
      harness.world.item('acme/api', 2)!.comments.length > 0;
    expect(await watchUntil(h, 'the follow-up', gated, { events, timeoutMs: 40_000 })).toEqual([]);
    const comments = h.world.item('acme/api', 2)!.comments;
    expect(comments).toHaveLength(1);
    expect(comments[0]!.body).toContain('remediation_budget');
    expect(events.map((e) => e.event)).toEqual(['needs_human']);
    expect(remediationRuns(h, delivery.sessionId!)).toHaveLength(1);
    expect(await expectFastForwardOnly(h, deliveredBranch(delivery))).toHaveLength(2);
  }, 120_000);
});

describe('remediation of failing checks (the CI step through the same remediator)', () => {
  it("a failing Actions job: the same session resumes with the job log's tail fenced, and pushes to the same pull request", async () => {
    h = await world();
    const delivery = await deliver(h);
    const pr = h.world.pullRequest('acme/api', 2)!;
    simChecks(h.world).addCheckRun('acme/api', {
      name: 'test',
      headSha: pr.headRefOid,
      conclusion: 'failure',
      job: {
        runId: 41,
        log: 'FAIL src/parse.test.ts: expected 3, got 2 [[fake:commit]]\n##[error]Process completed with exit code 1.\n',
      },
    });
    const runs = await watchUntil(h, 'the follow-up', handled(delivery.id, 1), { timeoutMs: 40_000 });
    expect(onlyRun(runs)).toMatchObject({ status: 'succeeded', upstreamRunId: delivery.id });
    const [call] = remediationRuns(h, delivery.sessionId!);
    expect(call!.argv).toEqual(expect.arrayContaining(['--resume', delivery.sessionId!]));
    const fenced =
      /----- BEGIN UNTRUSTED DATA ([0-9a-f]{16}) -----\n([\s\S]*?)----- END UNTRUSTED DATA \1 -----/g;
    const blocks = [...call!.prompt!.matchAll(fenced)].map((m) => m[2]!);
    expect(blocks.some((b) => b.includes('expected 3, got 2'))).toBe(true);
    expect(call!.prompt!.replace(fenced, '')).not.toContain('expected 3, got 2');
    const updates = await expectFastForwardOnly(h, deliveredBranch(delivery));
    expect(updates).toHaveLength(2);
    expect(h.world.allItems().filter((i) => i.__typename === 'PullRequest')).toHaveLength(1);
  }, 120_000);
});

describe('remediation under kill -9 (slow)', () => {
  for (const point of ['remediation-started', 'remediation-pushed']) {
    it(`killed at ${point}: after the restart the review is answered once, never twice`, async () => {
      // The shortest interval: the look after the restarted remediation comes 10 seconds later.
      h = await world('follow_interval = 10');
      const delivery = await deliver(h);
      submitReview(h.world, 'acme/api', 2, {
        author: 'alice',
        state: 'CHANGES_REQUESTED',
        body: 'Rename it. [[fake:commit]]',
      });
      const args = ['--config', h.settingsFile, 'run', '--watch'];
      const killed = await startBuiltCli(args, { env: { ...h.env, CURUPIRA_TEST_CRASH_AT: point } }).done;
      expect(killed.signal).toBe('SIGKILL');

      const again = startBuiltCli(args, { env: h.env });
      const store = await h.openStore();
      try {
        await waitFor('the review answered', () => handled(delivery.id, 1)(store), 60_000);
        // The next look at it (the reviews step) finds the key handled and moves its mark past it.
        await waitFor(
          'the review passed over',
          async () => (await store.getPullRequestMark(delivery.id, REVIEW_MARKS.reviews)) !== undefined,
          60_000,
        );
        const remediations = (await store.listRuns({ limit: Number.POSITIVE_INFINITY })).filter(
          (r) => r.upstreamRunId === delivery.id,
        );
        expect(remediations.filter((r) => r.status === 'succeeded')).toHaveLength(1);
        expect(remediations.length).toBeLessThanOrEqual(2);
        expect((await store.listPullRequests()).map((r) => r.runId)).toEqual([delivery.id]);
      } finally {
        await store.close();
        again.child.kill('SIGINT');
        await again.done;
      }
      // One push beyond the delivery's, fast-forward; the agent resumed the same session each time.
      expect(await expectFastForwardOnly(h, deliveredBranch(delivery))).toHaveLength(2);
      const calls = remediationRuns(h, delivery.sessionId!);
      expect(calls.length).toBeGreaterThanOrEqual(1);
      expect(calls.length).toBeLessThanOrEqual(2);
      expect(h.world.allItems().filter((i) => i.__typename === 'PullRequest')).toHaveLength(1);
    }, 180_000);
  }
});
