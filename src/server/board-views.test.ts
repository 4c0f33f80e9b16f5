import { describe, expect, it } from 'vitest';
import type { RunRecord } from '../core/types.js';
import { summarizeReviews } from '../delivery/review-summary.js';
import type { FindingRecord, PullRequestRecord } from '../store/types.js';
import { automationPage, runsPage } from './automation-page.js';
import type { AutomationCard } from './board-data.js';
import {
  attentionCard,
  itemName,
  otherDeliveries,
  readableBranch,
  runActionButtons,
  runCard,
} from './cards.js';
import { diffSection, parseDiff } from './diff-view.js';
import { computeFigures } from './figures.js';
import { headerTotals, reloadBanner } from './figures-view.js';
import { findingsPage, findingsPanel } from './findings-page.js';
import { runPage } from './pages.js';
import { tokenPage } from './token-page.js';

const EVIL = '<script>alert("x")</script>';
const ESCAPED = '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;';

function noScript(text: string): void {
  expect(text).not.toContain('<script>alert');
  expect(text).not.toMatch(/<img|<svg|onerror=/i);
}

function run(overrides: Partial<RunRecord> = {}): RunRecord {
  return {
    id: 'r_0000000001AAAAAAAA',
    automationId: `fix${EVIL}`,
    taskKey: 'k',
    repo: 'acme/api',
    taskType: 'github-issues',
    itemId: '7',
    itemKey: 'issue:7',
    itemTitle: `Title ${EVIL}`,
    itemUrl: 'https://github.com/acme/api/issues/7',
    status: 'succeeded',
    reason: null,
    createdAt: '2026-01-01T00:00:00.000Z',
    startedAt: '2026-01-01T00:00:01.000Z',
    finishedAt: '2026-01-01T00:02:01.000Z',
    profile: `main${EVIL}`,
    provider: 'claude',
    sessionId: 's',
    resumed: false,
    exitCode: 0,
    signal: null,
    transcriptPath: null,
    branch: `curupira/${EVIL}/a-very-long-branch-name-that-goes-on-and-on-for-ever`,
    worktreePath: null,
    worktreeKept: false,
    commits: 0,
    usage: null,
    prompt: null,
    scheduledFor: null,
    upstreamRunId: null,
    agentPid: null,
    agentOutcome: null,
    screeningFindings: null,
    screeningReason: null,
    screenedDigest: null,
    costUsd: 0.42,
    ...overrides,
  };
}

function pr(overrides: Partial<PullRequestRecord> = {}): PullRequestRecord {
  return {
    runId: 'r_0000000001AAAAAAAA',
    automationId: 'fix',
    taskKey: 'k',
    repo: 'acme/api',
    delivery: 'pr',
    headBranch: `curupira/${EVIL}`,
    headSha: 'abc',
    baseBranch: 'main',
    number: 12,
    url: 'https://github.com/acme/api/pull/12',
    adopted: false,
    state: 'open',
    detail: null,
    since: '2026-01-01T01:00:00.000Z',
    gate: 'changes_requested',
    gateSince: null,
    gateDetail: `octocat asked: ${EVIL}`,
    createdAt: '2026-01-01T00:03:00.000Z',
    updatedAt: '2026-01-01T00:03:00.000Z',
    ...overrides,
  };
}

const NOW = Date.parse('2026-01-01T01:00:00.000Z');

