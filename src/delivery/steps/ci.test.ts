import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AutomationConfig } from '../../config/types.js';
import { type Clock, systemClock } from '../../core/clock.js';
import { createGitHubClient } from '../../github/client.js';
import { staticTokenSource } from '../../github/token.js';
import { createLogger } from '../../log.js';
import { simChecks } from '../../simulator/checks.js';
import { type Simulator, startSimulator } from '../../simulator/server.js';
import { SimWorld } from '../../simulator/world.js';
import { openStore } from '../../store/index.js';
import type { PullRequestRecord, Store } from '../../store/types.js';
import { createFollower, FOLLOW_STEPS } from '../follow.js';
import type { RemediationRequest, RemediationResult } from '../remediation-types.js';
import {
  ciRemediationMark,
  ciRerunMark,
  ciStep,
  LOG_TAIL_LINES,
  logTail,
  REQUIRED_CHECKS_KEPT_MS,
} from './ci.js';

const TOKEN = 'ghp_ciStepTestToken0000000000000000000001';
const SHA = 'a1'.repeat(20);
let dir: string;
let sim: Simulator;
let world: SimWorld;
let store: Store;
let runId: string;
let requests: RemediationRequest[];
let answers: RemediationResult[];
let warnings: string[];
let rerun: boolean;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'curupira-ci-step-'));
  world = new SimWorld();
  world.addToken(TOKEN, 'octocat');
  world.addRepo('acme/api');
  world.addIssue('acme/api', { title: 'Crash' });
  world.addPullRequest('acme/api', {
    title: 'Fix',
    headRefName: 'curupira/fix/x',
    headRefOid: SHA,
    author: 'octocat',
  });
  sim = await startSimulator({ world });
  store = await openStore(join(dir, 'state.sqlite3'));
  const run = await store.createRun({
    automationId: 'fix',
    taskKey: 'k1',
    repo: 'acme/api',
    taskType: 'github-issues',
    itemId: '1',
    itemKey: 'issue:1',
    itemTitle: 'Crash',
    itemUrl: 'https://github.com/acme/api/issues/1',
    status: 'succeeded',
  });
  runId = run.id;
  await store.beginPullRequest({
    runId,
    automationId: 'fix',
    taskKey: 'k1',
    repo: 'acme/api',
    delivery: 'pr',
    headBranch: 'curupira/fix/x',
  });
  await store.updatePullRequest(runId, { number: 2, state: 'open', headSha: SHA });
  requests = [];
  answers = [];
  warnings = [];
  rerun = false;
});

afterEach(async () => {
  await store.close();
  await sim.close();
  await rm(dir, { recursive: true, force: true });
});

function follower(clock: Clock = systemClock) {
  const lines = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) {
        const record = JSON.parse(line) as { level: number; msg: string };
        if (record.level >= 40) warnings.push(record.msg);
      }
      done();
    },
  });
  return createFollower({
    store,
    clock,
    log: createLogger({ console: lines, format: 'json', level: 'warn' }),
    github: createGitHubClient({ apiUrl: sim.url, tokens: staticTokenSource(TOKEN), maxAttempts: 1 }),
    intervalSeconds: () => 0,
    paceMs: 0,
    config: () => ({ rerun_failed_checks: rerun }) as unknown as AutomationConfig,
    remediate: async (_record: PullRequestRecord, request: RemediationRequest) => {
      requests.push(request);
      return answers.shift() ?? 'started';
    },
    steps: [ciStep],
  });
}

async function delivery(): Promise<PullRequestRecord> {
  return (await store.getPullRequest(runId))!;
}

/** A job log as GitHub serves it: timestamps, ANSI colours, the error, then the post-job cleanup. */
function jobLog(lines: number, error = 'AssertionError: expected 2 to be 3'): string {
  const stamp = (i: number) =>
    `2026-12-01T10:${String(Math.floor(i / 60) % 60).padStart(2, '0')}:00.1234567Z`;
  const body = Array.from({ length: lines }, (_, i) => `${stamp(i)} \u001b[32mline ${i}\u001b[0m`);
  return [
    ...body,
    `${stamp(lines)} \u001b[31mFAIL\u001b[0m src/math.test.ts > adds`,
    `${stamp(lines)} ##[error]${error}`,
    `${stamp(lines)} ##[error]Process completed with exit code 1.`,
    `${stamp(lines)} Post job cleanup.`,
    `${stamp(lines)} Cleaning up orphan processes`,
    '',
  ].join('\n');
}

