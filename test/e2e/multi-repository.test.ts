/**
 * Issue 30, tasks across repositories: one issue of `acme/api` worked on in two repositories
 * (`repositories = ["api", "web"]`). The simulator holds both, each backed by its own bare
 * repository; the engine, real git and the fake agent run as in every delivery test.
 *
 * - One run, two worktrees on the same branch: the agent works in the primary's and is told where
 *   the other is; it commits in both.
 * - Two pull requests, one per repository, each body linking the other and the item.
 * - A change request on the second one is answered by a remediation run resuming the delivery's
 *   session in that repository's worktree, and pushed to that pull request.
 * - Both merged (one after the other): the item is closed once, when the last one merges, and the
 *   run ends `merged` then, not before.
 * - kill -9 at each step of either repository's delivery: the restart leaves exactly one pull
 *   request per repository.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { REMEDIATION_MARKS } from '../../src/delivery/remediation.js';
import { sandboxBackend } from '../../src/sandbox/registry.js';
import { createApp } from '../../src/server/app.js';
import type { EngineView } from '../../src/server/board-data.js';
import { Hub } from '../../src/server/hub.js';
import { setPermission, submitReview } from '../../src/simulator/reviews.js';
import type { Store } from '../../src/store/types.js';
import { git } from '../../src/workspace/git.js';
import { createOrigin, type OriginRepo } from '../../src/workspace/testing.js';
import {
  createHarness,
  type Harness,
  issueAutomation,
  onlyRun,
  runBuiltCli,
  TOKEN,
} from '../helpers/harness.js';
import { watchUntil } from '../helpers/watch.js';

const probe = await sandboxBackend('bubblewrap').probe();

let h: Harness | undefined;
let web: OriginRepo | undefined;
afterEach(async () => {
  await h?.cleanup();
  await web?.cleanup();
  h = undefined;
  web = undefined;
});

async function twoRepositories(title: string, more = ''): Promise<Harness> {
  web = await createOrigin({ files: { 'README.md': '# web\n' } });
  const harness = await createHarness({
    issues: [{ title, body: 'Please fix.', labels: ['agent-ready'] }],
    settingsExtra: '[settings.polling]\npoll_interval_seconds = 0.2',
    automation: `[repositories.web]
remote = "file://${web.url}"
repo = "acme/web"

${issueAutomation('fix', {
  prompt: '${issue_title}',
  extra: `deliver = "pr"\npr_draft = false\nrepositories = ["api", "web"]${more}`,
})}`,
  });
  harness.world.addRepo('acme/web', { gitDir: web.url });
  harness.world.addToken(TOKEN, 'octocat');
  return harness;
}

const url = (item: { repo: string; number: number }, kind = 'pull') =>
  `https://github.com/${item.repo}/${kind}/${item.number}`;

const pulls = (harness: Harness, repo: string) =>
  harness.world.allItems().filter((i) => i.__typename === 'PullRequest' && i.repo === repo);

/** The delivery record key of the run's pull request in the additional repository `alias`. */
const keyOf = (runId: string, alias: string) => `${runId}~${alias}`;

