/**
 * Delivery (issue 13, item 1): `deliver = "pr"` pushes the agent's branch to the (bare, real-git)
 * origin and opens a draft pull request on the simulator; an open pull request of the branch is
 * adopted; no commits → no push and no pull request; `deliver = "branch"` pushes only; checkpoints
 * push while the agent still runs. Never forced (the bare repository's reflog), and the token is in
 * no file, no agent environment.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import { previewFirstTask } from '../../src/engine/preview.js';
import { runEngine } from '../../src/features.js';
import { silentLogger } from '../../src/log.js';
import { commitToBranch } from '../../src/simulator/merging.js';
import { noService } from '../../src/triggers/service.js';
import { git } from '../../src/workspace/git.js';
import {
  createHarness,
  deliveredBranch,
  filesUnder,
  type Harness,
  issueAutomation,
  onlyRun,
  runBuiltCli,
  TOKEN,
} from '../helpers/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

async function world(title: string, extra: string, settingsExtra = ''): Promise<Harness> {
  const harness = await createHarness({
    issues: [{ title, body: 'Please fix.', labels: ['agent-ready'] }],
    automation: issueAutomation('fix', { prompt: '${issue_title}', extra }),
    settingsExtra,
  });
  // Bare repositories keep no reflog unless told: the no-force checks read it.
  await git(['config', 'core.logAllRefUpdates', 'always'], { cwd: harness.origin.url });
  return harness;
}

async function remoteSha(harness: Harness, branch: string): Promise<string | null> {
  const out = await git(['for-each-ref', '--format=%(objectname)', `refs/heads/${branch}`], {
    cwd: harness.origin.url,
  });
  return out.trim() || null;
}

/** Every update of every branch in the bare origin was a fast-forward (or a creation). */
async function expectNoForcePush(harness: Harness): Promise<void> {
  const refs = (await git(['for-each-ref', '--format=%(refname)', 'refs/heads'], { cwd: harness.origin.url }))
    .trim()
    .split('\n')
    .filter(Boolean);
  for (const ref of refs) {
    const log = await git(['reflog', 'show', '--format=%H', ref, '--'], { cwd: harness.origin.url }).catch(
      () => '',
    );
    const shas = log.trim().split('\n').filter(Boolean).reverse();
    for (let i = 1; i < shas.length; i += 1) {
      const ok = await git(['merge-base', '--is-ancestor', shas[i - 1]!, shas[i]!], {
        cwd: harness.origin.url,
      })
        .then(() => true)
        .catch(() => false);
      expect(ok, `${ref}: ${shas[i - 1]} → ${shas[i]} is not a fast-forward`).toBe(true);
    }
  }
}

function pullPosts(harness: Harness) {
  return harness.sim.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/pulls'));
}

