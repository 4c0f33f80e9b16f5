/**
 * Issue 25's acceptance test, "a day in the life": the settings a team would write (issues
 * delivered as pull requests, a review automation on a pull request's own head run once per head
 * commit, a chain after the issues automation, a schedule added while `serve` runs), driven through
 * the API over two restarts, with a cancel, a refused removal of unpushed work and a failing item.
 * It checks what costs money (how many times each automation's agent started), that no commit was
 * lost, that the cancel stuck, and that every JSON surface parsed.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/core/types.js';
import { git } from '../../src/workspace/git.js';
import { commitFiles } from '../../src/workspace/testing.js';
import { createHarness, type Harness, runBuiltCli, waitFor } from '../helpers/harness.js';
import { type Served, serveInProcess } from '../helpers/serve.js';

let h: Harness | undefined;
let served: Served | undefined;
afterEach(async () => {
  await served?.stop();
  served = undefined;
  await h?.cleanup();
  h = undefined;
});

const FAST =
  'max_active_tasks = 3\n[settings.polling]\npoll_interval_seconds = 0.2\ncron_poll_interval_seconds = 0.2';

const AUTOMATIONS = `[automations.fix]
trigger_type = "github-issues"
repository = "api"
repo = "acme/api"
labels = ["agent-ready"]
linked_pull_request = false
deliver = "pr"
max_attempts = 1
max_item_failures = 1
prompt = "Fix: \${issue_title}"

[automations.review]
trigger_type = "github-pull-requests"
repository = "api"
repo = "acme/api"
labels = ["review-needed"]
worktree_from = "head"
once = "head"
prompt = "Review #\${pull_request_number} at \${pull_request_head_sha} [[fake:commit]]"

[automations.check]
trigger_type = "after"
after = "fix"
on = "success"
repository = "api"
prompt = "Check \${upstream_item}"
`;

/** A daily schedule whose fire of today came half an hour before it is added (at 00:30 UTC or later). */
function nightly(): string {
  const fire = new Date(Date.now() - 30 * 60_000);
  return `
[automations.nightly]
repository = "api"
schedule = "${fire.getUTCMinutes()} ${fire.getUTCHours()} * * *"
timezone = "UTC"
prompt = "Nightly chores"
`;
}

/** Which automation an agent start belongs to, by its prompt. */
function startsPerAutomation(harness: Harness): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const call of harness.agentRuns('claude')) {
    const prompt = call.prompt ?? call.argv.at(-1) ?? '';
    const id = prompt.startsWith('Fix: ')
      ? 'fix'
      : prompt.startsWith('Review #')
        ? 'review'
        : prompt.startsWith('Check ')
          ? 'check'
          : prompt.startsWith('Nightly chores')
            ? 'nightly'
            : `other: ${prompt.slice(0, 40)}`;
    counts[id] = (counts[id] ?? 0) + 1;
  }
  return counts;
}

function parsed(text: string, where: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(`${where} printed invalid JSON (${String(error)}):\n${text}`);
  }
}

async function api(s: Served, path: string, init: RequestInit = {}): Promise<Response> {
  return s.app.request(path, {
    ...init,
    headers: { authorization: `Bearer ${s.token}`, ...(init.headers ?? {}) },
  });
}

/** Every JSON surface: the built CLI's `runs --json`, the API's runs and state. */
async function jsonSurfaces(harness: Harness, s: Served): Promise<RunRecord[]> {
  const cli = await runBuiltCli(['--config', harness.settingsFile, 'runs', '--json'], { env: harness.env });
  expect(cli.code, cli.stderr).toBe(0);
  const listed = parsed(cli.stdout, 'curupira runs --json') as RunRecord[];
  const runs = parsed(await (await api(s, '/api/v1/runs')).text(), '/api/v1/runs') as { runs: RunRecord[] };
  expect(runs.runs.map((r) => r.id).sort()).toEqual(listed.map((r) => r.id).sort());
  parsed(await (await api(s, '/api/v1/state')).text(), '/api/v1/state');
  return listed;
}