function failingJob(name = 'test', runId = 77, log = jobLog(200)) {
  return simChecks(world).addCheckRun('acme/api', {
    name,
    headSha: SHA,
    conclusion: 'failure',
    output: { title: '1 test failed', summary: 'math.test.ts: adds' },
    job: { runId, log },
  });
}

describe('the CI step', () => {
  it('is registered in FOLLOW_STEPS', () => {
    expect(FOLLOW_STEPS).toContain(ciStep);
  });

  it('a failure: the failing checks and the tail of the job’s log reach the remediation request', async () => {
    const check = failingJob('unit (node 20)');
    simChecks(world).addCheckRun('acme/api', { name: 'build', headSha: SHA, conclusion: 'success' });
    await follower().sweep();
    expect(requests).toHaveLength(1);
    const [request] = requests;
    expect(request).toMatchObject({ cause: 'ci', key: `ci:${SHA}`, budgeted: true });
    expect(request!.instructions).toContain(`pull request #2 failed on its head commit ${SHA}: 1 check`);
    // Check names are GitHub's text: they reach the agent fenced, never in curupira's own words.
    expect(request!.instructions).not.toContain('unit (node 20)');
    expect(request!.untrusted).toHaveLength(1);
    const { label, text } = request!.untrusted[0]!;
    expect(label).toBe('failing check 1 of 1');
    expect(text).toContain('name: unit (node 20)');
    expect(text).toContain(`link: https://github.com/acme/api/actions/runs/77/job/${check.id}`);
    expect(text).toContain('title: 1 test failed');
    expect(text).toContain('summary:\nmath.test.ts: adds');
    expect(text).toContain('##[error]AssertionError: expected 2 to be 3');
    expect(text).toContain('FAIL src/math.test.ts > adds');
    expect(text).toContain('line 199');
    expect(text).not.toContain('line 100\n');
    expect(text).toMatch(/\[… \d+ earlier lines left out\]/);
    expect(text).not.toContain('\u001b');
    expect(text).not.toMatch(/\d{4}-\d{2}-\d{2}T\d{2}:/);
    expect(text).not.toContain('Post job cleanup');
    expect(await delivery()).toMatchObject({
      gate: 'ci_failing',
      gateDetail: `failing on ${SHA.slice(0, 12)}: unit (node 20) (failure); remediation started`,
    });
    expect((await store.getPullRequestMark(runId, ciRemediationMark(SHA)))?.value).toBe('started');
  });

  it('a failing commit status counts too, with its link and description', async () => {
    simChecks(world).setStatus('acme/api', SHA, {
      state: 'error',
      context: 'ci/jenkins',
      description: 'Build broke',
      targetUrl: 'https://jenkins.example/job/9',
    });
    await follower().sweep();
    expect(requests).toHaveLength(1);
    const { text } = requests[0]!.untrusted[0]!;
    expect(text).toContain(
      'name: ci/jenkins\nkind: status\nresult: error\nlink: https://jenkins.example/job/9',
    );
    expect(text).toContain('summary:\nBuild broke');
  });

  it('terminal escapes in a check’s name or output reach neither the gate’s detail nor the request', async () => {
    simChecks(world).addCheckRun('acme/api', {
      name: 'lint\u001b]0;owned\u0007\u001b[2J\nnext line',
      headSha: SHA,
      conclusion: 'failure',
      output: { title: 'bad', summary: 'one\r\ntwo\u001b[31m red' },
    });
    await follower().sweep();
    expect((await delivery()).gateDetail).toBe(
      `failing on ${SHA.slice(0, 12)}: lint next line (failure); remediation started`,
    );
    const { text } = requests[0]!.untrusted[0]!;
    expect(text).toContain('summary:\none\ntwo red');
    expect(text).not.toMatch(/[\u0000-\u0008\u000b-\u001f]/);
  });

  it('branch protection readable: only the required checks decide, a missing one counts as running', async () => {
    const checks = simChecks(world);
    checks.setRequiredChecks('acme/api', 'main', ['test', 'ci/jenkins']);
    checks.addCheckRun('acme/api', { name: 'lint', headSha: SHA, conclusion: 'failure' });
    checks.addCheckRun('acme/api', { name: 'test', headSha: SHA, conclusion: 'success' });
    await follower().sweep();
    expect(requests).toEqual([]);
    expect(await delivery()).toMatchObject({
      gate: 'open',
      gateDetail: 'checks running: ci/jenkins (expected)',
    });
    checks.setStatus('acme/api', SHA, { state: 'success', context: 'ci/jenkins' });
    await follower().sweep();
    expect(requests).toEqual([]);
    expect(await delivery()).toMatchObject({ gate: 'open', gateDetail: null });
    // The same failure of an unrequired check counts when protection cannot be read (403).
    checks.setProtectionForbidden('acme/api', true);
    await follower().sweep();
    expect(requests.map((r) => r.untrusted.map((u) => u.text.split('\n')[0]))).toEqual([['name: lint']]);
  });

  it('reads the base branch protection once per five minutes per client, not at every look', async () => {
    let now = Date.parse('2026-12-07T10:00:00Z');
    const clock: Clock = { now: () => now, sleep: systemClock.sleep };
    const protectionReads = () => sim.requests.filter((r) => r.path.includes('/protection/')).length;
    simChecks(world).addCheckRun('acme/api', { name: 'lint', headSha: SHA, status: 'in_progress' });
    const kept = follower(clock);
    await kept.sweep();
    await kept.sweep();
    expect(protectionReads()).toBe(1);
    now += REQUIRED_CHECKS_KEPT_MS - 1;
    await kept.sweep();
    expect(protectionReads()).toBe(1);
    now += 1;
    await kept.sweep();
    expect(protectionReads()).toBe(2);
    // Another client (a restart) reads it again.
    await follower(clock).sweep();
    expect(protectionReads()).toBe(3);
    expect(await delivery()).toMatchObject({
      gate: 'open',
      gateDetail: 'checks running: lint (in_progress)',
    });
  });

  it('no branch protection (404): every check counts', async () => {
    simChecks(world).addCheckRun('acme/api', { name: 'lint', headSha: SHA, conclusion: 'timed_out' });
    await follower().sweep();
    expect(requests).toHaveLength(1);
    expect(requests[0]!.untrusted[0]!.text).toContain('result: timed_out');
  });

  it('pending: never remediated while a check runs, even when another one failed', async () => {
    const checks = simChecks(world);
    const running = checks.addCheckRun('acme/api', { name: 'e2e', headSha: SHA, status: 'in_progress' });
    await follower().sweep();
    expect(await delivery()).toMatchObject({ gate: 'open', gateDetail: 'checks running: e2e (in_progress)' });
    failingJob();
    await follower().sweep();
    expect(requests).toEqual([]);
    expect(await delivery()).toMatchObject({
      gate: 'ci_failing',
      gateDetail: `failing on ${SHA.slice(0, 12)}: test (failure); still running: e2e (in_progress)`,
    });
    checks.updateCheckRun('acme/api', running.id, { conclusion: 'success' });
    await follower().sweep();
    expect(requests).toHaveLength(1);
  });

  it('rerun_failed_checks: the failed jobs are re-run once; failing again, the agent is asked', async () => {
    rerun = true;
    const check = failingJob('test', 77, jobLog(10, 'first failure'));
    const sweeper = follower();
    await sweeper.sweep();
    expect(requests).toEqual([]);
    expect(sim.requests.filter((r) => r.method === 'POST').map((r) => r.path)).toEqual([
      '/repos/acme/api/actions/runs/77/rerun-failed-jobs',
    ]);
    expect((await store.getPullRequestMark(runId, ciRerunMark(SHA)))?.value).toBe('77');
    expect(await delivery()).toMatchObject({ gate: 'ci_failing' });
    expect((await delivery()).gateDetail).toContain('re-running the failed jobs');
    // Queued again: running, so nothing is done.
    await sweeper.sweep();
    expect(requests).toEqual([]);
    expect(await delivery()).toMatchObject({ gate: 'open', gateDetail: 'checks running: test (queued)' });
    // It fails again: no second re-run, the agent gets the new log.
    simChecks(world).completeJobs('acme/api', 77, 'failure', { log: jobLog(10, 'second failure') });
    await sweeper.sweep();
    await sweeper.sweep();
    expect(requests).toHaveLength(1);
    expect(requests[0]!.untrusted[0]!.text).toContain('##[error]second failure');
    expect(sim.requests.filter((r) => r.method === 'POST')).toHaveLength(1);
    expect(simChecks(world).checkRun('acme/api', check.id)?.status).toBe('completed');
  });

  it('rerun_failed_checks off (the default): the agent is asked at once, nothing is re-run', async () => {
    failingJob();
    await follower().sweep();
    expect(requests).toHaveLength(1);
    expect(sim.requests.filter((r) => r.method === 'POST')).toEqual([]);
  });

  it('rerun_failed_checks with no Actions job to re-run: the agent is asked at once', async () => {
    rerun = true;
    simChecks(world).addCheckRun('acme/api', { name: 'external', headSha: SHA, conclusion: 'failure' });
    await follower().sweep();
    expect(requests).toHaveLength(1);
    expect(await store.getPullRequestMark(runId, ciRerunMark(SHA))).toBeUndefined();
  });

  it('a head commit is remediated once; a new head commit that fails is remediated again', async () => {
    failingJob();
    const sweeper = follower();
    await sweeper.sweep();
    await sweeper.sweep();
    await follower().sweep();
    expect(requests.map((r) => r.key)).toEqual([`ci:${SHA}`]);
    const next = 'b2'.repeat(20);
    world.pullRequest('acme/api', 2)!.headRefOid = next;
    simChecks(world).addCheckRun('acme/api', { name: 'test', headSha: next, conclusion: 'failure' });
    await sweeper.sweep();
    expect(requests.map((r) => r.key)).toEqual([`ci:${SHA}`, `ci:${next}`]);
  });

  it('busy: asked again at the next sweep; exhausted: needs a person, not asked again', async () => {
    failingJob();
    answers = ['busy', 'exhausted'];
    const sweeper = follower();
    await sweeper.sweep();
    expect(await delivery()).toMatchObject({ gate: 'ci_failing' });
    await sweeper.sweep();
    await sweeper.sweep();
    expect(requests).toHaveLength(2);
    expect(await delivery()).toMatchObject({
      gate: 'needs_human',
      gateDetail: `failing on ${SHA.slice(0, 12)}: test (failure); the remediation budget is spent`,
    });
  });

  it('refused: logged once, not asked again', async () => {
    failingJob();
    answers = ['refused'];
    const sweeper = follower();
    await sweeper.sweep();
    await sweeper.sweep();
    expect(requests).toHaveLength(1);
    expect(warnings.filter((w) => w.includes('was refused'))).toHaveLength(1);
    expect((await delivery()).gateDetail).toContain('remediation refused');
  });

  it('passing, or no checks at all: no gate and no request', async () => {
    await follower().sweep();
    expect(await delivery()).toMatchObject({ gate: 'open', gateDetail: null });
    simChecks(world).addCheckRun('acme/api', { name: 'test', headSha: SHA, conclusion: 'success' });
    simChecks(world).addCheckRun('acme/api', { name: 'docs', headSha: SHA, conclusion: 'skipped' });
    await follower().sweep();
    expect(await delivery()).toMatchObject({ gate: 'open', gateDetail: null });
    expect(requests).toEqual([]);
  });
});