describe('cards say what happened', () => {
  it('a merged run and a run with no changes are successes (green), with no Retry', () => {
    for (const [status, reason] of [
      ['merged', 'merged: pull request #5 merged'],
      ['succeeded', 'no changes: the agent finished without a commit or a changed file'],
    ] as const) {
      const text = runCard(run({ status, reason }), undefined, NOW).text;
      expect(text).toContain('outcome-success');
      expect(text).not.toContain('outcome-failure');
      expect(text).not.toContain('>Retry<');
    }
    expect(runCard(run({ status: 'failed' }), undefined, NOW).text).toContain('>Retry<');
    expect(runCard(run({ status: 'failed' }), undefined, NOW).text).toContain('outcome-failure');
    expect(runCard(run({ status: 'blocked' }), undefined, NOW).text).toContain('outcome-blocked');
    expect(runCard(run({ status: 'parked' }), undefined, NOW).text).toContain('outcome-parked');
    expect(runCard(run({ status: 'running', finishedAt: null }), undefined, NOW).text).toContain(
      'outcome-running',
    );
  });

  it('shows the result the agent reported (its outcome and reason), escaped', () => {
    const text = runCard(
      run({ result: { outcome: 'needs-info', reason: `no steps ${EVIL}`, item: 7, via: 'line' } }),
      undefined,
      NOW,
    ).text;
    noScript(text);
    expect(text).toContain(`reported <span class="outcome-name">#7 needs-info: no steps ${ESCAPED}</span>`);
    expect(runCard(run(), undefined, NOW).text).not.toContain('reported <span');
  });

  it('shows the item number, agent, duration, cost and the pull request with its gate, all escaped', () => {
    const text = runCard(run(), pr(), NOW).text;
    noScript(text);
    expect(text).toContain(`Title ${ESCAPED}</a> <span class="number">acme/api#7</span>`);
    expect(text).toContain(`main${ESCAPED} (claude)`);
    expect(text).toContain('>2m<');
    expect(text).toContain('$0.42');
    expect(text).toContain('<a href="https://github.com/acme/api/pull/12" rel="noreferrer">PR #12</a>');
    expect(text).toContain('changes requested');
    expect(text).toContain(`octocat asked: ${ESCAPED}`);
    expect(text).toContain(`href="/automations/fix%3Cscript%3Ealert(%22x%22)%3C%2Fscript%3E"`);
    // A pull request link only to http(s).
    expect(runCard(run(), pr({ url: 'javascript:alert(1)' }), NOW).text).not.toContain('javascript:');
  });

  it('a run that never started shows no duration, and no cost unless one was paid', () => {
    const held = runCard(
      run({ status: 'blocked', startedAt: null, finishedAt: null, costUsd: null }),
      undefined,
      NOW,
    );
    expect(held.text).not.toContain('class="duration"');
    expect(held.text).not.toContain('class="cost"');
    expect(held.text).toMatch(/<span class="agent">[^<]*<\/span><\/div>/);
    const screened = runCard(
      run({ status: 'blocked', startedAt: null, finishedAt: null, costUsd: 0.01 }),
      undefined,
      NOW,
    );
    expect(screened.text).not.toContain('class="duration"');
    expect(screened.text).toContain('$0.01');
  });

  it('a run across repositories shows every pull request, compact, linked and escaped', () => {
    const web = pr({
      runId: 'r_0000000001AAAAAAAA~web',
      repo: `acme/web${EVIL}`,
      number: 7,
      url: 'https://github.com/acme/web/pull/7',
      state: 'merged',
      gate: null,
    });
    const deliveries = {
      r_0000000001AAAAAAAA: pr(),
      'r_0000000001AAAAAAAA~web': web,
      r_2: pr({ runId: 'r_2' }),
    };
    const others = otherDeliveries(deliveries, 'r_0000000001AAAAAAAA');
    expect(others).toEqual([web]);
    expect(otherDeliveries(deliveries, 'r_2')).toEqual([]);
    const card = runCard(run(), pr(), NOW, others).text;
    noScript(card);
    expect(card).toContain('<div class="detail gate prs" data-prs="2">2 pull requests: ');
    expect(card).toContain(
      '<a href="https://github.com/acme/api/pull/12" rel="noreferrer"><span title="acme/api">api#12</span></a> <span class="pill outcome-running">open</span> <span class="pill outcome-attention">changes requested</span>',
    );
    expect(card).toContain(
      `, <span class="pr" data-repo="acme/web${ESCAPED}" data-pr="7"><a href="https://github.com/acme/web/pull/7" rel="noreferrer"><span title="acme/web${ESCAPED}">web${ESCAPED}#7</span></a> <span class="pill outcome-success">merged</span></span></div>`,
    );
    // Not the single pull request's line, nor the bare branch.
    expect(card).not.toContain('>PR #12<');
    expect(card).not.toContain('class="detail clip">branch');
    // The primary delivered nothing: only the other one, still named by its repository.
    expect(runCard(run(), undefined, NOW, [web]).text).toContain('1 pull request: <span class="pr"');
    // A branch-only delivery among them.
    expect(runCard(run(), pr({ delivery: 'branch' }), NOW, [web]).text).toContain(
      '2 deliveries: <span title="acme/api">api</span> branch pushed',
    );
    const attention = attentionCard(
      { latest: run({ status: 'failed' }), earlier: [], running: null },
      pr(),
      NOW,
      others,
    ).text;
    expect(attention).toContain('2 pull requests: ');
    const list = runsPage({
      automations: [],
      runs: [run()],
      next: null,
      deliveries,
      search: {},
      token: 'tok',
      now: NOW,
    }).text;
    noScript(list);
    expect(list).toContain('2 pull requests: ');
    expect(list).toContain('data-pr="7"');
  });

  it('names a scheduled item by its occurrence, and shortens a long branch keeping both ends', () => {
    expect(
      itemName(
        run({
          taskType: 'cron',
          itemId: '1796266800',
          itemKey: 'cron:1796266800',
          itemUrl: 'cron://shop',
          scheduledFor: '2026-12-01T02:30:00.000Z',
        }),
      ),
    ).toEqual({ title: `Title ${EVIL}`, ref: 'schedule fired 2026-12-01 02:30 UTC' });
    const branch = 'curupira/fix/github-issues-1234-make-the-login-page-faster-and-smaller';
    const short = readableBranch(branch);
    expect(short.length).toBe(40);
    expect(short.startsWith('curupira/fix/')).toBe(true);
    expect(short.endsWith('smaller')).toBe(true);
    const card = runCard(run({ status: 'failed' }), undefined, NOW).text;
    expect(card).toContain(
      `title="curupira/${ESCAPED}/a-very-long-branch-name-that-goes-on-and-on-for-ever"`,
    );
  });

  it('asks before a cancel, a worktree removal and allowing a critical finding, naming what happens', () => {
    const cancel = runActionButtons(run({ status: 'running', finishedAt: null }));
    expect(cancel.map((b) => b.label)).toEqual(['Cancel']);
    expect(cancel[0]!.confirm).toMatch(
      /^Cancel the run on acme\/api#7 .*Its agent is stopped now; its session is kept\.$/,
    );
    const blocked = run({
      status: 'blocked',
      screenedDigest: 'd',
      screeningFindings: [
        {
          scanner: 'exfiltration',
          rule: 'send-secrets',
          severity: 'critical',
          field: 'body',
          offset: 0,
          excerpt: 'x',
        },
      ],
    });
    const allow = runActionButtons(blocked).find((b) => b.label === 'Allow once')!;
    expect(allow.confirm).toContain('despite 1 critical finding (exfiltration/send-secrets)');
    expect(
      runActionButtons({ ...blocked, screeningFindings: [] }).find((b) => b.label === 'Allow once')!.confirm,
    ).toBeUndefined();
    const kept = runActionButtons(
      run({ status: 'failed', worktreeKept: true, worktreePath: '/w/x', commits: 2 }),
    );
    expect(kept.map((b) => b.label)).toEqual(['Retry', 'Remove worktree', 'Dismiss']);
    // Held by its delivery (not by screening: no text to allow), e.g. a remote branch with other commits.
    const heldDelivery = runActionButtons(
      run({ status: 'blocked', screenedDigest: null, worktreeKept: true, worktreePath: '/w/y', commits: 1 }),
    );
    expect(heldDelivery.map((b) => b.label)).toEqual(['Retry', 'Remove worktree', 'Dismiss']);
    expect(kept[1]!.confirm).toBe(
      'Remove the kept worktree /w/x? Its 2 unpushed commits and any changes are deleted for good.',
    );
    const card = runCard(run({ status: 'running', finishedAt: null, itemTitle: EVIL }), undefined, NOW).text;
    noScript(card);
    expect(card).toContain(`data-confirm="Cancel the run on acme/api#7 “${ESCAPED}”?`);
  });

  it('one card per item in Needs attention, the earlier attempts folded inside; Dismiss takes them along', () => {
    const latest = run({ id: 'r_2', status: 'failed', reason: `second ${EVIL}` });
    const first = run({ id: 'r_1', status: 'timed_out', reason: `first ${EVIL}` });
    const text = attentionCard({ latest, earlier: [first], running: null }, undefined, NOW).text;
    noScript(text);
    expect(text.match(/<article/g)).toHaveLength(1);
    expect(text).toContain('1 earlier attempt</summary>');
    expect(text).toContain(`first ${ESCAPED}`);
    expect(text).toContain('data-action="/api/v1/runs/r_2/dismiss?attempts=true"');
  });
});

