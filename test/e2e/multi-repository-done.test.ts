/**
 * Issue 30, the item of a task across two repositories closed once: a GitHub issue closed as
 * completed, a Linear issue moved to `merged_state`, a Jira issue transitioned to it, each exactly
 * once, when the second of its two pull requests merges, and not before:
 *
 * - the first pull request merges under one engine, which then stops (a restart between merges);
 * - the second merges, and the next engine either has its write fail once after the service
 *   applied it, or is killed (kill -9) after the write was queued (`write-enqueued`) or after the
 *   service took it but before the queue noted it (`write-posted`); the engine after that finishes.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/types.js';
import { createOrigin, type OriginRepo } from '../../src/workspace/testing.js';
import {
  createHarness,
  type Harness,
  issueAutomation,
  onlyRun,
  runBuiltCli,
  TOKEN,
} from '../helpers/harness.js';
import { JiraStandIn } from '../helpers/jira-stand-in.js';
import { LinearStandIn } from '../helpers/linear-stand-in.js';
import { watchUntil } from '../helpers/watch.js';

const LINEAR_KEY = 'lin_api_e2eStandInKeyNeverPrinted000000002';
const JIRA_EMAIL = 'bot@acme.test';
const JIRA_TOKEN = 'ATATT3xFfGF0e2eJiraTokenNeverPrinted000002';
const TITLE = 'Span both [[fake:commit]] [[fake:commit-in=web]]';
const SPAN = 'deliver = "pr"\npr_draft = false\nrepositories = ["api", "web"]\nrepo = "acme/api"';

/** One tracker the item lives in: its automation table, and how its item's closing shows. */
interface Tracker {
  /** The automation's table (with `[repositories.web]` prepended by the test). */
  automation(): string;
  env: Record<string, string>;
  /** How many times the item was closed / moved to its done state. */
  closes(h: Harness): number;
  done(h: Harness): boolean;
  /** The next write to the item fails once, after the service applied it. */
  failOnce(h: Harness): void;
  stop(): Promise<void>;
}

async function linearTracker(): Promise<Tracker> {
  const linear = new LinearStandIn(LINEAR_KEY, 'u-bot');
  linear.addUser({ id: 'u-bot', name: 'Curupira', displayName: 'curupira', email: 'bot@acme.test' });
  linear.addUser({ id: 'u-ada', name: 'Ada', displayName: 'ada', email: 'ada@acme.test', admin: true });
  const url = await linear.start();
  linear.addIssue({
    team: 'ENG',
    number: 7,
    title: TITLE,
    labels: ['agent'],
    creatorId: 'u-ada',
    createdAt: '2026-01-01T00:00:00Z',
  });
  return {
    automation: () => `[automations.lin]
trigger_type = "linear"
repository = "api"
team = "ENG"
labels = ["agent"]
once = true
api_url = "${url}"
merged_state = "Done"
prompt = "\${linear_title}"
${SPAN}
`,
    env: { LINEAR_API_KEY: LINEAR_KEY },
    closes: () => linear.writes.filter((w) => w.kind === 'move' && w.stateId === 'state-done').length,
    done: () => linear.issues.find((i) => i.number === 7)?.state?.name === 'Done',
    failOnce: () => {
      linear.faults = { failNext: 1, afterApplying: true };
    },
    stop: () => linear.stop(),
  };
}

async function jiraTracker(): Promise<Tracker> {
  const jira = new JiraStandIn(JIRA_EMAIL, JIRA_TOKEN, 'acc-bot');
  jira.users.set('acc-bot', { accountId: 'acc-bot', displayName: 'curupira', accountType: 'atlassian' });
  jira.users.set('acc-ada', { accountId: 'acc-ada', displayName: 'Ada', accountType: 'atlassian' });
  const url = await jira.start();
  jira.issues.push({
    key: 'ENG-7',
    summary: TITLE,
    labels: ['agent'],
    reporter: 'acc-ada',
    created: '2026-01-01T00:00:00.000+0000',
  });
  return {
    automation: () => `[automations.tickets]
trigger_type = "jira"
repository = "api"
site_url = "${url}"
email = "${JIRA_EMAIL}"
project = "ENG"
labels = ["agent"]
once = true
merged_state = "Done"
prompt = "\${jira_summary}"
${SPAN}
`,
    env: { JIRA_API_TOKEN: JIRA_TOKEN },
    closes: () => jira.writes.filter((w) => w.kind === 'transition' && w.status === 'Done').length,
    done: () => jira.issues[0]!.status === 'Done',
    failOnce: () => {
      jira.faults = { failNext: 1, afterApplying: true };
    },
    stop: () => jira.stop(),
  };
}

