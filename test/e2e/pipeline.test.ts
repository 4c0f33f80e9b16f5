/**
 * Issue 32 (seed 001's pipeline) end to end on the simulator with fake agents that end their final
 * message with a result line: what each outcome does to the run (its status, the failure budget,
 * chains), what `runs` and the result comment show, and the label handoffs.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/core/types.js';
import { createHarness, type Harness, issueAutomation, runBuiltCli } from '../helpers/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

const TRIAGE_PROMPT = 'Triage issue #${issue_number}: ${issue_title}\n${issue_body}';

function byItem(runs: readonly RunRecord[]): Record<string, RunRecord> {
  return Object.fromEntries(runs.map((run) => [run.itemId, run]));
}

describe('outcomes the agent reports (issue 32)', () => {
  it('each result line decides its run: a declared outcome succeeds, noop and skipped are their own, none fails', async () => {
    h = await createHarness({
      issues: [
        { title: 'Crash on start', body: '[[fake:result=#1 ready-for-agent]]' },
        { title: 'Already fixed', body: '[[fake:result=#2 noop: fixed on main by #9]]' },
        { title: 'Leased elsewhere', body: '[[fake:result=skipped: leased]]' },
        { title: 'No result', body: 'The agent says nothing structured.' },
        { title: 'Off the list', body: '[[fake:result=#5 wontfix]]' },
        { title: 'Cannot read', body: '[[fake:result=#6 failed: could not read ADR link (404)]]' },
      ],
      automation: issueAutomation('triage', {
        prompt: TRIAGE_PROMPT,
        extra: 'outcomes = ["ready-for-agent", "needs-info"]\nresult_comment = true',
      }),
    });
    const harness = h;
    const runs = byItem((await harness.run()).runs);
    expect(Object.values(runs).map((r) => [r.itemId, r.status, r.result?.outcome ?? null])).toEqual(
      expect.arrayContaining([
        ['1', 'succeeded', 'ready-for-agent'],
        ['2', 'noop', 'noop'],
        ['3', 'skipped', 'skipped'],
        ['4', 'failed', null],
        ['5', 'failed', null],
        ['6', 'failed', 'failed'],
      ]),
    );
    expect(runs['1']!.result).toEqual({ outcome: 'ready-for-agent', reason: null, item: 1, via: 'line' });
    expect(runs['2']!.reason).toBe('noop: fixed on main by #9');
    expect(runs['4']!.reason).toBe(
      'the agent reported no result: its final message has no result line (one of: ready-for-agent, needs-info, noop, skipped, failed)',
    );
    expect(runs['5']!.reason).toContain("the agent reported 'wontfix', which is not one of");
    expect(runs['6']!.reason).toBe('the agent reported failed: could not read ADR link (404)');

    // The failure budget counts the failures, and leaves noop and skipped items alone.
    const store = await harness.openStore();
    try {
      for (const id of ['1', '2', '3'])
        expect(await store.getItemFailures(runs[id]!.taskKey)).toBeUndefined();
      expect((await store.getItemFailures(runs['6']!.taskKey))?.failures).toBe(1);
    } finally {
      await store.close();
    }

    // `runs` and `runs show` carry the result.
    const cli = (...args: string[]) =>
      runBuiltCli(['--config', harness.settingsFile, ...args], { env: harness.env });
    const listed = await cli('runs');
    expect(listed.stdout).toMatch(/succeeded \(ready-for-agent\)/);
    expect(listed.stdout).toMatch(/\bnoop\b/);
    const shown = await cli('runs', 'show', runs['2']!.id);
    expect(shown.stdout).toContain('  result:      #2 noop: fixed on main by #9 (by its result line)');

    // The result comment says what the agent reported.
    const comments = harness.world.issue('acme/api', 1)!.comments.map((c) => c.body);
    expect(comments.some((body) => body.includes('- Outcome: `#1 ready-for-agent`'))).toBe(true);
  }, 180_000);

  it('outcomes hand items on: labels through the write queue, chains on an outcome; noop fires no chain', async () => {
    const triage = issueAutomation('triage', {
      prompt: 'Triage issue #${issue_number}.\n${issue_body}',
      extra: [
        'outcomes = ["ready-for-agent", "needs-info"]',
        '[automations.triage.handoffs.ready-for-agent]',
        'add_labels = ["agent:ready"]',
        'remove_labels = ["agent-ready"]',
        '[automations.triage.handoffs.needs-info]',
        'add_labels = ["needs-info"]',
        'remove_labels = ["agent-ready"]',
      ].join('\n'),
    });
    const implement = issueAutomation('implement', {
      prompt: 'Implement issue #${issue_number}: ${issue_title}',
      labels: ['agent:ready'],
      // Either way the item leaves implement's queue: its label is taken off.
      extra: [
        'outcomes = ["implemented"]',
        'deliver = "pr"',
        '[automations.implement.handoffs.implemented]',
        'remove_labels = ["agent:ready"]',
        '[automations.implement.handoffs.noop]',
        'remove_labels = ["agent:ready"]',
      ].join('\n'),
    });
    const chains = `
[automations.ask]
after = "triage"
on = "needs-info"
repository = "api"
prompt = "Ask the author of \${upstream_item} for what is missing: \${upstream_outcome}"

[automations.shepherd]
after = "implement"
repository = "api"
prompt = "Shepherd \${upstream_item}"
`;
    h = await createHarness({
      issues: [
        {
          title: 'Crash [[fake:commit]] [[fake:result=#1 implemented]]',
          body: '[[fake:result=#1 ready-for-agent]]',
        },
        { title: 'Vague', body: '[[fake:result=#2 needs-info: no steps to reproduce]]' },
        {
          title: 'Typo [[fake:result=#3 noop: already fixed on main]]',
          body: '[[fake:result=#3 ready-for-agent]]',
        },
      ],
      automation: `${triage}\n${implement}\n${chains}`,
    });
    const harness = h;
    const first = (await harness.run()).runs;
    const triaged = byItem(first.filter((r) => r.automationId === 'triage'));
    expect(Object.values(triaged).map((r) => [r.itemId, r.status, r.result?.outcome])).toEqual(
      expect.arrayContaining([
        ['1', 'succeeded', 'ready-for-agent'],
        ['2', 'succeeded', 'needs-info'],
        ['3', 'succeeded', 'ready-for-agent'],
      ]),
    );
    const labels = (n: number) => harness.world.issue('acme/api', n)!.labels.slice().sort();
    expect(labels(2)).toEqual(['needs-info']);
    // #1 and #3 got agent:ready (implement may have run on them, and taken it off, already).
    const readied = harness.sim.requests.filter(
      (r) => r.method === 'POST' && /\/issues\/[13]\/labels$/.test(r.path),
    );
    expect(readied).toHaveLength(2);
    // The chain on needs-info ran for #2 only, and saw the outcome.
    const asked = first.filter((r) => r.automationId === 'ask');
    expect(asked.map((r) => r.upstreamRunId)).toEqual([triaged['2']!.id]);
    expect(asked[0]!.prompt).toContain('#2 needs-info: no steps to reproduce');

    // Implement may already have seen a label put during the first pass: the writes go out as runs end.
    const all = [...first, ...(await harness.run()).runs];
    const implemented = byItem(all.filter((r) => r.automationId === 'implement'));
    // #2 (needs-info) gets no implement run; #1 delivers a pull request; #3 was a noop.
    expect(Object.keys(implemented).sort()).toEqual(['1', '3']);
    expect(implemented['1']).toMatchObject({ status: 'succeeded', result: { outcome: 'implemented' } });
    expect(implemented['1']!.reason).toContain('opened pull request #4');
    expect(implemented['3']).toMatchObject({ status: 'noop', reason: 'noop: already fixed on main' });
    // The chain after implement fires on the success, never on the noop.
    all.push(...(await harness.run()).runs);
    const shepherded = all.filter((r) => r.automationId === 'shepherd');
    expect(all.filter((r) => r.automationId === 'implement')).toHaveLength(2);
    expect(all.filter((r) => r.automationId === 'triage')).toHaveLength(3);
    expect(labels(1)).toEqual([]);
    expect(labels(3)).toEqual([]);
    expect(shepherded.map((r) => r.upstreamRunId)).toEqual([implemented['1']!.id]);
    const store = await harness.openStore();
    try {
      expect(await store.getItemFailures(implemented['3']!.taskKey)).toBeUndefined();
    } finally {
      await store.close();
    }
  }, 300_000);

  it('run --set gives declared inputs to the prompt and the run record; an undeclared key is refused, naming the declared', async () => {
    h = await createHarness({
      automation: issueAutomation('fix', {
        prompt: 'Fix #${issue_number} focusing on ${focus} against ${base}',
        extra: 'inputs = { focus = "bugs", base = "main" }',
      }),
    });
    const harness = h;
    const cli = (...args: string[]) =>
      runBuiltCli(['--config', harness.settingsFile, ...args], { env: harness.env });
    const refused = await cli('run', '--set', 'focus=docs', '--set', 'colour=blue');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      "unknown input 'colour': 'fix' declares base, focus (inputs = { … } in the automation's table)",
    );
    expect(harness.agentRuns('claude')).toHaveLength(0);

    const ran = await cli('run', '--set', 'focus=docs');
    expect(ran.code).toBe(0);
    const [call] = harness.agentRuns('claude');
    expect(call!.prompt).toContain('Fix #1 focusing on docs against main');
    const store = await harness.openStore();
    const [run] = await store.listRuns({ automationId: 'fix' }).finally(() => store.close());
    expect(run!.inputs).toEqual({ focus: 'docs', base: 'main' });
    const shown = await cli('runs', 'show', run!.id);
    expect(shown.stdout).toContain('  inputs:      focus=docs, base=main');
  }, 120_000);
});
