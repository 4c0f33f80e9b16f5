/**
 * Issue 29, "run a baseline now" for any review watch, end to end on the simulator with real git:
 * an incremental watch with no baseline of its own runs a review of the whole repository pinned at
 * the branch's head when asked — from the CLI (`curupira trigger WATCH --baseline`, over the
 * daemon's socket), from the API (`POST /api/v1/automations/WATCH/baseline`) and from the board's
 * button (on the automation page and the findings page, posted with the token header). The fake
 * agent reports through the findings server declared to it; the same problem found by both
 * baselines is one finding.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { isTerminal, type RunRecord } from '../../src/core/types.js';
import { reviewedUpTo } from '../../src/review/progress.js';
import {
  createHarness,
  type Harness,
  issueAutomation,
  pushToMain,
  runBuiltCli,
  waitFor,
} from '../helpers/harness.js';
import { type Served, serveInProcess } from '../helpers/serve.js';

let h: Harness | undefined;
let served: Served | undefined;
afterEach(async () => {
  await served?.stop();
  served = undefined;
  await h?.cleanup();
  h = undefined;
});

const FAST = '[settings.polling]\npoll_interval_seconds = 0.2\ncron_poll_interval_seconds = 0.2';

/** An incremental watch that starts from the head it first sees: no baseline of its own, no first review. */
const WATCH = `[automations.review]
trigger_type = "review-watch"
repository = "api"
repo = "acme/api"
first_review = "from_now"
prompt = "Review \${review_range}. [[fake:finding=src/a.ts:1:medium:Magic number]] [[fake:review-done]]"

${issueAutomation('fix', { prompt: 'Fix #${issue_number}' })}`;

function call(s: Served, path: string, init: RequestInit = {}, token: string | null = s.token) {
  const headers = new Headers(init.headers);
  if (token !== null) headers.set('authorization', `Bearer ${token}`);
  return s.app.request(path, { ...init, headers });
}

async function body(response: Response): Promise<Record<string, unknown>> {
  return (await response.json()) as Record<string, unknown>;
}

/** The finished review runs that reached an agent (skipped looks left out), oldest first. */
async function reviews(s: Served): Promise<RunRecord[]> {
  return (await s.store.listRuns({ automationId: 'review' }))
    .filter((r) => r.status !== 'skipped' && isTerminal(r.status))
    .reverse();
}