async function githubTracker(): Promise<Tracker> {
  const closes = (h: Harness) =>
    h.sim.requests.filter((r) => r.method === 'PATCH' && r.path === '/repos/acme/api/issues/1');
  return {
    automation: () =>
      issueAutomation('fix', { prompt: '${issue_title}', extra: SPAN.replace('\nrepo = "acme/api"', '') }),
    env: {},
    closes: (h) => closes(h).length,
    done: (h) => h.world.issue('acme/api', 1)!.state === 'CLOSED',
    // Every write fails after GitHub applied it; the close is the only write of this engine.
    failOnce: (h) => h.sim.setWriteFaults({ fraction: 1, applied: true, status: 502 }),
    stop: async () => undefined,
  };
}

const TRACKERS: Record<string, () => Promise<Tracker>> = {
  'a GitHub issue': githubTracker,
  'a Linear issue': linearTracker,
  'a Jira issue': jiraTracker,
};

let h: Harness | undefined;
let web: OriginRepo | undefined;
let tracker: Tracker | undefined;
afterEach(async () => {
  await h?.cleanup();
  await web?.cleanup();
  await tracker?.stop();
  h = undefined;
  web = undefined;
  tracker = undefined;
});

async function setUp(make: () => Promise<Tracker>): Promise<{ h: Harness; tracker: Tracker }> {
  tracker = await make();
  web = await createOrigin({ files: { 'README.md': '# web\n' } });
  h = await createHarness({
    issues: [{ title: TITLE, body: 'Please fix.', labels: ['agent-ready'] }],
    settingsExtra: '[settings.polling]\npoll_interval_seconds = 0.2',
    writePaceMs: 0,
    automation: `[repositories.web]
remote = "file://${web.url}"
repo = "acme/web"

${tracker.automation()}`,
  });
  h.world.addRepo('acme/web', { gitDir: web.url });
  h.world.addToken(TOKEN, 'octocat');
  Object.assign(h.env, tracker.env);
  return { h, tracker };
}

const pull = (harness: Harness, repo: string) => {
  const found = harness.world.allItems().filter((i) => i.__typename === 'PullRequest' && i.repo === repo);
  expect(found).toHaveLength(1);
  return found[0]!.number;
};

const VARIANTS = ['a write failing once after it was applied', 'write-enqueued', 'write-posted'] as const;

describe('the item of a task across two repositories is closed once, when both pull requests merged', () => {
  for (const [what, make] of Object.entries(TRACKERS)) {
    for (const variant of VARIANTS) {
      const title =
        variant === VARIANTS[0] ? variant : `kill -9 at ${variant} after the last merge, then a restart`;
      it(`${what}: ${title}`, async () => {
        const { h, tracker } = await setUp(make);
        const run = onlyRun((await h.run()).runs);
        expect(run.status, run.reason ?? '').toBe('succeeded');
        const apiNumber = pull(h, 'acme/api');
        const webNumber = pull(h, 'acme/web');

        // The web pull request merges; an engine records it and stops: the item stays open.
        h.world.mergePullRequest('acme/web', webNumber);
        await watchUntil(
          h,
          'the web merge',
          async (s: Store) => (await s.getPullRequest(`${run.id}~web`))?.state === 'merged',
          { timeoutMs: 60_000 },
        );
        expect(tracker.done(h)).toBe(false);
        expect(tracker.closes(h)).toBe(0);

        // The api pull request merges: the next engine fails once, or is killed, on the close.
        h.world.mergePullRequest('acme/api', apiNumber);
        if (variant === VARIANTS[0]) {
          tracker.failOnce(h);
        } else {
          const killed = await runBuiltCli(['--config', h.settingsFile, 'run', '--watch'], {
            env: { ...h.env, CURUPIRA_TEST_CRASH_AT: variant },
          });
          expect(killed.signal, killed.stderr).toBe('SIGKILL');
          expect(tracker.closes(h)).toBe(variant === 'write-posted' ? 1 : 0);
        }
        const closed = async (s: Store) =>
          (await s.getRun(run.id))?.status === 'merged' &&
          (await s.listWrites({ status: 'pending' })).length === 0 &&
          tracker.done(h);
        await watchUntil(h, 'the item closed', closed, { timeoutMs: 60_000 });
        expect(tracker.done(h)).toBe(true);
        expect(tracker.closes(h)).toBe(1);
        const store = await h.openStore();
        try {
          expect((await store.listPullRequests()).map((r) => r.state)).toEqual(['merged', 'merged']);
          expect((await store.listWrites({ status: 'failed' })).map((w) => w.marker)).toEqual([]);
        } finally {
          await store.close();
        }
        // A later engine writes nothing more.
        await watchUntil(h, 'another round', () => true, { ticks: 2 });
        expect(tracker.closes(h)).toBe(1);
        expect(h.agentRuns('claude')).toHaveLength(1);
      }, 120_000);
    }
  }
});
