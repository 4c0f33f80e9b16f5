/**
 * Issue 32, build item 5 (seed 001's remaining rows) on the simulator: `human_reviewer` asked on
 * delivered pull requests, the `agent:trusted` label when screening vouches for an item, the review
 * step's verdict posted as a pull-request review, label descriptions given to the agent as guidance,
 * and recently closed issues offered to a triage run as duplicate candidates.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { setPermission } from '../../src/simulator/reviews.js';
import { createHarness, type Harness, issueAutomation, unfenced } from '../helpers/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

const writes = (harness: Harness) =>
  harness.sim.requests
    .filter((r) => r.method !== 'GET' && !r.path.endsWith('/graphql'))
    .map((r) => `${r.method} ${r.path}`);

describe("seed 001's remaining rows (issue 32)", () => {
  it('human_reviewer is asked on each delivered pull request; trusted_label goes on vouched items only', async () => {
    h = await createHarness({
      issues: [{ title: 'Fix the crash [[fake:commit]]', labels: ['agent-ready'] }],
      screening: 'required = false\ntrusted_authors = ["octocat"]',
      settingsExtra: 'runner_id = "build-1"\nrun_log = true',
      automation: issueAutomation('fix', {
        prompt: 'Fix #${issue_number}: ${issue_title}',
        extra: [
          'deliver = "pr"',
          'human_reviewer = ["alice", "@acme/core"]',
          'trusted_label = "agent:trusted"',
        ].join('\n'),
      }),
    });
    const harness = h;
    harness.world.addUser('alice');
    setPermission(harness.world, 'acme/api', 'alice', 'write');
    harness.world.addIssue('acme/api', {
      title: 'A stranger asks [[fake:commit]]',
      labels: ['agent-ready'],
      author: 'mallory',
    });
    const { runs } = await harness.run();
    expect(runs.map((r) => [r.itemId, r.status]).sort()).toEqual([
      ['1', 'succeeded'],
      ['2', 'succeeded'],
    ]);
    // Two pull requests (#3, #4), each with alice and the team asked, through the write queue.
    const pulls = [3, 4].map((n) => harness.world.pullRequest('acme/api', n)!);
    for (const pr of pulls) {
      expect(pr.requestedReviewers).toEqual(['alice']);
      expect(pr.requestedTeams).toEqual(['core']);
    }
    expect(writes(harness).filter((w) => w.endsWith('/requested_reviewers'))).toEqual([
      expect.stringMatching(/^POST \/repos\/acme\/api\/pulls\/[34]\/requested_reviewers$/),
      expect.stringMatching(/^POST \/repos\/acme\/api\/pulls\/[34]\/requested_reviewers$/),
    ]);
    // octocat is trusted: its issue gets the label; mallory's does not.
    expect(harness.world.item('acme/api', 1)!.labels).toContain('agent:trusted');
    expect(harness.world.item('acme/api', 2)!.labels).not.toContain('agent:trusted');
    expect(harness.world.repo('acme/api')!.labels.find((l) => l.name === 'agent:trusted')?.description).toBe(
      'curupira: the author (or labeler) is trusted',
    );
    // The run log names the runner of each run (seed 001's `runner`).
    const log = [...harness.world.repo('acme/api')!.items.values()].find((i) =>
      i.labels.includes('agent:log'),
    )!;
    expect(log.comments.map((c) => c.body.split('\n')[0]).sort()).toEqual(
      runs
        .map((r) =>
          expect.stringMatching(
            new RegExp(`^Run \`${r.id}\` .* · \\*\\*succeeded\\*\\* · .* · runner \`build-1\`$`),
          ),
        )
        .sort(),
    );
  }, 120_000);

  it("a review step's verdict is posted as a pull-request review, once", async () => {
    h = await createHarness({
      issues: [],
      // No pace between writes: the handoff's label lands before the drain's last poll, which must
      // not take the labelled pull request for a new task and review it again.
      writePaceMs: 0,
      automation: `[automations.review]
trigger_type = "github-pull-requests"
repository = "api"
repo = "acme/api"
outcomes = ["approve", "request-changes"]
prompt = "Review pull request #\${pull_request_number}: \${pull_request_body}"

[automations.review.handoffs.approve]
add_labels = ["agent:approved"]
review = "APPROVE"

[automations.review.handoffs.request-changes]
add_labels = ["agent:changes-requested"]
review = "REQUEST_CHANGES"
`,
    });
    const harness = h;
    harness.world.addPullRequest('acme/api', {
      title: 'Add a retry',
      body: '[[fake:result=#1 approve: the change has its test]]',
      author: 'bob',
    });
    harness.world.addPullRequest('acme/api', {
      title: 'Rewrite everything',
      body: '[[fake:result=#2 request-changes: no tests]]',
      author: 'bob',
    });
    await harness.run();
    const reviews = (n: number) =>
      harness.world.pullRequest('acme/api', n)!.reviews.map((r) => [r.author, r.state, r.body]);
    expect(reviews(1)).toEqual([
      ['octocat', 'APPROVED', expect.stringContaining('`#1 approve: the change has its test`')],
    ]);
    expect(reviews(2)).toEqual([
      ['octocat', 'CHANGES_REQUESTED', expect.stringContaining('`#2 request-changes: no tests`')],
    ]);
    expect(harness.world.item('acme/api', 1)!.labels).toContain('agent:approved');
    expect(harness.agentRuns('claude')).toHaveLength(2);
    // The queue finds its own review by the marker: sending the same write again posts nothing.
    const store = await harness.openStore();
    try {
      const sent = (await store.listWrites()).filter((w) => w.write.kind === 'review');
      expect(sent.map((w) => w.status)).toEqual(['sent', 'sent']);
    } finally {
      await store.close();
    }
  }, 120_000);

  it('a triage step gets the labels’ descriptions and the recently closed issues with similar titles, fenced', async () => {
    const day = 86_400_000;
    h = await createHarness({
      issues: [],
      automation: `[automations.triage]
step = "triage"
trigger_type = "github-issues"
repository = "api"
repo = "acme/api"
dedupe_closed_days = 30
`,
    });
    const harness = h;
    const { world } = harness;
    world.addLabel('acme/api', 'needs-triage', {
      description: 'New: a person or agent decides what it needs',
    });
    world.addLabel('acme/api', 'area:cache', { description: 'The config cache; changes need a benchmark' });
    world.addLabel('acme/api', 'bug');
    const closed = (title: string, daysAgo: number, reason: 'COMPLETED' | 'NOT_PLANNED' = 'COMPLETED') => {
      const issue = world.addIssue('acme/api', { title, author: 'bob' });
      issue.state = 'CLOSED';
      issue.stateReason = reason;
      issue.closedAt = new Date(Date.now() - daysAgo * day).toISOString();
      issue.updatedAt = issue.closedAt;
      return issue.number;
    };
    const recent = closed('Crash on start when the cache is cold', 3);
    closed('Crash on start when the cache is cold (old report)', 45);
    closed('Dark mode for the settings page', 2, 'NOT_PLANNED');
    const fresh = world.addIssue('acme/api', {
      title: 'Cache cold start crash',
      labels: ['needs-triage', 'area:cache', 'bug'],
      author: 'bob',
    });
    fresh.body = `[[fake:result=#${fresh.number} duplicate: https://github.com/acme/api/issues/${recent}]]`;
    const { runs } = await harness.run();
    expect(runs.map((r) => [r.itemId, r.status, r.result?.outcome])).toEqual([
      [String(fresh.number), 'succeeded', 'duplicate'],
    ]);
    const prompt = runs[0]!.prompt ?? '';
    const plain = unfenced(prompt);
    // The labels' descriptions (a label without one left out), fenced: maintainers' text, not curupira's.
    expect(plain).toContain(
      '- needs-triage: New: a person or agent decides what it needs\n- area:cache: The config cache; changes need a benchmark',
    );
    expect(plain).not.toContain('- bug');
    // Only the issue closed within 30 days with a similar title; not the older one, not the unrelated one.
    const day3 = new Date(Date.now() - 3 * day).toISOString().slice(0, 10);
    expect(plain).toContain(
      `#${recent}: Crash on start when the cache is cold (closed ${day3}, completed) https://github.com/acme/api/issues/${recent}`,
    );
    expect(plain).not.toContain('old report');
    expect(plain).not.toContain('Dark mode');
    for (const line of [`#${recent}: Crash on start`, '- area:cache: The config cache'])
      expect(prompt).toMatch(
        new RegExp(
          `BEGIN UNTRUSTED DATA (\\w+) -----\\n(?:(?!END UNTRUSTED)[\\s\\S])*${line.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`,
        ),
      );
    // The duplicate handoff of the preset: needs-triage off, duplicate on.
    expect(world.item('acme/api', fresh.number)!.labels.slice().sort()).toEqual([
      'area:cache',
      'bug',
      'duplicate',
    ]);
  }, 120_000);
});