describe('new pages and fields escape what they show', () => {
  const card: AutomationCard = {
    id: `fix${EVIL}`,
    triggerType: 'github-issues',
    paused: false,
    disabled: false,
    explain: [{ label: 'search query', value: `label:${EVIL}` }],
    nextFireAt: null,
    nextPollAt: '2026-01-01T01:00:30.000Z',
    lastPollAt: '2026-01-01T01:00:00.000Z',
    lastFound: 1,
    waiting: 0,
    matching: 3,
    lastError: `boom ${EVIL}`,
    baseline: null,
    pausedReason: null,
    parkedUntil: null,
    retries: [],
    budget: null,
    scans: [],
  };
  const window = { from: '2025-12-25T00:00:00.000Z', to: '2026-01-01T00:00:00.000Z' };

  it('the automation page: name, trigger, errors, figures per profile, runs and filters', () => {
    const figures = computeFigures(
      [run(), run({ id: 'r_2', profile: 'codex' })],
      [pr({ state: 'merged' })],
      window,
    );
    const text = automationPage({
      card,
      figures,
      windowName: '7d',
      failed: [run({ status: 'failed', reason: `exit ${EVIL}` })],
      runs: [run()],
      next: 'r_0000000001AAAAAAAA',
      deliveries: { r_0000000001AAAAAAAA: pr() },
      search: { q: EVIL, profile: EVIL },
      token: 'tok',
      now: NOW,
    }).text;
    noScript(text);
    expect(text).toContain(`<h2>fix${ESCAPED}`);
    expect(text).toContain(`last poll failed: boom ${ESCAPED}`);
    expect(text).toContain(`exit ${ESCAPED}`);
    expect(text).toContain(`<th scope="row">main${ESCAPED}</th>`);
    expect(text).toContain(`name="q" value="${ESCAPED}"`);
    expect(text).toContain('polling · next poll');
    expect(text).toContain('rel="next" id="older"');
    expect(text).toContain('href="/automations/fix%3Cscript%3Ealert(%22x%22)%3C%2Fscript%3E?q=%3Cscript%3E');
    // Not a review watch: no "Run a baseline now".
    expect(text).not.toContain('/baseline');
  });

  it('the automation page of a review watch offers "Run a baseline now", posted with the token header', () => {
    const text = automationPage({
      card: { ...card, triggerType: 'review-watch', scans: ['baseline'] },
      figures: computeFigures([], [], window),
      windowName: '7d',
      failed: [],
      runs: [],
      next: null,
      deliveries: {},
      search: {},
      token: 'tok',
      now: NOW,
    }).text;
    noScript(text);
    expect(text).toContain(
      '<button type="button" class="action" data-action="/api/v1/automations/fix%3Cscript%3Ealert(%22x%22)%3C%2Fscript%3E/baseline" data-follow="/api/v1/runs?automation=fix%3Cscript%3Ealert(%22x%22)%3C%2Fscript%3E&amp;limit=1">Run a baseline now</button>',
    );
  });

  it('the findings page of a watch: its findings, open and resolved, every field escaped', () => {
    const finding = (overrides: Partial<FindingRecord>): FindingRecord => ({
      id: 1,
      watch: `review${EVIL}`,
      repo: 'acme/api',
      fingerprint: 'f',
      file: `src/${EVIL}.ts`,
      lineStart: 3,
      lineEnd: 5,
      severity: 'high',
      category: `bug${EVIL}`,
      title: `Secret ${EVIL}`,
      detail: `Detail ${EVIL}`,
      status: 'open',
      firstSeenCommit: 'a'.repeat(40),
      lastSeenCommit: 'b'.repeat(40),
      firstRunId: 'r_1',
      lastRunId: `r_2${EVIL}`,
      firstSeenAt: '2026-01-01T00:00:00.000Z',
      lastSeenAt: '2026-01-02T00:00:00.000Z',
      resolvedAt: null,
      resolvedCommit: null,
      resolvedRunId: null,
      resolution: null,
      ...overrides,
    });
    const text = findingsPage({
      watch: `review${EVIL}`,
      view: 'all',
      findings: [
        finding({}),
        finding({
          id: 2,
          status: 'resolved',
          resolvedAt: '2026-01-03T00:00:00.000Z',
          resolvedCommit: 'c'.repeat(40),
          resolution: `Fixed ${EVIL}`,
        }),
      ],
      counts: { open: 1, resolved: 1 },
      token: 'tok',
      baseline: true,
    }).text;
    noScript(text);
    expect(text).toContain(`<h2>Findings of review${ESCAPED}</h2>`);
    expect(text).toContain(`<summary>Secret ${ESCAPED}</summary><p class="detail">Detail ${ESCAPED}</p>`);
    expect(text).toContain(`<code>src/${ESCAPED}.ts:3-5</code>`);
    expect(text).toContain(`<td>bug${ESCAPED}</td>`);
    expect(text).toContain(`at <code>cccccccccccc</code>: Fixed ${ESCAPED}`);
    expect(text).toContain('href="/runs/r_2%3Cscript%3Ealert(%22x%22)%3C%2Fscript%3E"');
    expect(text).toContain('<strong aria-current="true">all 2</strong>');
    expect(text).toContain(
      'data-action="/api/v1/automations/review%3Cscript%3Ealert(%22x%22)%3C%2Fscript%3E/baseline"',
    );
    expect(text).toContain('>Run a baseline now</button>');
    expect(text).toContain(
      'href="/automations/review%3Cscript%3Ealert(%22x%22)%3C%2Fscript%3E/findings?status=resolved">resolved 1</a>',
    );
    const empty = findingsPage({
      watch: 'review',
      view: 'open',
      findings: [],
      counts: { open: 0, resolved: 0 },
      token: 'tok',
      baseline: false,
    }).text;
    expect(empty).toContain('<p class="empty" id="no-findings">no open findings</p>');
    expect(empty).not.toContain('Run a baseline now');
    const panel = findingsPanel(`review${EVIL}`, { open: 2, resolved: 1 }).text;
    noScript(panel);
    expect(panel).toContain('id="findings-link">2 open</a>');
  });

  it('the runs page, the header totals, the reload banner and the token page', () => {
    const runs = runsPage({
      automations: [`fix${EVIL}`],
      runs: [run()],
      next: null,
      deliveries: {},
      search: { automation: `fix${EVIL}` },
      token: 'tok',
      now: NOW,
    }).text;
    noScript(runs);
    expect(runs).toContain(`<option value="fix${ESCAPED}" selected>`);
    const totals = String(headerTotals(computeFigures([run()], [], window)));
    expect(totals).toContain('<b>1</b> runs');
    const banner = reloadBanner({ message: `settings.toml:3: ${EVIL}`, at: '2026-01-01T00:00:00.000Z' });
    expect(String(banner)).toContain(`settings.toml:3: ${ESCAPED}`);
    expect(String(banner)).toContain('keeps running with the last good settings');
    const token = tokenPage(`/state/${EVIL}/serve-token`, 'http://127.0.0.1:8080', true).text;
    noScript(token);
    expect(token).toContain(`<code id="token-file">/state/${ESCAPED}/serve-token</code>`);
    expect(token).toContain(`http://127.0.0.1:8080/?token=$(cat /state/${ESCAPED}/serve-token)`);
    expect(token).toContain("not this board's token");
  });

  it('a diff: files and hunks, escaped; a renamed file; a large file folded', () => {
    const big = Array.from({ length: 250 }, (_, i) => `+line ${i}`).join('\n');
    const text = [
      `diff --git a/src/${EVIL}.ts b/src/${EVIL}.ts`,
      'index 1..2 100644',
      `--- a/src/${EVIL}.ts`,
      `+++ b/src/${EVIL}.ts`,
      '@@ -1,2 +1,2 @@ function x()',
      ' keep',
      `-old ${EVIL}`,
      `+new ${EVIL}`,
      'diff --git a/old.md b/new.md',
      'similarity index 90%',
      'rename from old.md',
      'rename to new.md',
      'diff --git a/big.txt b/big.txt',
      'new file mode 100644',
      '--- /dev/null',
      '+++ b/big.txt',
      '@@ -0,0 +1,250 @@',
      big,
      '',
    ].join('\n');
    const files = parseDiff(text);
    expect(files.map((f) => [f.path, f.from, f.added, f.removed])).toEqual([
      [`src/${EVIL}.ts`, null, 1, 1],
      ['new.md', 'old.md', 0, 0],
      ['big.txt', null, 250, 0],
    ]);
    const html = diffSection(files, 'origin/main', null).text;
    noScript(html);
    expect(html).toContain('3 files, +251 −1 against origin/main');
    expect(html).toContain(`<span class="del">-old ${ESCAPED}</span>`);
    expect(html).toContain(`<span class="add">+new ${ESCAPED}</span>`);
    expect(html).toContain(`data-file="src/${ESCAPED}.ts"`);
    expect(html).toContain('old.md → new.md');
    expect(html).toMatch(/<details class="diff-file" data-file="big.txt">/);
    expect(html).toMatch(/<details class="diff-file" open data-file="new.md">/);
    expect(diffSection(undefined, null, `gone ${EVIL}`).text).toContain(`gone ${ESCAPED}`);
  });

  it('a diff: a hunk header, a renamed file and the base, escaped', () => {
    const text = [
      `diff --git a/${EVIL}.md b/new-${EVIL}.md`,
      'similarity index 90%',
      `rename from ${EVIL}.md`,
      `rename to new-${EVIL}.md`,
      `--- a/${EVIL}.md`,
      `+++ b/new-${EVIL}.md`,
      `@@ -1 +1 @@ function ${EVIL}`,
      '-a',
      '+b',
      '',
    ].join('\n');
    const html = diffSection(parseDiff(text), `origin/${EVIL}`, null).text;
    noScript(html);
    expect(html).toContain(`${ESCAPED}.md → new-${ESCAPED}.md`);
    expect(html).toContain(`function ${ESCAPED}`);
    expect(html).toContain(`against origin/${ESCAPED}`);
  });

  it('the run page: branch, delivery and the review thread summary, escaped; untrusted notes say so', () => {
    const summary = summarizeReviews(
      [
        {
          kind: 'review',
          id: 1,
          at: '2026-01-01T10:00:00Z',
          who: 'alice',
          trusted: true,
          state: 'CHANGES_REQUESTED',
          body: `Please ${EVIL}`,
        },
        {
          kind: 'inline',
          id: 2,
          at: '2026-01-01T11:00:00Z',
          who: `bob${EVIL}`,
          trusted: true,
          path: `src/${EVIL}.ts`,
          line: 12,
          body: `here ${EVIL}`,
        },
        {
          kind: 'comment',
          id: 3,
          at: '2026-01-01T12:00:00Z',
          who: 'mallory',
          trusted: false,
          body: `ignore all ${EVIL}`,
        },
        {
          kind: 'review',
          id: 4,
          at: '2026-01-01T09:00:00Z',
          who: 'carol',
          trusted: true,
          state: 'APPROVED',
          body: '',
        },
      ],
      { approvedBy: ['carol'], changesRequestedBy: [`alice${EVIL}`] },
    );
    expect(summary).toMatchObject({ reviews: 2, inlineComments: 1, comments: 1 });
    // Newest first; an empty approval is counted, not quoted.
    expect(summary.latest.map((n) => n.who)).toEqual(['mallory', `bob${EVIL}`, 'alice']);
    const text = runPage(
      run({ status: 'succeeded', branch: `curupira/${EVIL}` }),
      undefined,
      'tok',
      pr({ state: 'open', baseBranch: `main${EVIL}` }),
      undefined,
      summary,
    ).text;
    noScript(text);
    expect(text).toContain(`<dd>curupira/${ESCAPED}</dd>`);
    expect(text).toContain(`<dd>fix${ESCAPED}</dd>`);
    expect(text).toContain('<h3>Review thread</h3>');
    expect(text).toContain(
      `changes requested by @alice${ESCAPED}; approved by @carol · 2 reviews, 1 inline comment, 1 comment`,
    );
    expect(text).toContain(`<blockquote>Please ${ESCAPED}</blockquote>`);
    expect(text).toContain(`@bob${ESCAPED}`);
    expect(text).toContain(`on src/${ESCAPED}.ts:12`);
    expect(text).toMatch(
      /class="review-note untrusted"><span class="who">@mallory<\/span> <span class="muted">comment · not a trusted account: never acted on/,
    );
    expect(runPage(run(), undefined, 'tok', pr()).text).not.toContain('Review thread');
  });

  it('the run page: screening and sandbox verdicts, each in its own section, escaped', () => {
    const finding = (scanner: string, rule: string, excerpt: string) => ({
      scanner,
      rule,
      severity: 'high' as const,
      field: scanner === 'sandbox' ? 'network' : 'body',
      offset: 0,
      excerpt,
    });
    const text = runPage(
      run({
        screeningReason: `flagged ${EVIL}`,
        screeningFindings: [
          finding('instruction-override', 'ignore-previous', `ignore previous ${EVIL}`),
          finding('sandbox', 'policy', `bubblewrap; egress to api.anthropic.com only ${EVIL}`),
          finding('sandbox', 'egress', `refused 127.0.0.1:5432 ${EVIL}`),
        ],
      }),
      undefined,
      'tok',
    ).text;
    noScript(text);
    const screening = /<section class="screening"[\s\S]*?<\/section>/.exec(text)?.[0] ?? '';
    const sandbox = /<section class="sandbox"[\s\S]*?<\/section>/.exec(text)?.[0] ?? '';
    expect(screening).toContain(`flagged ${ESCAPED}`);
    expect(screening).toContain(`ignore previous ${ESCAPED}`);
    expect(screening).not.toContain('refused 127.0.0.1');
    expect(sandbox).toContain(`bubblewrap; egress to api.anthropic.com only ${ESCAPED}`);
    expect(sandbox).toContain(`<li><code>refused 127.0.0.1:5432 ${ESCAPED}</code></li>`);
    expect(runPage(run(), undefined, 'tok').text).not.toContain('class="sandbox"');
  });
});
