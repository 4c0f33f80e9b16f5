/**
 * Issue 13, CI failures, through a real engine in watch mode (simulator backed by a bare repository,
 * real git, fake agent): a delivered pull request whose head's GitHub Actions job fails gets the gate
 * `ci_failing`, and with `rerun_failed_checks = true` its failed jobs are re-run once (the setting
 * reaches the CI step, which the engine's follower runs by default). The remediation that follows a
 * second failure is covered by src/delivery/steps/ci.test.ts, and through the engine's remediator
 * by test/e2e/remediation.test.ts.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ciRerunMark } from '../../src/delivery/steps/ci.js';
import { Engine } from '../../src/features.js';
import { simChecks } from '../../src/simulator/checks.js';
import { createHarness, type Harness, issueAutomation, onlyRun, waitFor } from '../helpers/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

describe('CI failures of a delivered pull request', () => {
  it('gate ci_failing, and the failed Actions jobs are re-run once with rerun_failed_checks', async () => {
    h = await createHarness({
      issues: [{ title: 'Fix it [[fake:commit]]', body: 'Please fix.', labels: ['agent-ready'] }],
      automation: issueAutomation('fix', {
        prompt: '${issue_title}',
        extra: 'deliver = "pr"\nrerun_failed_checks = true',
      }),
      settingsExtra: '[settings.polling]\npoll_interval_seconds = 0.2',
    });
    const run = onlyRun((await h.run()).runs);
    const pr = h.world.pullRequest('acme/api', 2)!;
    const checks = simChecks(h.world);
    const failed = checks.addCheckRun('acme/api', {
      name: 'test',
      headSha: pr.headRefOid,
      conclusion: 'failure',
      job: { runId: 31, log: '##[error]Process completed with exit code 1.\n' },
    });

    const store = await h.openStore();
    const stop = new AbortController();
    const engine = new Engine(h.engineOptions(store, { mode: 'watch', stop: stop.signal }));
    const done = engine.run();
    try {
      await waitFor(
        'the re-run',
        async () => (await store.getPullRequest(run.id))?.gateDetail?.includes('re-running') === true,
        30_000,
      );
    } finally {
      stop.abort();
      await done;
    }
    try {
      const delivery = (await store.getPullRequest(run.id))!;
      expect(delivery).toMatchObject({ state: 'open', gate: 'ci_failing' });
      expect(delivery.gateDetail).toBe(
        `failing on ${pr.headRefOid.slice(0, 12)}: test (failure); re-running the failed jobs`,
      );
      expect((await store.getPullRequestMark(run.id, ciRerunMark(pr.headRefOid)))?.value).toBe('31');
      expect(checks.checkRun('acme/api', failed.id)).toMatchObject({ status: 'queued', conclusion: null });
    } finally {
      await store.close();
    }
  }, 90_000);
});
