/**
 * Leases (issue 12, item 1): one lease comment claims an item before its run starts, is released
 * (edited to the outcome) when it ends; leases by other runners skip the item; forged ones do not.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadSettings } from '../../src/config/load.js';
import { leaseStateLine, parseLeaseState } from '../../src/coordination/lease.js';
import type { RunRecord } from '../../src/core/types.js';
import { createLogger } from '../../src/log.js';
import { openStore } from '../../src/store/index.js';
import {
  agentHostPid,
  createHarness,
  type Harness,
  issueAutomation,
  runBuiltCli,
  startBuiltCli,
  waitFor,
  writeRequests,
} from '../helpers/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

const LEASED = 'lease_ttl = "1 hour"';

function leaseComments(harness: Harness, number: number) {
  return harness.world
    .item('acme/api', number)!
    .comments.filter((c) => parseLeaseState(c.body) !== undefined);
}

describe('leases', () => {
  it('claims the item while the run works, then edits the comment to the outcome', async () => {
    h = await createHarness({
      issues: [{ title: 'Commit [[fake:commit]] [[fake:sleep=2]]', labels: ['agent-ready'] }],
      settingsExtra: 'runner_id = "build-1"',
      automation: issueAutomation('fix', { prompt: '${issue_title}', extra: LEASED }),
    });
    const harness = h;
    const done = harness.run();
    const held = await waitFor('the lease comment', () =>
      harness.agentRuns('claude').length > 0 ? leaseComments(harness, 1)[0] : undefined,
    );
    // Claimed before the agent started, by the token's account, with one human line (the expiry
    // carries its date when it falls on another day than GitHub's today: late in the UTC evening).
    expect(held.author).toBe('octocat');
    expect(held.body).toMatch(
      /^curupira is working on this: automation `fix`, runner `build-1`, until (?:\d{4}-\d\d-\d\d )?\d\d:\d\d UTC\n/,
    );
    const state = parseLeaseState(held.body)!;
    expect(state).toMatchObject({ automation: 'fix', runner: 'build-1' });
    const dateHeader = Date.now();
    // One hour by GitHub's clock (the simulator's `date` header is the real time here).
    expect(Date.parse(state.expires!) - dateHeader).toBeGreaterThan(59 * 60_000);
    expect(Date.parse(state.expires!) - dateHeader).toBeLessThanOrEqual(60 * 60_000 + 1000);

    const { runs } = await done;
    expect(runs.map((r) => r.status)).toEqual(['succeeded']);
    const [released] = leaseComments(harness, 1);
    expect(leaseComments(harness, 1)).toHaveLength(1);
    expect(released!.body).toContain(`<!-- curupira:lease run=${runs[0]!.id} -->`);
    expect(parseLeaseState(released!.body)).toEqual({
      automation: 'fix',
      runner: 'build-1',
      run: runs[0]!.id,
      released: 'succeeded',
    });
    expect(released!.body).toMatch(
      /^curupira worked on this: automation `fix`, runner `build-1`, run `r_\w+`: \*\*succeeded\*\*/,
    );
    const writes = writeRequests(harness).map((r) => `${r.method} ${r.path.replace(/\d+$/, 'N')}`);
    expect(writes).toEqual([
      'POST /repos/acme/api/issues/1/comments',
      'PATCH /repos/acme/api/issues/comments/N',
    ]);
  }, 60_000);

  it('a lease forged by another account is ignored; one by a trusted author is honoured', async () => {
    h = await createHarness({
      issues: [
        { title: 'Forged [[fake:commit]]', labels: ['agent-ready'] },
        { title: 'Trusted [[fake:commit]]', labels: ['agent-ready'] },
      ],
      settingsExtra: 'runner_id = "build-1"',
      screening: 'required = false\ntrusted_authors = ["maintainer"]',
      automation: issueAutomation('fix', { prompt: '${issue_title}', extra: LEASED }),
    });
    const expires = new Date(Date.now() + 24 * 3_600_000).toISOString();
    const lease = (runner: string) =>
      `curupira is working on this\n\n${leaseStateLine({ automation: 'fix', runner, run: 'r_0000000000AAAAAAAA', expires })}`;
    h.world.addUser('mallory');
    h.world.addUser('maintainer');
    const forged = h.world.addComment('acme/api', 1, { author: 'mallory', body: lease('evil') });
    h.world.addComment('acme/api', 2, { author: 'maintainer', body: lease('other-host') });

    const { runs } = await h.run();
    const byItem = new Map(runs.map((r) => [r.itemId, r]));
    expect(byItem.get('1')?.status).toBe('succeeded');
    expect(byItem.get('2')?.status).toBe('skipped');
    expect(byItem.get('2')?.reason).toMatch(
      /^leased by other-host \(automation fix, run r_0000000000AAAAAAAA, until /,
    );
    expect(byItem.get('2')?.startedAt).toBeNull();
    // Only item 1's agent ran; the forged comment is untouched, and item 2 got no comment of ours.
    expect(h.agentRuns('claude').map((c) => c.prompt)).toHaveLength(1);
    expect(h.world.item('acme/api', 1)!.comments.find((c) => c.databaseId === forged.databaseId)?.body).toBe(
      forged.body,
    );
    expect(h.world.item('acme/api', 2)!.comments.map((c) => c.author)).toEqual(['maintainer']);
  }, 60_000);

  it('a failed run releases its lease too, edited to its outcome', async () => {
    h = await createHarness({
      issues: [{ title: 'Fail [[fake:fail]]', labels: ['agent-ready'] }],
      settingsExtra: 'runner_id = "build-1"',
      automation: issueAutomation('fix', { prompt: '${issue_title}', extra: LEASED }),
    });
    const { runs } = await h.run();
    expect(runs.map((r) => r.status)).toEqual(['failed']);
    expect(leaseComments(h, 1).map((c) => parseLeaseState(c.body))).toEqual([
      { automation: 'fix', runner: 'build-1', run: runs[0]!.id, released: 'failed' },
    ]);
  }, 60_000);

  it('with none of the keys, no write request is sent', async () => {
    h = await createHarness({
      issues: [{ title: 'Commit [[fake:commit]]', labels: ['agent-ready'] }],
      settingsExtra: 'runner_id = "build-1"',
      automation: issueAutomation('fix', { prompt: '${issue_title}' }),
    });
    const { runs } = await h.run();
    expect(runs.map((r) => r.status)).toEqual(['succeeded']);
    expect(writeRequests(h)).toEqual([]);
  }, 60_000);
});