async function pushBranch(harness: Harness, branch: string, files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'curupira-contrib-'));
  try {
    await git(['clone', '-q', harness.origin.url, dir], { cwd: tmpdir() });
    const sha = await commitFiles(dir, files, 'contributor work');
    await git(['push', '-q', 'origin', `${sha}:refs/heads/${branch}`], { cwd: dir });
    return sha;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('a day in the life', () => {
  it('issues to pull requests, a review on the head, a chain, a schedule added live, two restarts, a cancel', async () => {
    h = await createHarness({
      settingsExtra: FAST,
      issues: [
        { title: 'Add coupons [[fake:commit]]', body: 'Coupons, please.', labels: ['agent-ready'] },
        { title: 'Broken build [[fake:fail]]', body: 'It fails.', labels: ['agent-ready'] },
        { title: 'Slow one [[fake:sleep-first=30]]', body: 'Takes long.', labels: ['agent-ready'] },
      ],
      automation: AUTOMATIONS,
    });
    h.world.addLabel('acme/api', 'review-needed');
    const head = await pushBranch(h, 'discounts', { 'discounts.js': 'export const d = 1;\n' });
    const pr = h.world.addPullRequest('acme/api', {
      title: 'Discounts',
      body: 'Adds discounts.',
      author: 'octocat',
      headRefName: 'discounts',
      headRefOid: head,
      labels: ['review-needed'],
    });

    // Morning: `serve` starts; the slow run is cancelled through the API while it works.
    served = await serveInProcess(h, { reload: true });
    const slow = await waitFor('the slow run to start', async () =>
      (await served!.store.listRuns({ status: ['running'] })).find(
        (r) => r.itemTitle.startsWith('Slow') && r.sessionId !== null,
      ),
    );
    const cancel = await api(served, `/api/v1/runs/${slow.id}/cancel`, { method: 'POST' });
    expect(parsed(await cancel.text(), 'cancel')).toMatchObject({ run: slow.id, result: 'cancelling' });
    await waitFor('the morning runs', () => {
      const ids = served!.runs.map((r) => r.automationId);
      return ids.filter((id) => id === 'fix').length === 3 && ids.includes('review') && ids.includes('check');
    });
    const byTitle = (title: string) => served!.runs.find((r) => r.itemTitle.startsWith(title))!;
    expect(byTitle('Slow').status).toBe('cancelled');
    const broken = byTitle('Broken');
    expect(broken.status).toBe('failed');
    expect(broken.reason).toContain('escalated: failed 1 times (max_item_failures = 1)');
    const coupons = byTitle('Add coupons');
    expect(coupons.status, coupons.reason ?? '').toBe('succeeded');
    const review = served.runs.find((r) => r.automationId === 'review')!;
    expect(review.status, review.reason ?? '').toBe('succeeded');
    expect(review.headCommit).toBe(head);
    expect(review.worktreeKept).toBe(true);
    const check = served.runs.find((r) => r.automationId === 'check')!;
    expect(check.upstreamRunId).toBe(coupons.id);
    await served.round();
    expect(startsPerAutomation(h)).toEqual({ fix: 3, review: 1, check: 1 });
    await served.stop();
    served = undefined;

    // First restart; a schedule is added to the settings while it runs.
    served = await serveInProcess(h, { reload: true });
    await served.round();
    await served.round();
    h.configure({ automation: AUTOMATIONS + nightly() });
    await waitFor('the new schedule to be looked at', () =>
      served!.engine.automations().find((a) => a.id === 'nightly' && a.lastPollAt !== undefined),
    );
    expect(await served.round()).toMatchObject({ running: [], queued: 0 });
    expect(await served.store.listRuns({ automationId: 'nightly' })).toEqual([]);
    // The failed item comes up again: one `escalated` record says so (no agent starts). The
    // schedule's fire of today came before it existed: it did not run.
    expect(served.runs.map((r) => [r.automationId, r.itemId, r.status, r.prompt])).toEqual([
      ['fix', broken.itemId, 'escalated', null],
    ]);
    // The board's "Remove worktree" on the review's unpushed commit, without confirmation: refused.
    const refused = await api(served, `/api/v1/runs/${review.id}/remove-worktree`, { method: 'POST' });
    expect(refused.status).toBe(409);
    expect(parsed(await refused.text(), 'remove-worktree')).toMatchObject({
      error: { code: 'confirmation_required' },
      wouldLose: { unpushedCommits: 1, branch: review.branch },
    });
    expect(existsSync(review.worktreePath!)).toBe(true);
    // "Run now" fires the schedule once.
    const fired = await api(served, '/api/v1/automations/nightly/run', { method: 'POST' });
    expect(fired.status, await fired.clone().text()).toBeLessThan(300);
    await waitFor('the nightly run', () => served!.runs.some((r) => r.automationId === 'nightly'));
    expect(served.runs.map((r) => [r.automationId, r.status]).slice(1)).toEqual([['nightly', 'succeeded']]);
    await jsonSurfaces(h, served);
    await served.stop();
    served = undefined;

    // Second restart: nothing is due, nothing runs again.
    served = await serveInProcess(h, { reload: true });
    await served.round();
    expect(await served.round()).toMatchObject({ running: [], queued: 0 });
    expect(served.runs).toEqual([]);

    // The money: each automation's agent started exactly this often over the day.
    expect(startsPerAutomation(h)).toEqual({ fix: 3, review: 1, check: 1, nightly: 1 });

    // The cancel stuck across both restarts: one run of that item, still cancelled.
    const all = await jsonSurfaces(h, served);
    expect(all).toHaveLength(7);
    const slowRuns = all.filter((r) => r.taskKey === slow.taskKey);
    expect(slowRuns.map((r) => [r.id, r.status])).toEqual([[slow.id, 'cancelled']]);

    // No commit lost: the review's kept worktree still holds its commit on the pull request's head,
    // and the delivered branch is on the origin at the pull request's head.
    expect((await git(['rev-parse', 'HEAD^'], { cwd: review.worktreePath! })).trim()).toBe(head);
    expect((await git(['status', '--porcelain'], { cwd: review.worktreePath! })).trim()).toBe('');
    const delivered = h.world
      .allItems()
      .filter((i) => i.__typename === 'PullRequest' && i.number !== pr.number);
    expect(delivered).toHaveLength(1);
    const opened = h.world.pullRequest('acme/api', delivered[0]!.number)!;
    expect(coupons.reason).toContain(`opened pull request #${opened.number}`);
    const onOrigin = await git(['rev-parse', `refs/heads/${opened.headRefName}`], { cwd: h.origin.url });
    expect(onOrigin.trim()).toBe(opened.headRefOid);
    expect(
      (await git(['rev-list', '--count', `main..${opened.headRefOid}`], { cwd: h.origin.url })).trim(),
    ).toBe('1');
  }, 55_000);
});
