/**
 * The local failure budget (issue 12, item 4) end to end, with no GitHub write configured: a task
 * whose resume keeps failing is escalated after `max_item_failures` runs, the next start records
 * one `escalated` run instead of a fourth agent, and `curupira reset` lets it run again. Only reads
 * reach the simulator.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/core/types.js';
import { Engine } from '../../src/features.js';
import {
  createHarness,
  type Harness,
  issueAutomation,
  onlyRun,
  runBuiltCli,
  waitFor,
  writeRequests,
} from '../helpers/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

/** A harness whose one issue fails fresh and on every resume. */
async function failing(settingsExtra = ''): Promise<Harness> {
  h = await createHarness({
    issues: [{ title: 'Broken [[fake:fail]]', labels: ['agent-ready'] }],
    agentEnv: { FAKE_AGENT_FAIL_RESUME: '1' },
    settingsExtra,
    automation: issueAutomation('fix', { prompt: '${issue_title}' }),
  });
  return h;
}

describe('the failure budget', () => {
  it('a resume that changed nothing after a failure does not reset the count: fresh failures escalate the item', async () => {
    // Fresh runs fail; each resume of the failed session "succeeds" without changing anything.
    h = await createHarness({
      issues: [{ title: 'Broken [[fake:fail]]', labels: ['agent-ready'] }],
      automation: issueAutomation('fix', { prompt: '${issue_title}' }),
    });
    const harness = h;
    const runs: RunRecord[] = [];
    for (let i = 0; i < 5; i += 1) runs.push(onlyRun((await harness.run()).runs));
    expect(runs.map((r) => [r.status, r.resumed])).toEqual([
      ['failed', false],
      ['succeeded', true],
      ['failed', false],
      ['succeeded', true],
      ['failed', false],
    ]);
    expect(runs[1]!.reason).toBe('no changes: the agent finished without a commit or a changed file');
    expect(runs[4]!.reason).toContain('; escalated: failed 3 times');
    expect(onlyRun((await harness.run()).runs).status).toBe('escalated');
    expect(harness.agentRuns('claude')).toHaveLength(5);
  });

  it('stops a failing resume loop after 3 failures, says so in runs, and runs again after reset', async () => {
    const harness = await failing();
    const failed = [];
    for (let i = 0; i < 3; i += 1) failed.push(onlyRun((await harness.run()).runs));
    expect(failed.map((r) => [r.status, r.resumed])).toEqual([
      ['failed', false],
      ['failed', true],
      ['failed', true],
    ]);
    expect(failed[2]!.reason).toContain('; escalated: failed 3 times');
    expect(harness.agentRuns('claude')).toHaveLength(3);

    // The fourth start: no agent, one escalated run that says what to do.
    const fourth = onlyRun((await harness.run()).runs);
    expect(fourth.status).toBe('escalated');
    expect(fourth.reason).toBe(
      `escalated: failed 3 times (max_item_failures = 3); 'fix' runs this item no more until \`curupira reset ${failed[2]!.id}\` (or Retry on the board) or the item's title or body changes`,
    );
    expect(harness.agentRuns('claude')).toHaveLength(3);
    // Further starts record nothing new.
    expect((await harness.run()).runs).toEqual([]);
    expect(harness.agentRuns('claude')).toHaveLength(3);

    const cli = (...args: string[]) =>
      runBuiltCli(['--config', harness.settingsFile, ...args], { env: harness.env });
    const listed = await cli('runs', '--status', 'escalated');
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain('escalated: failed 3 times');

    const reset = await cli('reset', fourth.id);
    expect(reset.stderr).toBe('');
    expect(reset.stdout).toContain('Reset fix acme/api#1: its escalation (3 failures) is removed');
    const again = await cli('reset', fourth.id);
    expect(again.stdout).toContain('nothing to reset');

    const after = onlyRun((await harness.run()).runs);
    expect(after).toMatchObject({ status: 'failed', resumed: true });
    expect(harness.agentRuns('claude')).toHaveLength(4);
    expect(writeRequests(harness)).toEqual([]);
  }, 120_000);

  it('Retry on the board (engine.retry) of an escalated run is a reset: the item runs at once', async () => {
    const harness = await failing('\n[settings.polling]\npoll_interval_seconds = 0.2');
    for (let i = 0; i < 3; i += 1) await harness.run();
    const escalated = onlyRun((await harness.run()).runs);
    expect(escalated.status).toBe('escalated');

    const store = await harness.openStore();
    const stop = new AbortController();
    const runs: RunRecord[] = [];
    // The engine stops as the run is reported: the failed item is offered again on the next poll
    // (0.2 s later), which a test waiting for the run on a crowded machine could let start.
    const onRun = (run: RunRecord) => {
      runs.push(run);
      stop.abort();
    };
    const engine = new Engine(harness.engineOptions(store, { mode: 'watch', stop: stop.signal, onRun }));
    const before = harness.sim.requests.length;
    const done = engine.run();
    try {
      // The watch polls and resumes nothing while the item stays escalated.
      await waitFor('two polls', () => harness.sim.requests.length >= before + 2);
      expect(harness.agentRuns('claude')).toHaveLength(3);
      expect(await engine.retry(escalated.id)).toBe('resumed');
      await waitFor('the retried run', () => runs.length === 1);
    } finally {
      stop.abort();
      await done;
      await store.close();
    }
    expect(runs[0]).toMatchObject({ status: 'failed', resumed: true });
    expect(harness.agentRuns('claude')).toHaveLength(4);
  }, 120_000);

  it('curupira reset while run --watch holds the item back: the next poll runs it', async () => {
    const harness = await failing('\n[settings.polling]\npoll_interval_seconds = 0.2');
    for (let i = 0; i < 3; i += 1) await harness.run();
    const escalated = onlyRun((await harness.run()).runs);
    expect(escalated.status).toBe('escalated');

    const store = await harness.openStore();
    const stop = new AbortController();
    const runs: RunRecord[] = [];
    // The engine stops as the run is reported: the failed item is offered again on the next poll
    // (0.2 s later), which a test waiting for the run on a crowded machine could let start.
    const onRun = (run: RunRecord) => {
      runs.push(run);
      stop.abort();
    };
    const engine = new Engine(harness.engineOptions(store, { mode: 'watch', stop: stop.signal, onRun }));
    const before = harness.sim.requests.length;
    const done = engine.run();
    try {
      await waitFor('two polls', () => harness.sim.requests.length >= before + 2);
      expect(runs).toEqual([]);
      // The settings file named after the command, as `reset --help` says it may be.
      const reset = await runBuiltCli(['reset', escalated.id, '--config', harness.settingsFile], {
        env: harness.env,
      });
      expect(reset.stdout).toContain('its escalation (3 failures) is removed');
      await waitFor('the run after the reset', () => runs.length === 1);
    } finally {
      stop.abort();
      await done;
      await store.close();
    }
    expect(runs[0]).toMatchObject({ status: 'failed', resumed: true });
    expect(harness.agentRuns('claude')).toHaveLength(4);
  }, 120_000);

  it('curupira reset of an item an escalated_label holds says the label still holds it', async () => {
    h = await createHarness({
      issues: [],
      automation: issueAutomation('fix', {
        prompt: '${issue_title}',
        extra: 'escalated_label = "agent:escalated"',
      }),
    });
    const store = await h.openStore();
    const run = await store.createRun({
      automationId: 'fix',
      taskKey: 'fix:issue:1',
      repo: 'acme/api',
      taskType: 'github-issues',
      itemId: '1',
      itemKey: 'issue:1',
      itemTitle: 'Broken',
      itemUrl: 'https://github.com/acme/api/issues/1',
      status: 'failed',
    });
    const failure = {
      taskKey: run.taskKey,
      automationId: 'fix',
      itemKey: 'issue:1',
      runId: run.id,
      textDigest: 'd',
      limit: 1,
    };
    expect((await store.recordItemFailure(failure)).escalatedAt).not.toBeNull();
    await store.close();
    const reset = await runBuiltCli(['--config', h.settingsFile, 'reset', run.id], { env: h.env });
    expect(reset.stderr).toBe('');
    expect(reset.stdout).toBe(
      "Reset fix acme/api#1: its escalation (1 failures) is removed here, but the item still carries the label 'agent:escalated' (escalated_label) on GitHub, which holds it back: remove that label and it runs again the next time it is dispatched.\n",
    );
  });
});
