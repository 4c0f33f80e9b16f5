/**
 * Rate limits of Linear and Jira, end to end (issue 30): `run --watch`'s engine polls a stand-in
 * that answers as the service does when its budget is spent (Linear: `RATELIMITED` with its
 * `X-RateLimit-Requests-*` headers, as HTTP 400 or 429; Jira: 429 with `Retry-After`). Discovery
 * parks until the time the service gave, sends nothing before it, then resumes: every issue runs
 * exactly once, none lost, none twice.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/core/types.js';
import { Engine } from '../../src/features.js';
import { createHarness, type Harness, waitFor } from '../helpers/harness.js';
import { JiraStandIn } from '../helpers/jira-stand-in.js';
import { LinearStandIn } from '../helpers/linear-stand-in.js';

const POLLING = '\n[settings.polling]\npoll_interval_seconds = 0.2';
const LINEAR_KEY = 'lin_api_rateLimitStandInKeyNeverPrinted01';
const JIRA_EMAIL = 'bot@acme.test';
const JIRA_TOKEN = 'ATATT3xFfGF0rateLimitJiraTokenNeverPrinted1';

let h: Harness | undefined;
let stop: (() => Promise<void>) | undefined;
afterEach(async () => {
  await h?.cleanup();
  await stop?.();
  h = undefined;
  stop = undefined;
});

/**
 * Watches until two issues ran; then `limit()` spends the service's budget and a third issue
 * appears; the watch goes on until the third ran. Returns every run the engine reported.
 */
async function watchThroughLimit(harness: Harness, limit: () => void, addThird: () => void) {
  const store = await harness.openStore();
  const halt = new AbortController();
  const runs: RunRecord[] = [];
  const engine = new Engine(
    harness.engineOptions(store, { mode: 'watch', stop: halt.signal, onRun: (run) => runs.push(run) }),
  );
  const done = engine.run();
  try {
    await waitFor('the first two runs', () => runs.length === 2, 60_000);
    limit();
    addThird();
    await waitFor('the third run', () => runs.length === 3, 60_000);
  } finally {
    halt.abort();
    await done;
    await store.close();
  }
  return runs;
}

describe('a Linear rate limit while watching', () => {
  for (const status of [400, 429] as const) {
    it(`RATELIMITED (HTTP ${status}): discovery parks until the reset Linear gave, then resumes; each issue runs once`, async () => {
      const linear = new LinearStandIn(LINEAR_KEY, 'u-bot');
      linear.addUser({ id: 'u-bot', name: 'Curupira', displayName: 'curupira', email: 'bot@acme.test' });
      linear.addUser({ id: 'u-ada', name: 'Ada', displayName: 'ada', email: 'ada@acme.test' });
      linear.rateLimitStatus = status;
      const url = await linear.start();
      stop = () => linear.stop();
      const issue = (number: number) => ({
        team: 'ENG',
        number,
        title: `Issue ${number}`,
        labels: ['agent'],
        creatorId: 'u-ada',
        createdAt: `2026-01-0${number}T00:00:00Z`,
      });
      linear.addIssue(issue(1));
      linear.addIssue(issue(2));
      h = await createHarness({
        issues: [],
        settingsExtra: POLLING,
        automation: `[automations.lin]
trigger_type = "linear"
repository = "api"
team = "ENG"
labels = ["agent"]
once = true
api_url = "${url}"
prompt = "Work on \${linear_identifier}: \${linear_title}"
`,
      });
      h.env.LINEAR_API_KEY = LINEAR_KEY;
      // The 1.5 s window starts at the first refused request: on a crowded machine the next poll
      // may come later than 1.5 s after the limit is set.
      const runs = await watchThroughLimit(
        h,
        () => linear.limit(0, 1500, { fromRefusal: true }),
        () => linear.addIssue(issue(3)),
      );
      const resetAt = linear.resetAt;
      expect(runs.map((r) => [r.itemKey, r.status]).sort()).toEqual([
        ['linear:ENG-1', 'succeeded'],
        ['linear:ENG-2', 'succeeded'],
        ['linear:ENG-3', 'succeeded'],
      ]);
      expect(
        h
          .agentRuns('claude')
          .map((call) => /Work on (ENG-\d)/.exec(call.prompt ?? '')?.[1])
          .sort(),
      ).toEqual(['ENG-1', 'ENG-2', 'ENG-3']);
      // One refused request: the feed parked and sent nothing more until Linear's reset.
      const limited = linear.requests.filter((r) => r.limited);
      expect(limited).toHaveLength(1);
      const after = linear.requests.slice(linear.requests.indexOf(limited[0]!) + 1);
      expect(after.length).toBeGreaterThan(0);
      expect(after[0]!.at).toBeGreaterThanOrEqual(resetAt);
    }, 120_000);
  }
});

describe('a Jira rate limit while watching', () => {
  it('429 with Retry-After: discovery parks for the seconds Jira gave, then resumes; each issue runs once', async () => {
    const jira = new JiraStandIn(JIRA_EMAIL, JIRA_TOKEN, 'acc-bot');
    jira.users.set('acc-bot', { accountId: 'acc-bot', displayName: 'curupira', accountType: 'atlassian' });
    jira.users.set('acc-ada', { accountId: 'acc-ada', displayName: 'Ada', accountType: 'atlassian' });
    jira.retryAfterSeconds = 1;
    const url = await jira.start();
    stop = () => jira.stop();
    const issue = (n: number) => ({
      key: `ENG-${n}`,
      summary: `Issue ${n}`,
      labels: ['agent'],
      reporter: 'acc-ada',
      created: `2026-01-0${n}T00:00:00.000+0000`,
    });
    jira.issues.push(issue(1), issue(2));
    h = await createHarness({
      issues: [],
      settingsExtra: POLLING,
      automation: `[automations.tickets]
trigger_type = "jira"
repository = "api"
site_url = "${url}"
email = "${JIRA_EMAIL}"
project = "ENG"
labels = ["agent"]
once = true
prompt = "Work on \${jira_key}: \${jira_summary}"
`,
    });
    h.env.JIRA_API_TOKEN = JIRA_TOKEN;
    const runs = await watchThroughLimit(
      h,
      () => {
        jira.throttleNext = 1;
      },
      () => jira.issues.push(issue(3)),
    );
    expect(runs.map((r) => [r.itemKey, r.status]).sort()).toEqual([
      ['jira:ENG-1', 'succeeded'],
      ['jira:ENG-2', 'succeeded'],
      ['jira:ENG-3', 'succeeded'],
    ]);
    expect(
      h
        .agentRuns('claude')
        .map((call) => /Work on (ENG-\d)/.exec(call.prompt ?? '')?.[1])
        .sort(),
    ).toEqual(['ENG-1', 'ENG-2', 'ENG-3']);
    const limited = jira.requests.filter((r) => r.limited);
    expect(limited).toHaveLength(1);
    const after = jira.requests.slice(jira.requests.indexOf(limited[0]!) + 1);
    expect(after.length).toBeGreaterThan(0);
    // Retry-After: 1 — nothing was sent in the second after the 429.
    expect(after[0]!.at - limited[0]!.at).toBeGreaterThanOrEqual(1000);
  }, 120_000);
});