describe('a task across two repositories', () => {
  it('two worktrees, two linked pull requests, a review on one remediated in the same session, both merged, the item closed once', async () => {
    h = await twoRepositories('Span both [[fake:commit]] [[fake:commit-in=web]]');
    const run = onlyRun((await h.run()).runs);
    expect(run.status, run.reason ?? '').toBe('succeeded');

    // The agent worked in the primary's worktree and was told where the other one is.
    const [call] = h.agentRuns('claude');
    expect(call!.cwd).toBe(run.worktreePath);
    const webLine = call!.prompt!.match(/^- `web` \(acme\/web\): (\/\S+)$/m);
    expect(webLine, call!.prompt).not.toBeNull();
    expect(call!.prompt).toContain(`- \`api\` (acme/api, your working directory): ${run.worktreePath}`);
    // The agent committed in web's worktree from inside its sandbox, which lets it write there.
    if (probe.ok) {
      const shown = await runBuiltCli(['--config', h.settingsFile, 'runs', 'show', run.id], { env: h.env });
      expect(shown.stdout).toMatch(/ {2}sandbox: {5}bubblewrap /);
      expect(shown.stdout).toContain(webLine![1]);
    }

    // One pull request per repository, on the same branch name, each body linking the other and the item.
    const [apiPull] = pulls(h, 'acme/api');
    const [webPull] = pulls(h, 'acme/web');
    expect(pulls(h, 'acme/api')).toHaveLength(1);
    expect(pulls(h, 'acme/web')).toHaveLength(1);
    if (apiPull?.__typename !== 'PullRequest' || webPull?.__typename !== 'PullRequest')
      throw new Error('two pull requests expected');
    expect(webPull.headRefName).toBe(apiPull.headRefName);
    expect(apiPull.body).toContain(url(webPull));
    expect(webPull.body).toContain(url(apiPull));
    const issueUrl = url(h.world.issue('acme/api', 1)!, 'issues');
    expect(apiPull.body).toContain(issueUrl);
    expect(webPull.body).toContain(issueUrl);
    // Neither closes the item on its own: it is closed once, when both are merged.
    expect(apiPull.closingIssues).toEqual([]);
    const webHead = (await git(['rev-parse', `refs/heads/${webPull.headRefName}`], { cwd: web!.url })).trim();
    expect(webHead).toBe(webPull.headRefOid);

    // `runs show` shows both pull requests of the run.
    const shown = await runBuiltCli(['--config', h.settingsFile, 'runs', 'show', run.id], { env: h.env });
    expect(shown.stdout).toContain(`pull req.:   #${apiPull.number} ${url(apiPull)} open`);
    expect(shown.stdout).toMatch(
      new RegExp(
        `repository: {2}acme/web \\(web\\)\\n(.*\\n){0,2} {2}pull req\\.: {3}#${webPull.number} ${url(webPull)} open`,
      ),
    );

    const check = await h.openStore();
    try {
      const records = await check.listPullRequests();
      expect(records.map((r) => [r.runId, r.repo, r.number, r.state]).sort()).toEqual(
        [
          [run.id, 'acme/api', apiPull.number, 'open'],
          [keyOf(run.id, 'web'), 'acme/web', webPull.number, 'open'],
        ].sort(),
      );
    } finally {
      await check.close();
    }

    // A change request on the web pull request: a remediation run, in the same session, in web's worktree.
    setPermission(h.world, 'acme/web', 'alice', 'write');
    submitReview(h.world, 'acme/web', webPull.number, {
      author: 'alice',
      state: 'CHANGES_REQUESTED',
      body: 'Rename it. [[fake:commit]]',
    });
    const webKey = keyOf(run.id, 'web');
    const answered = async (s: Store) =>
      (await s.listPullRequestMarks(webKey)).some((m) => m.key.startsWith('handled:')) &&
      (await s.getPullRequestMark(webKey, REMEDIATION_MARKS.action)) === undefined;
    await watchUntil(h, 'the remediation', answered, { timeoutMs: 60_000 });
    const remediation = h.agentRuns('claude').find((c) => c.prompt?.includes('Rename it.'));
    expect(remediation).toBeDefined();
    expect(remediation!.resumeOf).toBe(call!.sessionId);
    expect(remediation!.cwd).toBe(webLine![1]);
    const pushed = (await git(['rev-parse', `refs/heads/${webPull.headRefName}`], { cwd: web!.url })).trim();
    expect(pushed).not.toBe(webHead);

    // The web pull request merges first: the item stays open, the run is not merged yet.
    h.world.mergePullRequest('acme/web', webPull.number);
    await watchUntil(h, 'the web merge', async (s) => (await s.getPullRequest(webKey))?.state === 'merged', {
      timeoutMs: 60_000,
    });
    expect(h.world.issue('acme/api', 1)!.state).toBe('OPEN');
    const between = await h.openStore();
    try {
      expect((await between.getRun(run.id))!.status).toBe('succeeded');
    } finally {
      await between.close();
    }

    // Then the api one: the run ends merged and the item is closed, once.
    h.world.mergePullRequest('acme/api', apiPull.number);
    await watchUntil(h, 'the api merge', async (s) => (await s.getRun(run.id))?.status === 'merged', {
      timeoutMs: 60_000,
    });
    await watchUntil(h, 'the close', async () => h!.world.issue('acme/api', 1)!.state === 'CLOSED', {
      timeoutMs: 60_000,
    });
    const closes = h.sim.requests.filter(
      (r) => r.method === 'PATCH' && r.path === '/repos/acme/api/issues/1',
    );
    expect(closes).toHaveLength(1);
    expect(h.world.issue('acme/api', 1)).toMatchObject({ state: 'CLOSED', stateReason: 'COMPLETED' });
  }, 180_000);

  it('validate --explain, run --dry-run, runs show, the run page and the API show every repository, worktree and pull request', async () => {
    h = await twoRepositories('Span both [[fake:commit]] [[fake:commit-in=web]]', '\nresult_comment = true');
    const harness = h;
    const cli = (...args: string[]) =>
      runBuiltCli(['--config', harness.settingsFile, ...args], { env: harness.env });
    const settings = harness.settings();
    const api = settings.automations[0]!.repository;
    const webRepo = settings.automations[0]!.additionalRepositories![0]!;

    const explain = await cli('validate', '--explain');
    expect(explain.stdout).toContain(
      `repositories:   2, one worktree each on the same branch: api (${api.remote}, primary: the agent’s working directory; worktrees in ${api.checkoutPath}.worktrees/fix/), web (acme/web; worktrees in ${webRepo.checkoutPath}.worktrees/fix/)`,
    );
    expect(explain.stdout).toContain(
      'one pull request in each repository that changed, each linking the others',
    );
    expect(explain.stdout).toContain('every repository’s worktree, checkout and git directories');

    const dry = await cli('run', '--dry-run');
    expect(dry.code).toBe(0);
    const webLine = /^ {10}also web \(acme\/web\): worktree (\/\S+) on branch (\S+)$/m.exec(dry.stdout);
    expect(webLine, dry.stdout).not.toBeNull();
    expect(webLine![1]!.startsWith(`${webRepo.checkoutPath}.worktrees/fix/`)).toBe(true);
    expect(dry.stdout).toContain('This task spans 2 repositories.');
    expect(dry.stdout).toContain(`- \`web\` (acme/web): ${webLine![1]}`);

    const run = onlyRun((await harness.run()).runs);
    expect(run.status, run.reason ?? '').toBe('succeeded');
    const [apiPull] = pulls(harness, 'acme/api');
    const [webPull] = pulls(harness, 'acme/web');
    if (apiPull?.__typename !== 'PullRequest' || webPull?.__typename !== 'PullRequest')
      throw new Error('two pull requests expected');

    // The result comment on the item lists both pull requests.
    const comments = harness.world.issue('acme/api', 1)!.comments.map((c) => c.body);
    expect(comments).toHaveLength(1);
    expect(comments[0]).toContain(
      `- Pull requests: acme/api#${apiPull.number} ${url(apiPull)}, acme/web#${webPull.number} ${url(webPull)}\n`,
    );

    // The run list marks it as a run across repositories.
    const list = await cli('runs');
    expect(list.stdout).toMatch(new RegExp(`^${run.id} .*"Span both[^\\n]*"  \\[\\+1 repo\\]$`, 'm'));

    const shown = await cli('runs', 'show', run.id);
    expect(shown.stdout).toContain('  repositories: api (acme/api, primary), web (acme/web)');
    expect(shown.stdout).toContain(`  repository:  acme/web (web)\n  worktree:    ${webLine![1]}\n`);
    expect(shown.stdout).toContain(`pull req.:   #${webPull.number} ${url(webPull)} open`);
    // `runs show --json` adds the same `source` and `repositories` as the API.
    const shownJson = JSON.parse((await cli('runs', 'show', run.id, '--json')).stdout) as {
      id: string;
      status: string;
      source: string | null;
      repositories: {
        alias: string;
        repo: string;
        primary: boolean;
        worktreePath: string | null;
        delivery: { number: number; url: string } | null;
      }[];
    };
    expect(shownJson).toMatchObject({ id: run.id, status: 'succeeded', source: null });
    expect(
      shownJson.repositories.map((r) => [
        r.alias,
        r.repo,
        r.primary,
        r.worktreePath,
        r.delivery?.number,
        r.delivery?.url,
      ]),
    ).toEqual([
      ['api', 'acme/api', true, run.worktreePath, apiPull.number, url(apiPull)],
      ['web', 'acme/web', false, webLine![1], webPull.number, url(webPull)],
    ]);

    const store = await harness.openStore();
    try {
      const engine = {
        automations: () => [],
        currentSettings: () => settings,
      } as unknown as EngineView;
      const app = createApp({
        store,
        engine,
        hub: new Hub(),
        token: 'view-token',
        version: '0.0.0-test',
        startedAt: Date.now(),
      });
      const get = (path: string) => app.request(path, { headers: { authorization: 'Bearer view-token' } });
      const body = (await (await get(`/api/v1/runs/${run.id}`)).json()) as {
        source: string | null;
        repositories: {
          alias: string;
          repo: string;
          primary: boolean;
          worktreePath: string | null;
          delivery: { number: number; url: string; state: string } | null;
        }[];
      };
      expect(body.source).toBeNull();
      expect(
        body.repositories.map((r) => [
          r.alias,
          r.repo,
          r.primary,
          r.worktreePath,
          r.delivery?.number,
          r.delivery?.url,
        ]),
      ).toEqual([
        ['api', 'acme/api', true, run.worktreePath, apiPull.number, url(apiPull)],
        ['web', 'acme/web', false, webLine![1], webPull.number, url(webPull)],
      ]);
      const page = await (await get(`/runs/${run.id}`)).text();
      expect(page).toContain('<h3>Repositories (2)</h3>');
      // The board's card and the runs list name both pull requests, each linked.
      for (const path of ['/', '/runs', '/automations/fix']) {
        const list = await (await get(path)).text();
        expect(list, path).toContain('<div class="detail gate prs" data-prs="2">2 pull requests: ');
        expect(list, path).toContain(
          `<a href="${url(apiPull)}" rel="noreferrer"><span title="acme/api">api#${apiPull.number}</span></a>`,
        );
        expect(list, path).toContain(
          `<a href="${url(webPull)}" rel="noreferrer"><span title="acme/web">web#${webPull.number}</span></a>`,
        );
      }
      const automation = await (await get('/automations/fix')).text();
      expect(automation).toContain(
        `<dt>repositories</dt><dd>2, one worktree each on the same branch: api (${api.remote}, primary`,
      );
      expect(page).toContain(
        `<tr data-alias="web"><td>web</td><td>acme/web</td><td><code>${webLine![1]}</code></td><td><a href="${url(webPull)}" rel="noreferrer">#${webPull.number}</a> open since`,
      );
    } finally {
      await store.close();
    }
  }, 120_000);

  it('a repository the agent left alone gets no pull request', async () => {
    h = await twoRepositories('Only api [[fake:commit]]');
    const run = onlyRun((await h.run()).runs);
    expect(run.status, run.reason ?? '').toBe('succeeded');
    expect(pulls(h, 'acme/api')).toHaveLength(1);
    expect(pulls(h, 'acme/web')).toHaveLength(0);
  }, 60_000);
});