describe('logTail', () => {
  it('strips ANSI escapes, control characters and timestamps, and keeps the last lines', () => {
    const raw = Array.from(
      { length: 300 },
      (_, i) => `2026-12-01T10:00:00Z \u001b[1;31mrow ${i}\u001b[0m\u0007`,
    ).join('\r\n');
    const tail = logTail(raw);
    const lines = tail.split('\n');
    expect(lines[0]).toBe('[… 220 earlier lines left out]');
    expect(lines.slice(1)).toHaveLength(LOG_TAIL_LINES);
    expect(lines.at(-1)).toBe('row 299');
    expect(tail).not.toMatch(/[\u0000-\u0008\u000b-\u001f]/);
  });

  it('ends at the last ##[error] line, keeps only the shown part of a \\r-rewritten line, and caps characters', () => {
    expect(
      logTail('a\nprogress 10%\rprogress 100%\n##[error]boom\nafter\nmore\ncleanup\nPost job cleanup.'),
    ).toBe('a\nprogress 100%\n##[error]boom');
    const long = Array.from({ length: 50 }, (_, i) => `${i} ${'x'.repeat(200)}`).join('\n');
    const capped = logTail(long, 80, 1000);
    expect(capped.length).toBeLessThanOrEqual(1000 + 40);
    expect(capped.endsWith(`49 ${'x'.repeat(200)}`)).toBe(true);
  });
});
