/**
 * Issue 33, placement and host names, with the built CLI on the machine's PostgreSQL: a worker
 * whose settings file lacks an automation is never given its jobs (they run on a worker that has
 * it; one no worker can run waits, and `status` and the fleet page say why), and a second process
 * claiming the host name of a live one is refused at start without touching that one's agents.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createTestFleet, type FleetProcess, type TestFleet } from '../helpers/fleet.js';
import { agentAlive, allRuns, dispatchRows, finishedRuns } from '../helpers/fleet-checks.js';
import { issueAutomation, runBuiltCli, unfenced, waitFor } from '../helpers/harness.js';

let fleet: TestFleet | undefined;

afterEach(async () => {
  await fleet?.cleanup();
  fleet = undefined;
});

function logged(process: FleetProcess, text: string, timeoutMs = 20_000): Promise<boolean> {
  return waitFor(`${process.name} to log '${text}'`, () => process.output().includes(text), timeoutMs, 100);
}

describe.runIf(process.env.CURUPIRA_BUILT === '1')('fleet placement (issue 33)', () => {
  it('a worker lacking an automation is never given its jobs; a job no worker can run waits and says why', async () => {
    const ITEMS = 4;
    fleet = await createTestFleet({
      issues: [
        ...Array.from({ length: ITEMS }, (_, i) => ({ title: `Item ${i + 1}` })),
        { title: 'Only for lonely', labels: ['lonely'] },
      ],
      automation: [
        issueAutomation('fix', { prompt: 'Fix #${issue_number}' }),
        issueAutomation('extra', { prompt: 'Extra #${issue_number}' }),
        issueAutomation('lonely', { prompt: 'Lonely #${issue_number}', labels: ['lonely'] }),
      ].join('\n'),
      maxActive: 8,
    });
    const f = fleet;
    const poller = f.start('poller', 'p1');
    // w1 can run fix and extra; w2 only fix; nobody lonely. Each runs two agents at once.
    const w1 = f.start('worker', 'w1', { extra: 'host_max_active_tasks = 2', without: ['lonely'] });
    const w2 = f.start('worker', 'w2', { extra: 'host_max_active_tasks = 2', without: ['extra', 'lonely'] });
    const jobs = ITEMS * 2;
    let runs: Awaited<ReturnType<typeof finishedRuns>>;
    try {
      runs = await waitFor(
        `${jobs} finished runs`,
        async () => {
          // A job settled as done with no run was lost: fail now rather than at the timeout.
          // (No table yet before the first process made the schema.)
          const rows = await dispatchRows(f).catch(() => []);
          const lost = rows.filter((row) => row.state === 'done' && row.run_id === null);
          if (lost.length > 0)
            throw new Error(`dispatches done without a run: ${lost.map((r) => r.task_key)}`);
          const done = await finishedRuns(f);
          return done.length >= jobs ? done : undefined;
        },
        90_000,
        300,
      );
    } catch (error) {
      for (const p of [poller, w1, w2]) console.error(`--- ${p.name}\n${p.output().slice(-3000)}`);
      throw error;
    }
    expect(runs.map((r) => r.status)).toEqual(Array(jobs).fill('succeeded'));
    expect(runs.filter((r) => r.automationId === 'extra').map((r) => r.host)).toEqual(
      Array(ITEMS).fill('w1'),
    );
    expect(runs.filter((r) => r.automationId === 'fix')).toHaveLength(ITEMS);
    expect(runs.some((r) => r.host === 'w2')).toBe(true);
    expect(w2.output()).not.toContain('is not configured on this host');
    expect(f.harness.agentRuns('claude')).toHaveLength(jobs);
    const prompts = f.harness.agentRuns('claude').map((call) => unfenced(call.prompt ?? ''));
    expect(prompts.filter((p) => p.includes('Lonely'))).toEqual([]);

    // The job no worker can run waits visibly, with the reason, on `status` and the fleet page.
    const reason = 'no live worker can run it: w1 has no automation lonely; w2 has no automation lonely';
    const status = await waitFor(
      'status to show the waiting job',
      async () => {
        const result = await runBuiltCli(['status', '-c', f.settingsFor('p1')], { env: f.harness.env });
        return result.stdout.includes(reason) ? result : undefined;
      },
      30_000,
      500,
    );
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/waiting: \S*lonely\S* for \S+: no live worker can run it/);
    const board = /Board: (http:\/\/\S+)\?token=(\S+)/.exec(poller.output());
    expect(board).not.toBeNull();
    const page = await fetch(`${board![1]}fleet`, { headers: { authorization: `Bearer ${board![2]}` } });
    const html = await page.text();
    expect(html).toContain('Waiting: no live worker can run them <span class="count">1</span>');
    expect(html).toContain(reason);
    expect((await allRuns(f)).filter((r) => r.automationId === 'lonely')).toEqual([]);

    // Stopped, the poller says its dispatched tasks go on where they are: it stopped no agents.
    poller.child.kill('SIGTERM');
    await poller.done;
    expect(poller.output()).toContain('dispatched tasks keep running on their workers');
    expect(poller.output()).not.toContain('ending running agents');
    expect(poller.output()).not.toContain("stopping this host's agents");
  }, 150_000);

  it('a second process claiming the host name of a live one is refused; a dead one is taken over', async () => {
    fleet = await createTestFleet({
      issues: [{ title: 'Long [[fake:sleep=20]]' }],
      automation: issueAutomation('fix', { prompt: 'Fix #${issue_number}: ${issue_title}' }),
      maxActive: 2,
    });
    const f = fleet;
    f.start('poller', 'p1');
    const first = f.start('worker', 'w1');
    const agent = await waitFor('the agent', () => f.harness.agentRuns('claude')[0], 60_000, 100);
    expect(agentAlive(agent)).toBe(true);

    const second = f.start('worker', 'w1');
    const result = await waitFor(
      'the second w1 to exit',
      () => (second.child.exitCode === null ? undefined : second.done),
      30_000,
      100,
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("host name 'w1' is in use by a live curupira process");
    expect(result.stderr).toContain(
      'name this process otherwise (CURUPIRA_FLEET_HOST=NAME in its environment',
    );
    expect(second.output()).not.toContain('left running by a previous curupira process');
    // The first one's agent ran on, untouched, to its success.
    expect(agentAlive(agent)).toBe(true);
    const runs = await waitFor(
      'the run to succeed',
      async () => {
        const all = await allRuns(f);
        return all.some((r) => r.status === 'succeeded') ? all : undefined;
      },
      60_000,
      200,
    );
    expect(runs.map((r) => [r.status, r.host])).toEqual([['succeeded', 'w1']]);
    expect(f.harness.agentRuns('claude')).toHaveLength(1);

    // Its process killed, the name is free at once on this machine: a new w1 starts.
    first.child.kill('SIGKILL');
    await first.done;
    const third = f.start('worker', 'w1');
    await logged(third, 'Fleet worker w1 started', 15_000);
  }, 150_000);
});
