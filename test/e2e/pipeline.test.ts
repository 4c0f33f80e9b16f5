/**
 * Issue 32 (seed 001's pipeline) end to end on the simulator with fake agents that end their final
 * message with a result line: what each outcome does to the run (its status, the failure budget,
 * chains), what `runs` and the result comment show, and the label handoffs.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/core/types.js';
import { REMEDIATION_MARKS } from '../../src/delivery/remediation.js';
import { simChecks } from '../../src/simulator/checks.js';
import { setPermission, submitReview } from '../../src/simulator/reviews.js';
import type { Store } from '../../src/store/types.js';
import { git } from '../../src/workspace/git.js';
import {
  createHarness,
  deliveredBranch,
  type Harness,
  issueAutomation,
  runBuiltCli,
  unfenced,
  waitFor,
} from '../helpers/harness.js';
import { type Served, serveInProcess } from '../helpers/serve.js';
import { watchUntil } from '../helpers/watch.js';

let h: Harness | undefined;
let served: Served | undefined;
afterEach(async () => {
  await served?.stop();
  served = undefined;
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
    // `trigger --set` checks the same before it asks the daemon.
    const triggered = await cli('trigger', 'fix', '--set', 'colour=blue');
    expect(triggered.code).toBe(2);
    expect(triggered.stderr).toContain("unknown input 'colour': 'fix' declares base, focus");
    const noDaemon = await cli('trigger', 'fix', '--set', 'focus=docs');
    expect(noDaemon.stderr).toContain('no daemon running');

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

/**
 * The acceptance of issue 32: the five steps' work on the simulator with fake agents that report
 * outcomes. Triage puts `agent:ready` (or `needs-info`), implement delivers a pull request (or
 * reports a noop), review reports its verdict as a label, a person's change request is shepherded
 * (a remediation run pushes to the same pull request), then their approval and a green check let
 * curupira merge it, which closes the issue.
 */