/** A settings file for another runner on the same simulator: its own state, workspaces and runner id. */
/**
 * Runner `runner`'s settings: the harness's, with its own workspace, state file and runner id.
 * `awake` drops a `[[fake:sleep=N]]` from its prompts, for a runner whose own run need not outlast a kill.
 */
function otherRunner(harness: Harness, runner: string, options: { awake?: boolean } = {}): string {
  let text = readFileSync(harness.settingsFile, 'utf8')
    .replace(join(harness.dir, 'workspaces'), join(harness.dir, `workspaces-${runner}`))
    .replace(
      join(harness.dir, 'state', 'state.sqlite3'),
      join(harness.dir, `state-${runner}`, 'state.sqlite3'),
    )
    .replace(/runner_id = "[^"]*"/, `runner_id = "${runner}"`);
  if (options.awake) text = text.replaceAll(/ \[\[fake:sleep=\d+\]\]/g, '');
  const file = join(harness.dir, `settings-${runner}.toml`);
  writeFileSync(file, text);
  return file;
}

function itemOf(prompt: string | undefined): number {
  return Number(/Fix #(\d+)/.exec(prompt ?? '')?.[1]);
}

describe('two runners on one simulator (slow)', () => {
  it('20 matching items, two processes with their own state: every item runs once, no lease left', async () => {
    h = await createHarness({
      issues: Array.from({ length: 20 }, (_, i) => ({ title: `Item ${i + 1}`, labels: ['agent-ready'] })),
      settingsExtra: 'runner_id = "host-a"\nmax_active_tasks = 2',
      automation: issueAutomation('fix', {
        prompt: 'Fix #${issue_number} [[fake:commit]]',
        extra: `${LEASED}\nonce = true`,
      }),
    });
    const harness = h;
    const fileB = otherRunner(harness, 'host-b');
    const [a, b] = await Promise.all(
      [harness.settingsFile, fileB].map((file) =>
        runBuiltCli(['--config', file, 'run'], { env: harness.env, timeoutMs: 150_000 }),
      ),
    );
    expect([a!.code, b!.code]).toEqual([0, 0]);
    const ran = harness.agentRuns('claude').map((c) => itemOf(c.prompt));
    expect(ran.sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    for (let n = 1; n <= 20; n += 1) {
      const leases = leaseComments(harness, n).map((c) => parseLeaseState(c.body)!);
      // The winner's lease, released; a loser deleted its own.
      expect(leases, `item ${n}`).toHaveLength(1);
      expect(leases[0]!.released, `item ${n}`).toBe('succeeded');
      expect(leases[0]!.expires).toBeUndefined();
    }
    const byRunner = new Map<string, number>();
    for (let n = 1; n <= 20; n += 1) {
      const runner = parseLeaseState(leaseComments(harness, n)[0]!.body)!.runner;
      byRunner.set(runner, (byRunner.get(runner) ?? 0) + 1);
    }
    const deleted = harness.sim.requests.filter((r) => r.method === 'DELETE').length;
    const skipped = [...(await storeRuns(harness.settingsFile)), ...(await storeRuns(fileB))].filter(
      (r) => r.status === 'skipped',
    ).length;
    console.info(
      `leases: items per runner ${JSON.stringify(Object.fromEntries(byRunner))}, races lost (own lease deleted) ${deleted}, skipped runs ${skipped}`,
    );
  }, 180_000);
});

async function storeRuns(file: string): Promise<RunRecord[]> {
  const store = await openStore(loadSettings(file).settings.execution.state_db_path);
  try {
    return await store.listRuns({ limit: Number.POSITIVE_INFINITY });
  } finally {
    await store.close();
  }
}

/** Starts runner A (the harness's settings) with a sleeping agent; kills it with SIGKILL mid-run. */
async function killMidRun(harness: Harness): Promise<{ commentId: number; agentPid: number }> {
  const first = startBuiltCli(['--config', harness.settingsFile, 'run'], { env: harness.env });
  try {
    const lease = await waitFor(
      'the agent running under a lease',
      async () => {
        const [comment] = leaseComments(harness, 1);
        // Its session recorded too: a kill before that leaves nothing to resume (a fresh start).
        const [run] = (await storeRuns(harness.settingsFile)).filter((r) => r.agentPid && r.sessionId);
        return comment && run && harness.agentRuns('claude').length > 0 ? comment : undefined;
      },
      30_000,
      100,
    );
    first.child.kill('SIGKILL');
    expect((await first.done).signal).toBe('SIGKILL');
    return { commentId: lease.databaseId, agentPid: harness.agentRuns('claude')[0]!.pid };
  } finally {
    if (first.child.exitCode === null && first.child.signalCode === null) first.child.kill('SIGKILL');
  }
}

function killAgents(harness: Harness): void {
  for (const call of harness.agentRuns('claude')) {
    const pid = agentHostPid(call);
    if (pid !== undefined) process.kill(pid, 'SIGKILL');
  }
}

describe('kill -9 during a leased run (the built CLI, slow)', () => {
  const sleeping = () => ({
    issues: [{ title: 'Slow', labels: ['agent-ready'] }],
    settingsExtra: 'runner_id = "host-a"',
    automation: issueAutomation('fix', { prompt: 'Fix #${issue_number} [[fake:sleep=20]]', extra: LEASED }),
  });

  it('another runner skips the item; the restarted runner takes its lease back and resumes', async () => {
    h = await createHarness(sleeping());
    const harness = h;
    const fileB = otherRunner(harness, 'host-b');
    try {
      const killed = await killMidRun(harness);
      const b = await runBuiltCli(['--config', fileB, 'run'], { env: harness.env, timeoutMs: 60_000 });
      expect(b.code, b.stderr).toBe(0);
      const [skipped] = await storeRuns(fileB);
      expect(skipped).toMatchObject({ status: 'skipped', startedAt: null });
      expect(skipped!.reason).toMatch(
        /^leased by host-a \(automation fix, run r_\w+, until (?:\d{4}-\d\d-\d\d )?\d\d:\d\d UTC\)$/,
      );
      expect(harness.agentRuns('claude')).toHaveLength(1);

      const again = await runBuiltCli(['--config', harness.settingsFile, 'run'], {
        env: harness.env,
        timeoutMs: 60_000,
      });
      expect(again.code, again.stderr).toBe(0);
      const calls = harness.agentRuns('claude');
      expect(calls).toHaveLength(2);
      expect(calls[1]!.resumeOf).toBe(calls[0]!.sessionId);
      const runs = await storeRuns(harness.settingsFile);
      const resumed = runs.find((r) => r.resumed)!;
      expect(resumed.status).toBe('succeeded');
      // The same comment, taken back by the new run, then released.
      const comments = leaseComments(harness, 1);
      expect(comments.map((c) => c.databaseId)).toEqual([killed.commentId]);
      expect(parseLeaseState(comments[0]!.body)).toEqual({
        automation: 'fix',
        runner: 'host-a',
        run: resumed.id,
        released: 'succeeded',
      });
    } finally {
      killAgents(harness);
    }
  }, 120_000);

  it('a different runner waits for the TTL (by GitHub clock), then runs the item', async () => {
    let skew = 0;
    h = await createHarness({ ...sleeping(), simulatorNow: () => Date.now() + skew });
    const harness = h;
    // B's own run comes after A's kill: its agent need not sleep (A's 20 s would be waited out).
    const fileB = otherRunner(harness, 'host-b', { awake: true });
    try {
      const killed = await killMidRun(harness);
      killAgents(harness);
      const early = await runBuiltCli(['--config', fileB, 'run'], { env: harness.env, timeoutMs: 60_000 });
      expect(early.code, early.stderr).toBe(0);
      expect((await storeRuns(fileB)).map((r) => r.status)).toEqual(['skipped']);
      // 59 minutes later by GitHub's clock: still leased.
      skew = 59 * 60_000;
      await runBuiltCli(['--config', fileB, 'run'], { env: harness.env, timeoutMs: 60_000 });
      expect(harness.agentRuns('claude')).toHaveLength(1);
      // Past the hour: the lease of the dead runner has expired; B claims the item and runs it.
      skew = 61 * 60_000;
      const late = await runBuiltCli(['--config', fileB, 'run'], { env: harness.env, timeoutMs: 60_000 });
      expect(late.code, late.stderr).toBe(0);
      const calls = harness.agentRuns('claude');
      expect(calls).toHaveLength(2);
      expect(calls[1]!.resumeOf).toBeNull();
      const ownRuns = await storeRuns(fileB);
      expect(ownRuns.map((r) => r.status).sort()).toEqual(['skipped', 'skipped', 'succeeded']);
      const states = leaseComments(harness, 1).map((c) => ({
        id: c.databaseId,
        ...parseLeaseState(c.body)!,
      }));
      expect(states).toHaveLength(2);
      expect(states[0]).toMatchObject({ id: killed.commentId, runner: 'host-a' });
      expect(states[0]!.expires).toBeDefined();
      expect(states[1]).toMatchObject({ runner: 'host-b', released: 'succeeded' });
    } finally {
      killAgents(harness);
    }
  }, 120_000);
});

describe('a watch waits for a lease held elsewhere', () => {
  it('records the skip once, polls again, and runs the item once the lease expired by GitHub clock', async () => {
    let skew = 0;
    h = await createHarness({
      issues: [{ title: 'Commit [[fake:commit]]', labels: ['agent-ready'] }],
      settingsExtra: 'runner_id = "build-1"\npolling = { poll_interval_seconds = 0.3 }',
      automation: issueAutomation('fix', { prompt: '${issue_title}', extra: LEASED }),
      simulatorNow: () => Date.now() + skew,
    });
    const harness = h;
    const expires = new Date(Date.now() + 10 * 60_000).toISOString();
    harness.world.addComment('acme/api', 1, {
      author: 'octocat',
      body: `held\n\n${leaseStateLine({ automation: 'fix', runner: 'other-host', run: 'r_0000000000BBBBBBBB', expires })}`,
    });
    const stop = new AbortController();
    const seen: RunRecord[] = [];
    const watching = harness.run({ mode: 'watch', stop: stop.signal, onRun: (run) => seen.push(run) });
    try {
      await waitFor('the skip', () => seen.length > 0);
      // Several polls later: still one skipped run, no agent.
      const reads = () =>
        harness.sim.requests.filter((r) => r.method === 'GET' && r.path.endsWith('/comments')).length;
      await waitFor('three more looks at the item', () => reads() >= 4, 15_000);
      expect(seen.map((r) => r.status)).toEqual(['skipped']);
      expect(seen[0]!.reason).toMatch(/^leased by other-host /);
      expect(harness.agentRuns('claude')).toHaveLength(0);
      skew = 11 * 60_000;
      await waitFor(
        'the run after the lease expired',
        () => seen.some((r) => r.status === 'succeeded'),
        30_000,
      );
    } finally {
      stop.abort();
      await watching;
    }
    expect(seen.map((r) => r.status)).toEqual(['skipped', 'succeeded']);
    expect(harness.agentRuns('claude')).toHaveLength(1);
  }, 60_000);
});

describe('GitHub unreachable while claiming', () => {
  it('the run is not started, the log says so, and the next run claims the item', async () => {
    h = await createHarness({
      issues: [{ title: 'Commit [[fake:commit]]', labels: ['agent-ready'] }],
      settingsExtra: 'runner_id = "build-1"',
      automation: issueAutomation('fix', { prompt: '${issue_title}', extra: LEASED }),
    });
    const lines: string[] = [];
    const log = createLogger({ console: { write: (t: string) => lines.push(t) } as never, level: 'warn' });
    h.sim.setWriteFaults({ fraction: 1, status: 502 });
    const first = await h.run({ log });
    expect(first.runs.map((r) => [r.status, r.startedAt])).toEqual([['skipped', null]]);
    expect(first.runs[0]!.reason).toMatch(
      /^not claimed: GitHub unreachable \(.*\); tried again at the next poll$/,
    );
    expect(lines.join('')).toContain(
      'GitHub unreachable while claiming: the run is not started; the next poll tries again',
    );
    expect(h.agentRuns('claude')).toHaveLength(0);
    expect(h.world.item('acme/api', 1)!.comments).toEqual([]);

    h.sim.setWriteFaults(null);
    const second = await h.run();
    expect(second.runs.map((r) => r.status)).toEqual(['succeeded']);
    expect(leaseComments(h, 1).map((c) => parseLeaseState(c.body)?.released)).toEqual(['succeeded']);
  }, 60_000);
});

describe('a cancelled run releases its lease', () => {
  it('closing the issue mid-run stops the agent; the lease is edited to cancelled', async () => {
    h = await createHarness({
      issues: [{ title: 'Slow [[fake:sleep=60]]', labels: ['agent-ready'] }],
      settingsExtra: 'runner_id = "build-1"\npolling = { poll_interval_seconds = 0.2 }',
      automation: issueAutomation('fix', { prompt: '${issue_title}', extra: LEASED }),
    });
    const harness = h;
    const stop = new AbortController();
    const seen: RunRecord[] = [];
    const watching = harness.run({ mode: 'watch', stop: stop.signal, onRun: (run) => seen.push(run) });
    try {
      await waitFor('the agent', () => harness.agentRuns('claude').length > 0);
      harness.world.closeIssue('acme/api', 1);
      await waitFor('the run to end', () => seen.length > 0, 20_000);
      await waitFor(
        'the release',
        () => leaseComments(harness, 1)[0]?.body.includes('released=cancelled'),
        15_000,
      );
    } finally {
      stop.abort();
      await watching;
    }
    expect(seen.map((r) => r.status)).toEqual(['cancelled']);
    expect(parseLeaseState(leaseComments(harness, 1)[0]!.body)).toEqual({
      automation: 'fix',
      runner: 'build-1',
      run: seen[0]!.id,
      released: 'cancelled',
    });
  }, 60_000);
});
