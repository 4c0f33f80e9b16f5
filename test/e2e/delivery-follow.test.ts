/**
 * Issue 13, item 2 (the end of a delivery): a delivered pull request followed by a real engine in
 * watch mode (simulator backed by a bare repository, real git, fake agents). Merged → the run ends
 * `merged`, the issue GitHub left open is closed as completed, state labels come off, the kept
 * worktree goes, `pr_merged` is notified. Closed unmerged → needs a person (one comment, three
 * labels, `needs_human` notified); `agent:redevelop` → a fresh run delivers a new pull request;
 * `agent:abandon` → the item is not run again. Notifications go to a notifier test double.
 */
import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/core/types.js';
import { CHOICE_LABELS } from '../../src/delivery/follow.js';
import type { NotificationEvent } from '../../src/notify/index.js';
import type { PullRequestRecord } from '../../src/store/types.js';
import { git } from '../../src/workspace/git.js';
import {
  createHarness,
  deliveredBranch,
  type Harness,
  issueAutomation,
  onlyRun,
  runBuiltCli,
} from '../helpers/harness.js';
import { serveInProcess } from '../helpers/serve.js';
import { watchUntil } from '../helpers/watch.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

/** One issue; its run commits and, with `[[fake:dirty]]`, leaves a file behind (a kept worktree). */
async function world(title: string, extra = ''): Promise<Harness> {
  return createHarness({
    issues: [{ title, body: 'Please fix.', labels: ['agent-ready'] }],
    automation: issueAutomation('fix', {
      prompt: '${issue_title}',
      extra: `deliver = "pr"\nstatus_label = "agent:implementing"\nfailed_label = "agent:failed"\n${extra}`,
    }),
    settingsExtra: '[settings.polling]\npoll_interval_seconds = 0.2',
  });
}

async function delivery(harness: Harness, runId: string): Promise<PullRequestRecord> {
  const store = await harness.openStore();
  try {
    return (await store.getPullRequest(runId))!;
  } finally {
    await store.close();
  }
}

/** The delivery reached `state` and `sent` holds (its GitHub writes went out: the queue is durable, so a stop may cut them short). */
const stateOf =
  (runId: string, state: string, sent: () => boolean = () => true) =>
  async (store: Awaited<ReturnType<Harness['openStore']>>) =>
    (await store.getPullRequest(runId))?.state === state && sent();