describe('a task across two repositories under kill -9 (slow)', () => {
  // `name#n`: the n-th time the process reaches the point (#2: in the second repository's delivery).
  const points = [
    'delivery-pushed',
    'delivery-pr-opened',
    'delivery-pushed#2',
    'delivery-pr-opened#2',
    'delivery-recorded#2',
    'delivery-linked',
    'run-cleaned',
  ];
  for (const point of points) {
    it(`killed at ${point}: the restart leaves exactly one pull request per repository`, async () => {
      h = await twoRepositories('Crash [[fake:commit]] [[fake:commit-in=web]]');
      const args = ['--config', h.settingsFile, 'run'];
      const killed = await runBuiltCli(args, { env: { ...h.env, CURUPIRA_TEST_CRASH_AT: point } });
      expect(killed.signal).toBe('SIGKILL');
      const again = await runBuiltCli(args, { env: h.env });
      expect(again.code, again.stderr).toBe(0);
      const api = pulls(h, 'acme/api');
      const webPulls = pulls(h, 'acme/web');
      expect(api).toHaveLength(1);
      expect(webPulls).toHaveLength(1);
      const [a] = api;
      const [w] = webPulls;
      if (a?.__typename !== 'PullRequest' || w?.__typename !== 'PullRequest')
        throw new Error('pull requests');
      expect(a.body).toContain(url(w));
      expect(w.body).toContain(url(a));
      const store = await h.openStore();
      try {
        const records = await store.listPullRequests();
        expect(records.map((r) => r.state).sort()).toEqual(['open', 'open']);
        expect(records.map((r) => r.number).sort()).toEqual([a.number, w.number].sort());
        const runs = await store.listRuns();
        expect(runs.map((r) => r.status)).toEqual(['succeeded']);
      } finally {
        await store.close();
      }
    }, 90_000);
  }
});
