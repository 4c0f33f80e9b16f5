/**
 * Issue 13 (conflicts and a moving base, end to end): a real engine in watch mode follows the pull
 * request it delivered (simulator backed by a bare repository, real git, the fake agent).
 *
 * - The base changes the very file the agent added: GitHub (git) says the pull request cannot
 *   merge, and curupira posts one notice for that (head, base) pair, needs a person
 *   (`resolve_conflicts` off), notifies `needs_human` once.
 * - The same conflict with `resolve_conflicts = true`: one remediation run resumes the delivery's
 *   session, merges the base into the branch (the fake agent's `[[fake:merge=main]]`, given only on
 *   resume) and pushes a merge commit fast-forward; the pull request can merge again, and that
 *   (head, base) pair is never remediated twice.
 * - The base moves elsewhere, the head's checks are green, `update_branch = true`: GitHub merges the
 *   base into the branch (a merge commit), and curupira records that head as its own.
 *
 * Either way no branch is ever rewritten (the bare repository's reflogs show only fast-forwards).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ownHeadMark } from '../../src/delivery/remediation-types.js';
import { Engine } from '../../src/features.js';
import type { NotificationEvent } from '../../src/notify/index.js';
import { simChecks } from '../../src/simulator/checks.js';
import { commitToBranch, forcedUpdates, mergeability } from '../../src/simulator/merging.js';
import { git } from '../../src/workspace/git.js';
import {
  createHarness,
  deliveredBranch,
  type Harness,
  issueAutomation,
  onlyRun,
  recordingNotifier,
  runBuiltCli,
  waitFor,
} from '../helpers/harness.js';
import { watchUntil } from '../helpers/watch.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

describe('a delivered pull request whose base comes to conflict with it', () => {
  it('one notice per (head, base) pair, needs a person, notified once; nothing forced', async () => {
    h = await createHarness({
      issues: [{ title: 'Conflict [[fake:commit]]', body: 'Please fix.', labels: ['agent-ready'] }],
      automation: issueAutomation('fix', { prompt: '${issue_title}', extra: 'deliver = "pr"' }),
      settingsExtra: '[settings.polling]\npoll_interval_seconds = 0.2',
    });
    const run = onlyRun((await h.run()).runs);
    expect(run.status).toBe('succeeded');
    const gitDir = h.origin.url;
    // The file the agent added, added on the base too with other content: an add/add conflict.
    const [file] = (await git(['diff', '--name-only', `main...${deliveredBranch(run)}`], { cwd: gitDir }))
      .trim()
      .split('\n');
    expect(file).toMatch(/^fake-claude-/);
    const base = commitToBranch(gitDir, 'main', { [file!]: 'the base wrote this first\n' });
    const head = (await git(['rev-parse', `refs/heads/${deliveredBranch(run)}`], { cwd: gitDir })).trim();

    const events: NotificationEvent[] = [];
    const store = await h.openStore();
    const stop = new AbortController();
    const engine = new Engine({
      ...h.engineOptions(store, { mode: 'watch', stop: stop.signal }),
      notifier: recordingNotifier(events),
    });
    const done = engine.run();
    const harness = h;
    try {
      await waitFor(
        'the conflict notice',
        async () =>
          (await store.getPullRequest(run.id))?.gate === 'needs_human' &&
          harness.world.item('acme/api', 2)!.comments.length > 0,
        30_000,
      );
    } finally {
      stop.abort();
      await done;
    }
    const delivery = (await store.getPullRequest(run.id))!;
    await store.close();
    expect(delivery).toMatchObject({ state: 'open', gate: 'needs_human' });
    expect(delivery.gateDetail).toContain('resolve_conflicts is off');
    const comments = h.world.item('acme/api', 2)!.comments;
    expect(comments).toHaveLength(1);
    expect(comments[0]!.body).toContain(`<!-- curupira:conflict run=${run.id} pair=${head}..${base} -->`);
    expect(comments[0]!.body).toContain(`merge \`main\` into the branch`);
    expect(events.map((e) => [e.event, e.id])).toEqual([
      ['needs_human', `pr:${run.id}:conflict:${head}..${base}`],
    ]);
    expect(forcedUpdates(gitDir)).toEqual([]);
    // `runs show` (the built CLI) says where the pull request stands and why.
    const shown = await runBuiltCli(['--config', h.settingsFile, 'runs', 'show', run.id], { env: h.env });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/follow-up: {3}needs human since \S+: .*resolve_conflicts is off/);
  }, 90_000);
});

describe('resolve_conflicts = true', () => {
  it('one remediation run per (head, base) pair resumes the session, merges the base and pushes; nothing forced', async () => {
    h = await createHarness({
      issues: [{ title: 'Conflict [[fake:commit]]', body: 'Please fix.', labels: ['agent-ready'] }],
      automation: issueAutomation('fix', {
        prompt: '${issue_title}',
        extra: 'deliver = "pr"\nresolve_conflicts = true',
      }),
      agentEnv: { FAKE_AGENT_ON_RESUME: '[[fake:merge=main]]' },
      settingsExtra: '[settings.polling]\npoll_interval_seconds = 0.2',
    });
    const run = onlyRun((await h.run()).runs);
    expect(run.status).toBe('succeeded');
    const gitDir = h.origin.url;
    const [file] = (await git(['diff', '--name-only', `main...${deliveredBranch(run)}`], { cwd: gitDir }))
      .trim()
      .split('\n');
    const base = commitToBranch(gitDir, 'main', { [file!]: 'the base wrote this first\n' });
    const head = (await git(['rev-parse', `refs/heads/${deliveredBranch(run)}`], { cwd: gitDir })).trim();

    const store = await h.openStore();
    const events: NotificationEvent[] = [];
    const harness = h;
    const tip = async () =>
      (await git(['rev-parse', `refs/heads/${deliveredBranch(run)}`], { cwd: gitDir })).trim();
    try {
      await watchUntil(
        harness,
        'the resolved branch',
        async () => {
          const delivery = await store.getPullRequest(run.id);
          return delivery?.headSha !== head && (await tip()) !== head;
        },
        { store, events },
      );
      // Looked at again (a new process reads each delivery at once): the pair is gone, no second run.
      await watchUntil(
        harness,
        'a look after the resolution',
        async () => (await store.getPullRequest(run.id))?.gate !== 'conflicted',
        { store, events },
      );
      const delivery = (await store.getPullRequest(run.id))!;
      expect(delivery.gate).not.toBe('needs_human');
      const runs = await store.listRuns();
      const remediations = runs.filter((r) => r.upstreamRunId === run.id);
      expect(remediations.map((r) => r.status)).toEqual(['succeeded']);
    } finally {
      await store.close();
    }
    // The agent resumed the delivery's session once, and its merge commit is the branch's tip:
    // first parent the old head, second the base; the pull request can merge again.
    const resumed = h.agentRuns('claude').filter((call) => call.resumeOf === run.sessionId);
    expect(resumed).toHaveLength(1);
    expect(resumed[0]!.prompt).toContain(file!);
    const newTip = await tip();
    expect((await git(['show', '-s', '--format=%P', newTip], { cwd: gitDir })).trim().split(' ')).toEqual([
      head,
      base,
    ]);
    const now = mergeability(h.world, h.world.pullRequest('acme/api', 2)!)!;
    expect(now).toMatchObject({ mergeable: true, headSha: newTip, baseSha: base });
    expect(forcedUpdates(gitDir)).toEqual([]);
    expect(events.filter((e) => e.event === 'needs_human')).toEqual([]);
  }, 120_000);
});

describe('a delivered pull request whose base moves on', () => {
  it('update_branch with green checks: GitHub merges the base into the branch, curupira’s own head; nothing forced', async () => {
    h = await createHarness({
      issues: [{ title: 'Behind [[fake:commit]]', body: 'Please fix.', labels: ['agent-ready'] }],
      automation: issueAutomation('fix', {
        prompt: '${issue_title}',
        extra: 'deliver = "pr"\nupdate_branch = true',
      }),
      settingsExtra: '[settings.polling]\npoll_interval_seconds = 0.2',
    });
    const run = onlyRun((await h.run()).runs);
    const gitDir = h.origin.url;
    const branch = deliveredBranch(run);
    const head = (await git(['rev-parse', `refs/heads/${branch}`], { cwd: gitDir })).trim();
    simChecks(h.world).addCheckRun('acme/api', {
      name: 'test',
      headSha: head,
      status: 'completed',
      conclusion: 'success',
    });
    const base = commitToBranch(gitDir, 'main', { 'elsewhere.txt': 'the base moved\n' });

    const store = await h.openStore();
    const events: NotificationEvent[] = [];
    const tip = async () => (await git(['rev-parse', `refs/heads/${branch}`], { cwd: gitDir })).trim();
    try {
      // Until the update is done and recognized (GitHub's update is in the background: a later sweep
      // may be the one that sees the new head).
      await watchUntil(
        h,
        'the update of the branch',
        async () => {
          const now = await tip();
          return now !== head && (await store.getPullRequestMark(run.id, ownHeadMark(now))) !== undefined;
        },
        { store, events },
      );
      const updated = await tip();
      expect((await git(['show', '-s', '--format=%P', updated], { cwd: gitDir })).trim().split(' ')).toEqual([
        head,
        base,
      ]);
      expect(await store.getPullRequestMark(run.id, ownHeadMark(updated))).toMatchObject({
        value: 'update-branch',
      });
      expect((await git(['show', `${updated}:elsewhere.txt`], { cwd: gitDir })).trim()).toBe(
        'the base moved',
      );
    } finally {
      await store.close();
    }
    expect(h.world.item('acme/api', 2)!.comments).toEqual([]);
    expect(forcedUpdates(gitDir)).toEqual([]);
  }, 90_000);
});