describe('run a baseline now', () => {
  it('from the CLI, the API and the board: the whole repository at the head, though the watch is incremental', async () => {
    h = await createHarness({ issues: [], automation: WATCH, settingsExtra: FAST });
    const head = await pushToMain(h, { 'src/a.ts': 'export const a = 42;\n' }, 'add a');
    served = await serveInProcess(h, { listen: true });
    const s = served;
    const harness = h;
    const cli = (...args: string[]) =>
      runBuiltCli(['--config', harness.settingsFile, ...args], { env: harness.env, timeoutMs: 30_000 });

    // The watch starts from the head it sees: a skipped look, no agent, nothing to review.
    await waitFor('the first look', async () => (await reviewedUpTo(s.store, 'review')) === head);
    expect(h.agentRuns('claude')).toHaveLength(0);

    // The CLI asks the daemon for a baseline: the whole repository at main's head.
    const asked = await cli('trigger', 'review', '--baseline');
    expect(asked.code, asked.stderr).toBe(0);
    expect(asked.stdout).toBe(
      'Running a baseline of review now: the whole repository at the branch’s head (`curupira findings --watch review` lists what it finds).\n',
    );
    const [first] = await waitFor('the baseline asked from the CLI', async () => {
      const done = await reviews(s);
      return done.length === 1 ? done : undefined;
    });
    expect(first!.status, first!.reason ?? '').toBe('succeeded');
    expect(first!.baseCommit).toBe(head);
    expect(first!.itemId).toBe(`${head.slice(0, 12)}-baseline`);
    expect(first!.itemTitle).toBe(`Baseline review of acme/api main at ${head.slice(0, 12)} (asked now)`);
    expect(first!.prompt).toContain(
      `Review the whole repository at ${head.slice(0, 12)} (baseline asked now: the whole repository).`,
    );

    // The API asks again at the same head: a baseline runs whatever was reviewed before.
    const posted = await call(s, '/api/v1/automations/review/baseline', { method: 'POST' });
    expect(posted.status).toBe(202);
    expect(await body(posted)).toEqual({ automation: 'review', scan: 'baseline', result: 'polling' });
    const second = await waitFor('the baseline asked from the API', async () => (await reviews(s))[1]);
    expect(second.status, second.reason ?? '').toBe('succeeded');
    expect(second.baseCommit).toBe(head);
    expect(h.agentRuns('claude')).toHaveLength(2);
    // Both found the same problem: one finding, seen last by the second.
    const findings = await s.store.listFindings({ watch: 'review' });
    expect(findings.map((f) => [f.title, f.status, f.firstRunId, f.lastRunId])).toEqual([
      ['Magic number', 'open', first!.id, second.id],
    ]);

    // Refused: an automation that is not a review watch, an unknown one, no token, not a POST.
    const notWatch = await call(s, '/api/v1/automations/fix/baseline', { method: 'POST' });
    expect(notWatch.status).toBe(409);
    expect(await body(notWatch)).toEqual({
      error: {
        code: 'scan_not_offered',
        message: "automation 'fix' has no baseline scan to run now (its trigger offers none)",
      },
    });
    expect((await call(s, '/api/v1/automations/nope/baseline', { method: 'POST' })).status).toBe(404);
    expect((await call(s, '/api/v1/automations/review/baseline', { method: 'POST' }, null)).status).toBe(401);
    expect(await body(await call(s, '/api/v1/automations/review/baseline'))).toMatchObject({
      error: { code: 'method_not_allowed' },
    });
    const cliRefused = await cli('trigger', 'fix', '--baseline');
    expect(cliRefused.code).toBe(1);
    expect(cliRefused.stderr).toBe(
      "error: automation 'fix' has no baseline scan to run now (its trigger offers none) (scan_not_offered)\n",
    );
    const withSet = await cli('trigger', 'review', '--baseline', '--set', 'focus=x');
    expect(withSet.code).toBe(2);
    expect(withSet.stderr).toContain('--baseline takes no --set');

    // The board: the button on the watch's page and its findings page, posting to the same route.
    const button =
      '<button type="button" class="action" data-action="/api/v1/automations/review/baseline" data-follow="/api/v1/runs?automation=review&amp;limit=1">Run a baseline now</button>';
    const page = await (await call(s, '/automations/review')).text();
    expect(page).toContain(button);
    const findingsPage = await (await call(s, '/automations/review/findings')).text();
    expect(findingsPage).toContain(button);
    expect(await (await call(s, '/automations/fix')).text()).not.toContain('Run a baseline now');
    // What the button posts (the board's script sends the token header): a third baseline.
    const pressed = await call(s, '/api/v1/automations/review/baseline', { method: 'POST' });
    expect(pressed.status).toBe(202);
    await waitFor('the baseline asked from the board', async () => (await reviews(s))[2]);
    expect(h.agentRuns('claude')).toHaveLength(3);
    expect((await s.store.listFindings({ watch: 'review' })).length).toBe(1);
  }, 120_000);

  it('asked while the only slot is taken, then curupira restarted before it ran: it runs after the restart', async () => {
    h = await createHarness({
      issues: [{ title: 'Slow [[fake:sleep=4]]', labels: ['agent-ready'] }],
      automation: WATCH.replace('Fix #${issue_number}', 'Fix ${issue_title}'),
      settingsExtra: FAST,
    });
    const head = await pushToMain(h, { 'src/a.ts': 'export const a = 42;\n' }, 'add a');
    served = await serveInProcess(h, { listen: true });
    const first = served;
    // The fix run takes the one slot (max_active_tasks = 1); the baseline asked now waits for it.
    await waitFor('the fix run to start', async () =>
      (await first.store.listRuns({ automationId: 'fix' })).find((r) => r.status === 'running'),
    );
    expect((await call(first, '/api/v1/automations/review/baseline', { method: 'POST' })).status).toBe(202);
    await waitFor('the baseline to be looked for', async () =>
      (await first.store.getMeta('scan-asked:review')) === 'baseline' ? true : undefined,
    );
    expect(await reviews(first)).toEqual([]);
    // curupira stops before the baseline ran, and starts again.
    await first.stop();
    served = await serveInProcess(h, { listen: true });
    const second = served;
    const [baseline] = await waitFor(
      'the baseline after the restart',
      async () => {
        const done = (await reviews(second)).filter((r) => r.itemId === `${head.slice(0, 12)}-baseline`);
        return done.length > 0 ? done : undefined;
      },
      60_000,
    );
    expect(baseline!.status, baseline!.reason ?? '').toBe('succeeded');
    expect(baseline!.baseCommit).toBe(head);
    // Once: it ran, and the state no longer asks for it.
    await waitFor('the ask to be answered', async () =>
      (await second.store.getMeta('scan-asked:review')) === '' ? true : undefined,
    );
    expect((await reviews(second)).filter((r) => r.itemId.endsWith('-baseline'))).toHaveLength(1);
  }, 120_000);
});