describe('the whole pipeline (issue 32 acceptance)', () => {
  it('triaged, implemented, reviewed, shepherded through a review to merge, the issue closed; needs-info and noop go no further; --set reaches the prompt', async () => {
    const triage = issueAutomation('triage', {
      prompt: 'Triage issue #${issue_number}, looking for ${focus}.\n${issue_body}',
      labels: ['needs-triage'],
      extra: [
        'outcomes = ["ready-for-agent", "needs-info"]',
        'inputs = { focus = "anything" }',
        '[automations.triage.handoffs.ready-for-agent]',
        'add_labels = ["agent:ready"]',
        'remove_labels = ["needs-triage"]',
        '[automations.triage.handoffs.needs-info]',
        'add_labels = ["needs-info"]',
        'remove_labels = ["needs-triage"]',
      ].join('\n'),
    });
    const implement = issueAutomation('implement', {
      prompt: 'Implement issue #${issue_number}: ${issue_title}',
      labels: ['agent:ready'],
      extra: [
        'outcomes = ["implemented"]',
        'deliver = "pr"',
        'pr_draft = false',
        'merge = "auto"',
        'follow_interval = 10',
        '[automations.implement.handoffs.implemented]',
        'remove_labels = ["agent:ready"]',
        '[automations.implement.handoffs.noop]',
        'remove_labels = ["agent:ready"]',
      ].join('\n'),
    });
    // The review step: each head of an open pull request once; its verdict lands as a label.
    const review = `[automations.review]
trigger_type = "github-pull-requests"
repository = "api"
repo = "acme/api"
draft = false
once = "head"
worktree_from = "head"
outcomes = ["approve", "request-changes"]
prompt = "Review pull request #\${pull_request_number}. [[fake:result=#\${pull_request_number} approve: the fix has a test]]"

[automations.review.handoffs.approve]
add_labels = ["agent:approved"]
remove_labels = ["agent:changes-requested"]

[automations.review.handoffs.request-changes]
add_labels = ["agent:changes-requested"]
`;
    h = await createHarness({
      issues: [
        {
          title: 'Crash on start [[fake:commit]] [[fake:result=#1 implemented]]',
          body: '[[fake:result=#1 ready-for-agent]]',
          labels: ['needs-triage'],
        },
        {
          title: 'Something is off',
          body: '[[fake:result=#2 needs-info: no steps to reproduce]]',
          labels: ['needs-triage'],
        },
        {
          title: 'Typo in the README [[fake:result=#3 noop: already fixed on main]]',
          body: '[[fake:result=#3 ready-for-agent]]',
          labels: ['needs-triage'],
        },
      ],
      automation: `${triage}\n${implement}\n${review}`,
      settingsExtra: '[settings.polling]\npoll_interval_seconds = 0.2',
    });
    const harness = h;
    setPermission(harness.world, 'acme/api', 'alice', 'write');
    const labels = (n: number) => harness.world.item('acme/api', n)!.labels.slice().sort();
    const allRuns = async (): Promise<RunRecord[]> => {
      const store = await harness.openStore();
      try {
        return await store.listRuns({ limit: Number.POSITIVE_INFINITY });
      } finally {
        await store.close();
      }
    };
    const of = (runs: readonly RunRecord[], id: string) => runs.filter((r) => r.automationId === id);

    // 1. Triage, through the CLI with an input for this invocation's runs.
    const cli = await runBuiltCli(['--config', harness.settingsFile, 'run', '--set', 'focus=crashes'], {
      env: harness.env,
      timeoutMs: 120_000,
    });
    expect(cli.code, cli.stderr).toBe(0);
    const triagePrompts = harness
      .agentRuns('claude')
      .map((call) => call.prompt ?? '')
      .filter((prompt) => prompt.startsWith('Triage issue'));
    expect(triagePrompts).toHaveLength(3);
    for (const prompt of triagePrompts) expect(prompt).toContain(', looking for crashes.');
    let runs = await allRuns();
    const triaged = byItem(of(runs, 'triage'));
    expect(Object.values(triaged).map((r) => [r.itemId, r.status, r.result?.outcome])).toEqual(
      expect.arrayContaining([
        ['1', 'succeeded', 'ready-for-agent'],
        ['2', 'succeeded', 'needs-info'],
        ['3', 'succeeded', 'ready-for-agent'],
      ]),
    );
    expect(triaged['1']!.inputs).toEqual({ focus: 'crashes' });
    expect(labels(2)).toEqual(['needs-info']);

    // 2. Implement (the labels were put as the triage runs ended: this drain or the CLI's saw them),
    //    then review the delivered pull request.
    for (let pass = 0; pass < 3 && of(runs, 'review').length === 0; pass += 1) {
      await harness.run();
      runs = await allRuns();
    }
    const implemented = byItem(of(runs, 'implement'));
    // #2 (needs-info) gets no implement run; #1 delivers pull request #4; #3 is a noop.
    expect(Object.keys(implemented).sort()).toEqual(['1', '3']);
    expect(implemented['1']).toMatchObject({ status: 'succeeded', result: { outcome: 'implemented' } });
    expect(implemented['1']!.reason).toContain('opened pull request #4');
    expect(implemented['3']).toMatchObject({ status: 'noop', reason: 'noop: already fixed on main' });
    expect(labels(1)).toEqual([]);
    expect(labels(3)).toEqual([]);
    const pr = harness.world.pullRequest('acme/api', 4)!;
    expect(pr.body).toContain('Closes #1');
    const [reviewed] = of(runs, 'review');
    expect(reviewed).toMatchObject({
      itemId: '4',
      status: 'succeeded',
      result: { outcome: 'approve', reason: 'the fix has a test' },
    });
    expect(labels(4)).toEqual(['agent:approved']);
    // The noop fired nothing and left the failure budget alone.
    expect(runs.filter((r) => r.upstreamRunId === implemented['3']!.id)).toEqual([]);
    const store = await harness.openStore();
    try {
      expect(await store.getItemFailures(implemented['3']!.taskKey)).toBeUndefined();
    } finally {
      await store.close();
    }

    // 3. Shepherd: a person asks for a change; the remediation run answers on the same pull request.
    const branch = `refs/heads/${deliveredBranch(implemented['1']!)}`;
    const headOf = async () => (await git(['rev-parse', branch], { cwd: harness.origin.url })).trim();
    const firstHead = await headOf();
    submitReview(harness.world, 'acme/api', 4, {
      author: 'alice',
      state: 'CHANGES_REQUESTED',
      body: 'Please cover the empty config too. [[fake:commit]] [[fake:result=#1 implemented]]',
    });
    const answered = async (s: Store) =>
      (await s.listPullRequestMarks(implemented['1']!.id)).some((m) => m.key.startsWith('handled:')) &&
      (await s.getPullRequestMark(implemented['1']!.id, REMEDIATION_MARKS.action)) === undefined;
    const shepherding = await watchUntil(harness, 'the change request answered', answered, {
      timeoutMs: 60_000,
    });
    const remediation = shepherding.find((r) => r.upstreamRunId === implemented['1']!.id);
    expect(remediation).toMatchObject({ status: 'succeeded', sessionId: implemented['1']!.sessionId });
    const newHead = await headOf();
    expect(newHead).not.toBe(firstHead);
    // A fast-forward of the same pull request's branch.
    expect((await git(['merge-base', firstHead, newHead], { cwd: harness.origin.url })).trim()).toBe(
      firstHead,
    );

    // 4. Approved and green: curupira merges it, and the merge closes the issue.
    submitReview(harness.world, 'acme/api', 4, { author: 'alice', state: 'APPROVED' });
    simChecks(harness.world).addCheckRun('acme/api', {
      name: 'test',
      headSha: newHead,
      status: 'completed',
      conclusion: 'success',
    });
    const merging = await harness.openStore();
    try {
      await watchUntil(
        harness,
        'the merged delivery',
        async () => (await merging.getRun(implemented['1']!.id))?.status === 'merged',
        { store: merging, timeoutMs: 60_000 },
      );
    } finally {
      await merging.close();
    }
    expect(harness.world.pullRequest('acme/api', 4)!.state).toBe('MERGED');
    expect(harness.world.issue('acme/api', 1)).toMatchObject({ state: 'CLOSED' });
    // The others stay open, and nothing ever implemented #2: implement ran #1 (then its remediation
    // on the pull request) and #3.
    expect(harness.world.issue('acme/api', 2)!.state).toBe('OPEN');
    expect(
      of(await allRuns(), 'implement')
        .map((r) => `${r.itemId}${r.upstreamRunId ? ' (remediation)' : ''}`)
        .sort(),
    ).toEqual(['1', '1 (remediation)', '3']);
  }, 300_000);
});

