import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { createGitHubClient } from '../github/client.js';
import { staticTokenSource } from '../github/token.js';
import { git } from '../workspace/git.js';
import { commitFiles, createOrigin, isolateGitForTests } from '../workspace/testing.js';
import type {
  CheckRunJson,
  CombinedStatusJson,
  JobJson,
  StatusCheckPolicyJson,
  StatusJson,
} from './checks.js';
import { simChecks } from './checks.js';
import { type Simulator, startSimulator } from './server.js';
import { SimWorld } from './world.js';

const TOKEN = 'checks-token';
const SHA = 'c'.repeat(40);
let sim: Simulator;
let world: SimWorld;

async function api<T = unknown>(path: string, method = 'GET', body?: unknown, token: string | null = TOKEN) {
  const response = await fetch(`${sim.url}${path}`, {
    method,
    redirect: 'manual',
    headers: {
      ...(token ? { authorization: `bearer ${token}` } : {}),
      accept: 'application/vnd.github+json',
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  const json = response.headers.get('content-type')?.includes('json') && text !== '';
  return {
    status: response.status,
    headers: response.headers,
    body: (json ? JSON.parse(text) : text) as T,
  };
}

beforeAll(() => isolateGitForTests());

beforeEach(async () => {
  world = new SimWorld();
  world.addToken(TOKEN, 'ci-app[bot]');
  world.addRepo('acme/api');
  world.addPullRequest('acme/api', { title: 'Fix', headRefName: 'feature', headRefOid: SHA });
  sim = await startSimulator({ world });
});

afterEach(async () => {
  await sim.close();
});

describe('check runs', () => {
  test('create, update and list them by sha and by a pull request head branch, in GitHub’s shape', async () => {
    const created = await api<CheckRunJson>('/repos/acme/api/check-runs', 'POST', {
      name: 'lint',
      head_sha: SHA,
      status: 'in_progress',
      details_url: 'https://ci.example/lint/1',
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: 'lint',
      head_sha: SHA,
      status: 'in_progress',
      conclusion: null,
      details_url: 'https://ci.example/lint/1',
      output: { title: null, summary: null, text: null, annotations_count: 0 },
      app: { slug: 'ci-app' },
      pull_requests: [{ number: 1 }],
    });
    expect(created.headers.get('location')).toBe(created.body.url);
    const id = created.body.id;
    const done = await api<CheckRunJson>(`/repos/acme/api/check-runs/${id}`, 'PATCH', {
      conclusion: 'failure',
      output: { title: '2 errors', summary: 'src/a.ts: unused', text: 'details' },
    });
    expect(done.body).toMatchObject({
      status: 'completed',
      conclusion: 'failure',
      output: { title: '2 errors', summary: 'src/a.ts: unused', text: 'details' },
    });
    expect(done.body.completed_at).not.toBeNull();
    for (const ref of [SHA, 'feature']) {
      const list = await api<{ total_count: number; check_runs: CheckRunJson[] }>(
        `/repos/acme/api/commits/${ref}/check-runs`,
      );
      expect(list.status).toBe(200);
      expect(list.body.total_count).toBe(1);
      expect(list.body.check_runs.map((c) => [c.id, c.conclusion])).toEqual([[id, 'failure']]);
    }
    expect((await api('/repos/acme/api/commits/nowhere/check-runs')).status).toBe(422);
    expect((await api('/repos/acme/api/check-runs', 'POST', { name: 'x', head_sha: 'nope' })).status).toBe(
      422,
    );
  });

  test('filter=latest (the default) shows the newest run of a name; filter=all every one', async () => {
    const checks = simChecks(world);
    checks.addCheckRun('acme/api', { name: 'test', headSha: SHA, conclusion: 'failure' });
    const newer = checks.addCheckRun('acme/api', { name: 'test', headSha: SHA, conclusion: 'success' });
    checks.addCheckRun('acme/api', { name: 'other', headSha: 'd'.repeat(40), conclusion: 'failure' });
    const latest = await api<{ check_runs: CheckRunJson[] }>(`/repos/acme/api/commits/${SHA}/check-runs`);
    expect(latest.body.check_runs.map((c) => c.id)).toEqual([newer.id]);
    const all = await api<{ total_count: number }>(`/repos/acme/api/commits/${SHA}/check-runs?filter=all`);
    expect(all.body.total_count).toBe(2);
  });

  test('a branch of the backing bare repository resolves to its commit', async () => {
    const origin = await createOrigin();
    try {
      const work = join(origin.dir, 'work');
      await git(['clone', '-q', origin.url, work], { cwd: origin.dir });
      await git(['switch', '-q', '-c', 'topic'], { cwd: work });
      const head = await commitFiles(work, { 'a.txt': 'a\n' });
      await git(['push', '-q', 'origin', 'topic'], { cwd: work });
      world.addRepo('acme/web', { gitDir: origin.url });
      simChecks(world).addCheckRun('acme/web', { name: 'build', headSha: head, conclusion: 'success' });
      const list = await api<{ check_runs: CheckRunJson[] }>('/repos/acme/web/commits/topic/check-runs');
      expect(list.body.check_runs.map((c) => c.head_sha)).toEqual([head]);
    } finally {
      await origin.cleanup();
    }
  });
});

describe('commit statuses', () => {
  test('post statuses; combined keeps the latest per context; /statuses lists them all', async () => {
    const posted = await api<StatusJson>(`/repos/acme/api/statuses/${SHA}`, 'POST', {
      state: 'pending',
      context: 'ci/jenkins',
      target_url: 'https://jenkins.example/1',
    });
    expect(posted.status).toBe(201);
    expect(posted.body).toMatchObject({
      state: 'pending',
      context: 'ci/jenkins',
      target_url: 'https://jenkins.example/1',
      creator: { login: 'ci-app[bot]' },
    });
    const pending = await api<CombinedStatusJson>(`/repos/acme/api/commits/${SHA}/status`);
    expect(pending.body).toMatchObject({ state: 'pending', sha: SHA, total_count: 1 });
    await api(`/repos/acme/api/statuses/${SHA}`, 'POST', { state: 'failure', context: 'ci/jenkins' });
    await api(`/repos/acme/api/statuses/${SHA}`, 'POST', { state: 'success', context: 'deploy' });
    const combined = await api<CombinedStatusJson>('/repos/acme/api/commits/feature/status');
    expect(combined.body.state).toBe('failure');
    expect(combined.body.statuses.map((s) => [s.context, s.state])).toEqual([
      ['deploy', 'success'],
      ['ci/jenkins', 'failure'],
    ]);
    const all = await api<StatusJson[]>(`/repos/acme/api/commits/${SHA}/statuses`);
    expect(all.body.map((s) => s.state)).toEqual(['success', 'failure', 'pending']);
    expect((await api(`/repos/acme/api/statuses/${SHA}`, 'POST', { state: 'green' })).status).toBe(422);
    const empty = await api<CombinedStatusJson>(`/repos/acme/api/commits/${'e'.repeat(40)}/status`);
    expect(empty.body).toMatchObject({ state: 'pending', total_count: 0, statuses: [] });
  });
});

describe('Actions jobs', () => {
  test('a check run backed by a job: the job, its log through a redirect the client follows', async () => {
    const run = simChecks(world).addCheckRun('acme/api', {
      name: 'test (node 20)',
      headSha: SHA,
      conclusion: 'failure',
      job: { runId: 4242, log: '2026-12-01T10:00:00.0000000Z \u001b[31mFAIL\u001b[0m a.test.ts\n' },
    });
    const check = await api<CheckRunJson>(`/repos/acme/api/check-runs/${run.id}`);
    expect(check.body.app.slug).toBe('github-actions');
    expect(check.body.details_url).toBe(`https://github.com/acme/api/actions/runs/4242/job/${run.id}`);
    const job = await api<JobJson>(`/repos/acme/api/actions/jobs/${run.id}`);
    expect(job.body).toMatchObject({
      id: run.id,
      run_id: 4242,
      run_attempt: 1,
      head_sha: SHA,
      status: 'completed',
      conclusion: 'failure',
      name: 'test (node 20)',
      head_branch: 'feature',
    });
    const redirect = await api(`/repos/acme/api/actions/jobs/${run.id}/logs`);
    expect(redirect.status).toBe(302);
    const location = redirect.headers.get('location')!;
    expect(location).toMatch(/\/_simulator\/job-logs\/acme\/api\/\d+\?attempt=1&sig=[0-9a-f]+$/);
    // The download needs no token (GitHub's are signed URLs) and is plain text.
    const download = await fetch(location);
    expect(download.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await download.text()).toContain('FAIL');
    expect((await fetch(location.replace(/sig=\w+/, 'sig=forged'))).status).toBe(404);
    // curupira's client follows the redirect and reads the text.
    const client = createGitHubClient({ apiUrl: sim.url, tokens: staticTokenSource(TOKEN), maxAttempts: 1 });
    const text = await client.rest<string>('GET', `/repos/acme/api/actions/jobs/${run.id}/logs`);
    expect(text).toBe('2026-12-01T10:00:00.0000000Z \u001b[31mFAIL\u001b[0m a.test.ts\n');
    // A check run that is not an Actions job has no job.
    const plain = simChecks(world).addCheckRun('acme/api', {
      name: 'lint',
      headSha: SHA,
      conclusion: 'failure',
    });
    expect((await api(`/repos/acme/api/actions/jobs/${plain.id}`)).status).toBe(404);
  });

  test('re-run failed jobs: the failed ones are queued again (attempt 2), then a helper completes them', async () => {
    const checks = simChecks(world);
    const failed = checks.addCheckRun('acme/api', {
      name: 'test',
      headSha: SHA,
      conclusion: 'failure',
      job: { runId: 77, log: 'boom\n' },
    });
    const passed = checks.addCheckRun('acme/api', {
      name: 'build',
      headSha: SHA,
      conclusion: 'success',
      job: { runId: 77, log: 'ok\n' },
    });
    const rerun = await api('/repos/acme/api/actions/runs/77/rerun-failed-jobs', 'POST');
    expect(rerun.status).toBe(201);
    expect(checks.checkRun('acme/api', failed.id)).toMatchObject({ status: 'queued', conclusion: null });
    expect(checks.checkRun('acme/api', passed.id)).toMatchObject({
      status: 'completed',
      conclusion: 'success',
    });
    const job = await api<JobJson>(`/repos/acme/api/actions/jobs/${failed.id}`);
    expect(job.body).toMatchObject({ status: 'queued', conclusion: null, run_attempt: 2 });
    // While it runs: no log yet, and a second re-run is refused.
    expect((await api(`/repos/acme/api/actions/jobs/${failed.id}/logs`)).status).toBe(404);
    expect((await api('/repos/acme/api/actions/runs/77/rerun-failed-jobs', 'POST')).status).toBe(403);
    expect(checks.completeJobs('acme/api', 77, 'success', { log: 'ok now\n' }).map((c) => c.id)).toEqual([
      failed.id,
    ]);
    const list = await api<{ check_runs: CheckRunJson[] }>(`/repos/acme/api/commits/${SHA}/check-runs`);
    expect(list.body.check_runs.map((c) => [c.name, c.status, c.conclusion])).toEqual([
      ['build', 'completed', 'success'],
      ['test', 'completed', 'success'],
    ]);
    expect(checks.rollup('acme/api', SHA)).toBe('SUCCESS');
    expect((await api('/repos/acme/api/actions/runs/77/rerun-failed-jobs', 'POST')).status).toBe(403);
    expect((await api('/repos/acme/api/actions/runs/78/rerun-failed-jobs', 'POST')).status).toBe(404);
  });
});

describe('branch protection: required checks', () => {
  test('404 when not protected, the policy when set, 403 when the token cannot read it', async () => {
    const path = '/repos/acme/api/branches/main/protection/required_status_checks';
    const none = await api<{ message: string }>(path);
    expect([none.status, none.body.message]).toEqual([404, 'Branch not protected']);
    simChecks(world).setRequiredChecks('acme/api', 'main', ['test', 'ci/jenkins'], true);
    const policy = await api<StatusCheckPolicyJson>(path);
    expect(policy.status).toBe(200);
    expect(policy.body).toMatchObject({
      strict: true,
      contexts: ['test', 'ci/jenkins'],
      checks: [
        { context: 'test', app_id: null },
        { context: 'ci/jenkins', app_id: null },
      ],
    });
    simChecks(world).setProtectionForbidden('acme/api', true);
    const forbidden = await api<{ message: string }>(path);
    expect([forbidden.status, forbidden.body.message]).toEqual([
      403,
      'Resource not accessible by integration',
    ]);
    simChecks(world).setProtectionForbidden('acme/api', false);
    simChecks(world).setRequiredChecks('acme/api', 'main', null);
    expect((await api(path)).status).toBe(404);
  });
});
