/**
 * Escalation on GitHub (issue 12, item 4): after `max_item_failures` (3) failed runs the item gets
 * the escalated label and one comment mentioning `escalate_to`; there is no fourth run while the
 * label is on, and once a person removes it the item runs again. Each result comment carries the
 * failure count for other hosts.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runEngine } from '../../src/features.js';
import { openStore } from '../../src/store/index.js';
import { createHarness, type Harness, issueAutomation, onlyRun } from '../helpers/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

describe('escalation on GitHub (slow)', () => {
  it('3 failures: label and one comment mentioning escalate_to, no fourth run, runs again once the label is removed', async () => {
    h = await createHarness({
      issues: [{ title: 'Broken [[fake:fail]]', labels: ['agent-ready'] }],
      agentEnv: { FAKE_AGENT_FAIL_RESUME: '1' },
      settingsExtra: 'escalated_label = "agent:escalated"\nescalate_to = ["alice", "@acme/maintainers"]',
      automation: issueAutomation('fix', { prompt: '${issue_title}', extra: 'result_comment = true' }),
    });
    const harness = h;
    const failed = [];
    for (let i = 0; i < 3; i += 1) failed.push(onlyRun((await harness.run()).runs));
    expect(failed.map((r) => r.status)).toEqual(['failed', 'failed', 'failed']);
    expect(harness.agentRuns('claude')).toHaveLength(3);

    const item = () => harness.world.item('acme/api', 1)!;
    expect(item().labels).toEqual(['agent-ready', 'agent:escalated']);
    expect(harness.world.label('acme/api', 'agent:escalated')?.description).toContain('remove this label');
    const escalations = item().comments.filter((c) => c.body.includes('<!-- curupira:escalate run='));
    expect(escalations).toHaveLength(1);
    const [escalation] = escalations;
    expect(escalation!.author).toBe('octocat');
    expect(escalation!.body).toContain('@alice @acme/maintainers: please take a look.');
    expect(escalation!.body).toContain(
      'automation `fix` failed on this item 3 times (max_item_failures = 3) and will not run it again until someone removes the `agent:escalated` label',
    );
    expect(escalation!.body).toContain(`<!-- curupira:escalate run=${failed[2]!.id} -->`);
    // The result comments carry the count after each run, for other hosts.
    const counts = item()
      .comments.filter((c) => c.body.includes('curupira:result'))
      .map((c) => /curupira:failures automation=fix count=(\d+)/.exec(c.body)?.[1]);
    expect(counts).toEqual(['1', '2', '3']);

    // No fourth run: one escalated notice, then nothing, and no second escalation comment.
    expect(onlyRun((await harness.run()).runs).status).toBe('escalated');
    expect((await harness.run()).runs).toEqual([]);
    expect(harness.agentRuns('claude')).toHaveLength(3);
    expect(item().comments.filter((c) => c.body.includes('curupira:escalate run='))).toHaveLength(1);

    // A person removes the label: the next start runs the item again.
    expect(harness.world.removeLabel('acme/api', 1, 'agent:escalated', 'alice')).toBe(true);
    const again = onlyRun((await harness.run()).runs);
    expect(again.status).toBe('failed');
    expect(harness.agentRuns('claude')).toHaveLength(4);
    // Counting starts over: one failure, not escalated again.
    expect(item().labels).toEqual(['agent-ready']);
    const last = item().comments.at(-1)!;
    expect(last.body).toContain(`curupira:result run=${again.id}`);
    expect(last.body).toMatch(/curupira:failures automation=fix count=1 /);
  }, 180_000);

  it('a second host (its own state file) continues the count from the result markers and escalates', async () => {
    h = await createHarness({
      issues: [{ title: 'Broken [[fake:fail]]', labels: ['agent-ready'] }],
      agentEnv: { FAKE_AGENT_FAIL_RESUME: '1' },
      settingsExtra: 'escalated_label = "agent:escalated"\nescalate_to = ["alice"]',
      automation: issueAutomation('fix', { prompt: '${issue_title}', extra: 'result_comment = true' }),
    });
    const harness = h;
    // Host A fails twice.
    for (let i = 0; i < 2; i += 1) expect(onlyRun((await harness.run()).runs).status).toBe('failed');
    // Host B has never seen the item: its third failure is the item's third, and escalates it.
    const other = await openStore(join(harness.dir, 'host-b.sqlite3'));
    try {
      const third = onlyRun((await runEngine(harness.engineOptions(other))).runs);
      expect(third.status).toBe('failed');
      expect(third.reason).toContain('escalated: failed 3 times');
      expect((await other.getItemFailures(third.taskKey))?.failures).toBe(3);
    } finally {
      await other.close();
    }
    const item = harness.world.item('acme/api', 1)!;
    expect(item.labels).toContain('agent:escalated');
    expect(item.comments.filter((c) => c.body.includes('curupira:escalate run='))).toHaveLength(1);
    // Host A sees the label: it does not run the item again either.
    expect((await harness.run()).runs.filter((r) => r.startedAt !== null)).toEqual([]);
    expect(harness.agentRuns('claude')).toHaveLength(3);
  }, 180_000);
});