describe('a merged pull request', () => {
  it('ends its run as merged: issue closed as completed, state labels off, kept worktree removed, pr_merged', async () => {
    // A body that names no issue: GitHub leaves the issue open on merge, so curupira closes it.
    h = await world('Merge me [[fake:commit]] [[fake:dirty]]', 'pr_body = "A fix."');
    const run = onlyRun((await h.run()).runs);
    expect(run.status).toBe('succeeded');
    expect(run.worktreeKept).toBe(true);
    expect(existsSync(run.worktreePath!)).toBe(true);
    const pr = h.world.pullRequest('acme/api', 2)!;
    expect(pr.closingIssues).toEqual([]);
    // A state label left on the item (by another host's failed run, say).
    h.world.addLabels('acme/api', 1, ['agent:failed']);
    h.world.mergePullRequest('acme/api', 2);
    expect(h.world.issue('acme/api', 1)!.state).toBe('OPEN');

    const events: NotificationEvent[] = [];
    const harness = h;
    const runs = await watchUntil(
      h,
      'the follow-up',
      stateOf(run.id, 'merged', () => !harness.world.issue('acme/api', 1)!.labels.includes('agent:failed')),
      { events },
    );
    expect(runs).toEqual([]);
    const store = await h.openStore();
    try {
      const ended = (await store.getRun(run.id))!;
      expect(ended.status).toBe('merged');
      expect(ended.reason).toMatch(/^merged: pull request #2 merged at /);
      expect(ended.worktreeKept).toBe(false);
      // Done, not Needs attention.
      expect((await store.listRuns({ attention: true })).map((r) => r.id)).not.toContain(run.id);
      expect((await store.listRuns({ attention: false })).map((r) => r.id)).toContain(run.id);
    } finally {
      await store.close();
    }
    expect(existsSync(run.worktreePath!)).toBe(false);
    expect(h.world.issue('acme/api', 1)).toMatchObject({ state: 'CLOSED', stateReason: 'COMPLETED' });
    expect(h.world.issue('acme/api', 1)!.labels).not.toContain('agent:failed');
    expect(events.map((e) => [e.event, e.id])).toEqual([['pr_merged', `pr:${run.id}:merged`]]);
    expect(events[0]!.run).toMatchObject({ id: run.id, status: 'merged' });

    // `runs --status merged` lists it; `runs show` shows the delivery's state and since when.
    const listed = await runBuiltCli(['--config', h.settingsFile, 'runs', '--status', 'merged'], {
      env: h.env,
    });
    expect(listed.stdout).toContain(run.id);
    const shown = await runBuiltCli(['--config', h.settingsFile, 'runs', 'show', run.id], { env: h.env });
    expect(shown.stdout).toMatch(/pull req\.: +#2 \S+ merged since /);
    expect(shown.stdout).toMatch(/delivery: +merged at /);
    // The API's run carries its delivery.
    const served = await serveInProcess(h);
    try {
      const response = await served.app.request(`/api/v1/runs/${run.id}`, {
        headers: { authorization: `Bearer ${served.token}` },
      });
      const one = (await response.json()) as { run: RunRecord; delivery: PullRequestRecord | null };
      expect(one.run.status).toBe('merged');
      expect(one.delivery).toMatchObject({ runId: run.id, number: 2, state: 'merged' });
      expect(one.delivery!.since).toMatch(/^\d{4}-\d\d-\d\dT/);
      expect(one.delivery!.detail).toMatch(/^merged at /);
    } finally {
      await served.stop();
    }
  }, 90_000);
});

describe('a pull request closed unmerged', () => {
  it('needs a person; agent:redevelop runs the item afresh and delivers a new pull request', async () => {
    h = await world('Redo [[fake:commit]]');
    const first = onlyRun((await h.run()).runs);
    h.world.closePullRequest('acme/api', 2);

    const events: NotificationEvent[] = [];
    const harness = h;
    const commented = () => harness.world.item('acme/api', 2)!.comments.length > 0;
    expect(
      await watchUntil(h, 'the follow-up', stateOf(first.id, 'needs_human', commented), { events }),
    ).toEqual([]);
    const comments = h.world.item('acme/api', 2)!.comments;
    expect(comments).toHaveLength(1);
    for (const label of Object.values(CHOICE_LABELS)) expect(comments[0]!.body).toContain(label);
    expect(events.map((e) => [e.event, e.id])).toEqual([['needs_human', `pr:${first.id}:closed`]]);
    expect((await delivery(h, first.id)).detail).toMatch(/^closed without merging: a person decides/);
    // While it waits, a drain does not run the item again.
    expect((await h.run()).runs).toEqual([]);

    // The person deletes the old branch (curupira never force-pushes over it) and picks re-develop.
    await git(['branch', '-D', deliveredBranch(first)], { cwd: h.origin.url });
    h.world.addLabels('acme/api', 2, [CHOICE_LABELS.redevelop]);
    const runs = await watchUntil(
      h,
      'the follow-up',
      async (store) => {
        const next = (await store.listPullRequests()).find((p) => p.runId !== first.id);
        return (
          next?.state === 'open' &&
          !harness.world.item('acme/api', 2)!.labels.includes(CHOICE_LABELS.redevelop)
        );
      },
      { events },
    );
    const second = onlyRun(runs);
    expect(second.id).not.toBe(first.id);
    expect(second.status).toBe('succeeded');
    expect(await delivery(h, first.id)).toMatchObject({ state: 'redeveloped' });
    expect(await delivery(h, second.id)).toMatchObject({ state: 'open', number: 3 });
    expect(h.world.pullRequest('acme/api', 3)!.headRefName).toBe(deliveredBranch(first));
    expect(h.world.item('acme/api', 2)!.labels).not.toContain(CHOICE_LABELS.redevelop);
    // Still one comment: the needs-a-person notice is not repeated.
    expect(h.world.item('acme/api', 2)!.comments).toHaveLength(1);
    expect(events.filter((e) => e.event === 'needs_human')).toHaveLength(1);
  }, 90_000);

  it('agent:abandon on the issue closes the delivery for good: the item is not run again', async () => {
    h = await world('Drop it [[fake:commit]] [[fake:dirty]]');
    const run = onlyRun((await h.run()).runs);
    expect(run.worktreeKept).toBe(true);
    h.world.closePullRequest('acme/api', 2);
    const events: NotificationEvent[] = [];
    const harness = h;
    await watchUntil(
      h,
      'the follow-up',
      stateOf(run.id, 'needs_human', () => harness.world.item('acme/api', 2)!.comments.length > 0),
      { events },
    );
    h.world.addLabels('acme/api', 1, [CHOICE_LABELS.abandon]);
    const unlabeled = () => !harness.world.issue('acme/api', 1)!.labels.includes(CHOICE_LABELS.abandon);
    expect(await watchUntil(h, 'the follow-up', stateOf(run.id, 'abandoned', unlabeled), { events })).toEqual(
      [],
    );
    expect((await delivery(h, run.id)).detail).toContain('label agent:abandon on #1');
    expect(h.world.issue('acme/api', 1)!.labels).not.toContain(CHOICE_LABELS.abandon);
    expect(existsSync(run.worktreePath!)).toBe(false);
    // The issue still carries agent-ready, yet a new process does not run it.
    expect((await h.run()).runs).toEqual([]);
    expect(h.agentRuns('claude')).toHaveLength(1);
  }, 90_000);
});