describe('inputs on a triggered run (the API behind the board and `curupira trigger`)', () => {
  it('POST /automations/{id}/run takes declared inputs for the runs it starts; undeclared or non-string ones are refused', async () => {
    h = await createHarness({
      settingsExtra: '[settings.polling]\npoll_interval_seconds = 0.2\ncron_poll_interval_seconds = 0.2',
      issues: [],
      automation: `${issueAutomation('fix', {
        prompt: 'Fix #${issue_number} focusing on ${focus}',
        extra: 'inputs = { focus = "bugs" }',
      })}
[automations.chores]
trigger_type = "cron"
repository = "api"
schedule = "0 3 1 1 *"
inputs = { area = "docs", depth = "1" }
prompt = "Yearly chores in \${area} at depth \${depth}"
`,
    });
    const harness = h;
    // Paused from the start: only the trigger polls it, so the run below is the triggered one.
    const before = await harness.openStore();
    await before.setPaused('fix', true);
    await before.close();
    served = await serveInProcess(harness);
    const s = served;
    const post = (path: string, payload?: unknown) =>
      s.app.request(path, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${s.token}`,
          ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(payload === undefined ? {} : { body: JSON.stringify(payload) }),
      });

    const unknown = await post('/api/v1/automations/chores/run', { inputs: { colour: 'blue' } });
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toEqual({
      error: {
        code: 'bad_request',
        message:
          "unknown input 'colour': 'chores' declares area, depth (inputs = { … } in the automation's table)",
      },
    });
    const notText = await post('/api/v1/automations/chores/run', { inputs: { depth: 2 } });
    expect(notText.status).toBe(400);
    expect(((await notText.json()) as { error: { message: string } }).error.message).toBe(
      'inputs: \'depth\' must be a string (inputs = { "key": "value" })',
    );
    const notJson = await s.app.request('/api/v1/automations/chores/run', {
      method: 'POST',
      headers: { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' },
      body: '{"inputs":',
    });
    expect(notJson.status).toBe(400);
    expect(harness.agentRuns('claude')).toHaveLength(0);

    // A schedule fires at once with the inputs; the undeclared defaults stay.
    const fired = await post('/api/v1/automations/chores/run', { inputs: { area: 'tests' } });
    expect(fired.status).toBe(202);
    expect(await fired.json()).toEqual({ automation: 'chores', result: 'fired' });
    const chore = await waitFor('the fired run', () => s.runs.find((r) => r.automationId === 'chores'));
    expect(chore.inputs).toEqual({ area: 'tests', depth: '1' });
    expect(chore.prompt).toContain('Yearly chores in tests at depth 1');

    // An event trigger polls with them: the items that poll starts get them.
    harness.world.addIssue('acme/api', { title: 'Broken link', labels: ['agent-ready'], author: 'octocat' });
    const polled = await post('/api/v1/automations/fix/run', { inputs: { focus: 'links' } });
    expect(await polled.json()).toEqual({ automation: 'fix', result: 'polling' });
    const fix = await waitFor('the triggered run', () => s.runs.find((r) => r.automationId === 'fix'));
    expect(fix.inputs).toEqual({ focus: 'links' });
    expect(unfenced(fix.prompt ?? '')).toContain('focusing on links');

    // Without a body, the defaults (as before).
    await post('/api/v1/automations/chores/run');
    await waitFor(
      'the second fired run',
      () => s.runs.filter((r) => r.automationId === 'chores').length === 2,
    );
    expect(s.runs.filter((r) => r.automationId === 'chores')[1]!.inputs).toEqual({
      area: 'docs',
      depth: '1',
    });

    // A run retried keeps its inputs: the fired occurrence fires again with them, and the polled
    // item is found again with them (not the defaults).
    expect((await post(`/api/v1/runs/${chore.id}/retry`)).status).toBe(202);
    const again = await waitFor('the retried chore', () =>
      s.runs.filter((r) => r.automationId === 'chores').at(2),
    );
    expect(again.inputs).toEqual({ area: 'tests', depth: '1' });
    expect(again.prompt).toContain('Yearly chores in tests at depth 1');
    expect((await post(`/api/v1/runs/${fix.id}/retry`)).status).toBe(202);
    const fixedAgain = await waitFor('the retried fix', () =>
      s.runs.filter((r) => r.automationId === 'fix').at(1),
    );
    expect(fixedAgain.inputs).toEqual({ focus: 'links' });
    expect(unfenced(fixedAgain.prompt ?? '')).toContain('focusing on links');
  }, 120_000);
});