describe('deliver = "pr"', () => {
  it('pushes the branch and opens a draft pull request with the rendered title and body', async () => {
    h = await world(
      'Broken login [[fake:commit]]',
      'deliver = "pr"\npr_title = "fix: {{ task_title | truncate(12, true, \'\') }} (#{{ issue_number }})"',
    );
    const run = onlyRun((await h.run()).runs);
    expect(run.status).toBe('succeeded');
    expect(run.branch).toBeTruthy();
    const sha = await remoteSha(h, deliveredBranch(run));
    expect(sha).toMatch(/^[0-9a-f]{40}$/);
    const pr = h.world.pullRequest('acme/api', 2)!;
    expect(pr).toBeDefined();
    expect(pr.isDraft).toBe(true);
    expect(pr.title).toBe('fix: Broken login (#1)');
    expect(pr.headRefName).toBe(deliveredBranch(run));
    expect(pr.headRefOid).toBe(sha);
    expect(pr.baseRefName).toBe('main');
    expect(pr.body).toContain('Closes #1');
    expect(pr.body).toContain(`curupira runs show ${run.id}`);
    expect(pr.author).toBe('octocat');
    expect(pullPosts(h)).toHaveLength(1);
    // The worktree's commit is on the remote: nothing kept.
    expect(run.worktreeKept).toBe(false);
    const store = await h.openStore();
    try {
      const record = await store.getPullRequest(run.id);
      expect(record).toMatchObject({
        number: 2,
        state: 'open',
        headSha: sha,
        baseBranch: 'main',
        adopted: false,
      });
      expect(record!.url).toContain('/acme/api/pull/2');
    } finally {
      await store.close();
    }
    // `runs show` names the pull request (the built CLI: `node scripts/build.mjs` first).
    const shown = await runBuiltCli(['--config', h.settingsFile, 'runs', 'show', run.id], { env: h.env });
    expect(shown.stdout).toMatch(/pull req\.: +#2 https:\/\/github\.com\/acme\/api\/pull\/2 open since /);
    expect(shown.stdout).toContain(`pushed:      ${deliveredBranch(run)} at ${sha!.slice(0, 12)}`);
    // Merging the pull request in the simulator closes the issue it names.
    h.world.mergePullRequest('acme/api', 2);
    expect(h.world.issue('acme/api', 1)!.state).toBe('CLOSED');
    await expectNoForcePush(h);
    // The token is in no file of the world (state, worktrees, checkout config, transcripts)…
    for (const file of filesUnder(h.dir)) {
      expect(readFileSync(file).includes(TOKEN), file).toBe(false);
    }
    // …and no agent saw it.
    const tokenHash = createHash('sha256').update(TOKEN).digest('hex');
    for (const call of h.invocations('claude'))
      expect(Object.values(call.env.hashes)).not.toContain(tokenHash);
  }, 60_000);

  it('opens it ready for review with pr_draft = false, into pr_base_branch', async () => {
    h = await world('Ready [[fake:commit]]', 'deliver = "pr"\npr_draft = false\npr_base_branch = "release"');
    await h.origin.push({ 'NOTES.md': 'x\n' });
    await git(['branch', 'release', 'main'], { cwd: h.origin.url });
    const run = onlyRun((await h.run()).runs);
    expect(run.status).toBe('succeeded');
    const pr = h.world.pullRequest('acme/api', 2)!;
    expect(pr.isDraft).toBe(false);
    expect(pr.baseRefName).toBe('release');
  }, 60_000);

  it('adopts the pull request already open for the branch instead of opening a second', async () => {
    h = await world('Adopt [[fake:commit]]', 'deliver = "pr"');
    // Opened for the run's branch before curupira delivers (as an agent that opens its own would).
    h.world.addPullRequest('acme/api', {
      title: 'Opened by the agent',
      headRefName: 'curupira/fix/1-adopt-fake-commit',
      author: 'octocat',
    });
    const run = onlyRun((await h.run()).runs);
    expect(run.status).toBe('succeeded');
    expect(deliveredBranch(run)).toBe('curupira/fix/1-adopt-fake-commit');
    expect(pullPosts(h)).toHaveLength(0);
    const pulls = h.world.allItems().filter((i) => i.__typename === 'PullRequest');
    expect(pulls).toHaveLength(1);
    const store = await h.openStore();
    try {
      expect(await store.getPullRequest(run.id)).toMatchObject({ number: 2, adopted: true, state: 'open' });
    } finally {
      await store.close();
    }
  }, 60_000);

  it('the remote branch already has other commits (a delivery made elsewhere): nothing overwritten, held for a person', async () => {
    h = await world('Elsewhere [[fake:commit]]', 'deliver = "pr"');
    const theirs = commitToBranch(
      h.origin.url,
      'curupira/fix/1-elsewhere-fake-commit',
      { 'theirs.txt': 'x\n' },
      {
        from: 'main',
      },
    );
    const { runs } = await h.run();
    const run = onlyRun(runs);
    expect(run.status).toBe('blocked');
    expect(run.reason).toContain(
      'not pushed: acme/api already has a branch curupira/fix/1-elsewhere-fake-commit with commits this run does not have',
    );
    expect(run.reason).toContain('Merge, close or delete what is on that branch, then retry this run');
    expect(run.worktreeKept).toBe(true);
    expect(await remoteSha(h, 'curupira/fix/1-elsewhere-fake-commit')).toBe(theirs);
    expect(pullPosts(h)).toHaveLength(0);
    // One agent run: a held delivery is not retried (the agent would meet the same branch).
    expect(h.invocations('claude')).toHaveLength(1);
    await expectNoForcePush(h);
  }, 60_000);

  // Found from outside: the retry delivered from the worktree the held run kept and pooled it, and
  // the board went on listing the held run under Needs attention with a worktree that was gone.
  it('a retry that works on in a held run’s kept worktree takes it over: the held run no longer keeps it', async () => {
    h = await world('Elsewhere [[fake:commit]]', 'deliver = "pr"');
    const branch = 'curupira/fix/1-elsewhere-fake-commit';
    commitToBranch(h.origin.url, branch, { 'theirs.txt': 'x\n' }, { from: 'main' });
    const held = onlyRun((await h.run()).runs);
    expect(held.status).toBe('blocked');
    expect(held.worktreeKept).toBe(true);
    // What was on that branch is dealt with (deleted), and the run retried.
    await git(['branch', '-D', branch], { cwd: h.origin.url });
    const retried = await runBuiltCli(['--config', h.settingsFile, 'retry', held.id], { env: h.env });
    expect(retried.code, retried.stderr).toBe(0);
    const after = (await h.run()).runs.find((r) => r.id !== held.id)!;
    expect(after.status, after.reason ?? '').toBe('succeeded');
    expect(after.worktreePath).toBe(held.worktreePath);
    const store = await h.openStore();
    try {
      expect((await store.getRun(held.id))?.worktreeKept).toBe(false);
    } finally {
      await store.close();
    }
  }, 60_000);

  // Found from outside: a schedule with deliver = "pr" opened a new pull request at every fire
  // (#8, #9, #10 a minute apart) while the earlier ones were still open.
  it('a schedule opens no second pull request while its last one is open: the next fire is recorded as skipped', async () => {
    h = await createHarness({
      issues: [],
      automation: `
[automations.nightly]
repository = "api"
repo = "acme/api"
schedule = "0 3 * * *"
start_date = 2020-01-01
missed = "run"
deliver = "pr"
prompt = "Tidy up [[fake:commit]]"
`,
    });
    const first = onlyRun((await h.run()).runs);
    expect(first.status).toBe('succeeded');
    expect(first.reason).toMatch(/^opened pull request #1 /);
    // Its branch is named by the fire's time (it was `<epoch seconds>-nightly`).
    const at = first.scheduledFor!;
    expect(h.world.pullRequest('acme/api', 1)!.headRefName).toBe(
      `curupira/nightly/${at.slice(0, 10)}-${at.slice(11, 13)}${at.slice(14, 16)}`,
    );
    // A day later the next fire is due; its pull request #1 is still open.
    const store = await h.openStore();
    const later = { ...systemClock, now: () => Date.now() + 24 * 3600_000 };
    try {
      const second = onlyRun((await runEngine({ ...h.engineOptions(store), clock: later })).runs);
      expect(second).toMatchObject({ status: 'skipped', taskType: 'cron', startedAt: null });
      expect(second.reason).toBe(
        `skipped: pull request #1 of run ${first.id} is still open; this fire opens no second one beside it (merge or close it, and the next fire runs)`,
      );
      expect(second.scheduledFor).not.toBe(first.scheduledFor);
      // `run --dry-run` says the same of the fire after it, and selects nothing.
      const options = h.engineOptions(store);
      const preview = await previewFirstTask(options.settings, {
        github: options.github,
        clock: { ...systemClock, now: () => Date.now() + 48 * 3600_000 },
        log: silentLogger(),
        store,
        service: noService,
      });
      expect(preview.found).toBeUndefined();
      expect(preview.passed.map((p) => p.why)).toEqual([
        `the pull request #1 of an earlier fire (run ${first.id}) is open, and its follow-up works on it: this fire would be skipped`,
      ]);
    } finally {
      await store.close();
    }
    expect(h.agentRuns('claude')).toHaveLength(1);
    expect(h.world.pullRequest('acme/api', 2)).toBeUndefined();
  }, 60_000);

  it('run --dry-run passes over an item whose pull request is open, saying so (the real run holds it too)', async () => {
    h = await world('Held [[fake:commit]]', 'deliver = "pr"');
    const run = onlyRun((await h.run()).runs);
    expect(run.status).toBe('succeeded');
    const dry = await runBuiltCli(['--config', h.settingsFile, 'run', '--dry-run'], { env: h.env });
    expect(dry.stdout).toContain(
      `Passed over fix: acme/api#1: its delivery holds it: pull request #2 (run ${run.id}) is open, and its follow-up works on it.`,
    );
    expect(dry.stdout).toContain('No task would run now: every match is held, as said above.');
    // And the real run agrees: nothing new starts.
    expect((await h.run()).runs).toHaveLength(0);
  }, 60_000);

  it('no commits: nothing pushed, no pull request, and the run says succeeded: no changes', async () => {
    h = await world('Nothing to do', 'deliver = "pr"');
    const run = onlyRun((await h.run()).runs);
    expect(run.status).toBe('succeeded');
    expect(run.reason).toMatch(/^no changes/);
    expect(await remoteSha(h, deliveredBranch(run))).toBeNull();
    expect(pullPosts(h)).toHaveLength(0);
    // Reads only: no write request of any kind.
    expect(h.sim.requests.filter((r) => r.method !== 'GET' && !r.path.endsWith('/graphql'))).toEqual([]);
    const store = await h.openStore();
    try {
      expect(await store.getPullRequest(run.id)).toBeUndefined();
    } finally {
      await store.close();
    }
  }, 60_000);
});

describe('deliver = "branch"', () => {
  it('pushes the branch and opens no pull request', async () => {
    h = await world('Push only [[fake:commit]]', 'deliver = "branch"');
    const run = onlyRun((await h.run()).runs);
    expect(run.status).toBe('succeeded');
    expect(await remoteSha(h, deliveredBranch(run))).toMatch(/^[0-9a-f]{40}$/);
    expect(h.world.allItems().filter((i) => i.__typename === 'PullRequest')).toEqual([]);
    expect(h.sim.requests.filter((r) => r.path.includes('/pulls'))).toEqual([]);
    const store = await h.openStore();
    try {
      expect(await store.getPullRequest(run.id)).toMatchObject({
        delivery: 'branch',
        state: 'pushed',
        number: null,
      });
    } finally {
      await store.close();
    }
    await expectNoForcePush(h);
  }, 60_000);
});

describe('push_checkpoints', () => {
  it('pushes the agent’s commit while the agent still runs', async () => {
    h = await world(
      'Long [[fake:commit-early]] [[fake:sleep=6]] [[fake:commit]]',
      'deliver = "branch"\npush_checkpoints = true\ncheckpoint_interval = 1',
    );
    const harness = h;
    const branch = 'curupira/fix/1-long-fake-commit-early-fake-sleep-6-fake'; // the readable name, cut at 40
    let pushedWhileRunning: string | null = null;
    let checking = false;
    const poll = setInterval(() => {
      if (pushedWhileRunning || checking) return;
      checking = true;
      void remoteSha(harness, branch)
        .then((sha) => {
          pushedWhileRunning ??= sha;
        })
        .finally(() => {
          checking = false;
        });
    }, 200);
    let finalSha: string | null = null;
    try {
      const run = onlyRun((await h.run()).runs);
      expect(run.status).toBe('succeeded');
      finalSha = await remoteSha(h, deliveredBranch(run));
    } finally {
      clearInterval(poll);
    }
    // A checkpoint reached the remote before the agent's last commit; the final push added that one.
    expect(pushedWhileRunning).toMatch(/^[0-9a-f]{40}$/);
    expect(finalSha).not.toBe(pushedWhileRunning);
    await git(['merge-base', '--is-ancestor', pushedWhileRunning!, finalSha!], { cwd: h.origin.url });
    await expectNoForcePush(h);
  }, 60_000);
});
