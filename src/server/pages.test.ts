import { describe, expect, it } from 'vitest';
import type { RunRecord } from '../core/types.js';
import type { PullRequestRecord } from '../store/types.js';
import type { BoardData } from './board-data.js';
import { escapeHtml, html, raw } from './html.js';
import { boardPage, runPage } from './pages.js';

const EVIL = '<script>alert("x")</script>';

function run(overrides: Partial<RunRecord> = {}): RunRecord {
  return {
    id: 'r_0000000001AAAAAAAA',
    automationId: 'fix',
    taskKey: 'k',
    repo: 'acme/api',
    taskType: 'github-issues',
    itemId: '7',
    itemKey: 'issue:7',
    itemTitle: `Title ${EVIL}`,
    itemUrl: 'https://github.com/acme/api/issues/7',
    status: 'failed',
    reason: `reason ${EVIL}`,
    createdAt: '2026-01-01T00:00:00.000Z',
    startedAt: '2026-01-01T00:00:01.000Z',
    finishedAt: '2026-01-01T00:00:09.000Z',
    profile: 'main',
    provider: 'claude',
    sessionId: 's',
    resumed: false,
    exitCode: 1,
    signal: null,
    transcriptPath: null,
    branch: `curupira/${EVIL}`,
    worktreePath: `/w/${EVIL}`,
    worktreeKept: true,
    commits: 1,
    usage: null,
    prompt: `prompt ${EVIL}`,
    scheduledFor: null,
    upstreamRunId: null,
    agentPid: null,
    agentOutcome: null,
    screeningFindings: null,
    screeningReason: null,
    screenedDigest: null,
    ...overrides,
  };
}

function board(runs: RunRecord[]): BoardData {
  return {
    now: '2026-01-01T00:00:00.000Z',
    summary: `0 running ${EVIL}`,
    attentionCount: runs.length,
    automations: [
      {
        id: 'fix',
        triggerType: 'github-issues',
        paused: false,
        explain: [{ label: 'search query', value: `label:${EVIL}` }],
        nextFireAt: null,
        nextPollAt: null,
        lastPollAt: '2026-01-01T00:00:00.000Z',
        lastFound: 0,
        waiting: 0,
        matching: 3,
        lastError: `boom ${EVIL}`,
        disabled: false,
        baseline: null,
        pausedReason: `paused automatically ${EVIL}`,
        parkedUntil: '2026-01-01T01:00:00.000Z',
        retries: [`#1 retry 2/3 at 00:00:10 ${EVIL}`],
        scans: [],
        budget: {
          spentTodayUsd: 1.5,
          limitPerDayUsd: 2,
          state: 'parked',
          parkedUntil: '2026-01-02T00:00:00.000Z',
          reason: `budget reached ${EVIL}`,
        },
      },
    ],
    inProgress: [],
    attention: runs,
    done: [],
    engine: undefined,
  };
}

function noScript(text: string): void {
  // The page's own script tags load /assets/…; nothing else may open one.
  expect(text.replace(/<script src="\/assets\/[a-z]+\.js" defer><\/script>/g, '')).not.toMatch(/<script/i);
}

describe('html', () => {
  it('escapes interpolated text and nested arrays, and keeps html values as they are', () => {
    expect(escapeHtml(`&<>"'`)).toBe('&amp;&lt;&gt;&quot;&#39;');
    const inner = html`<b>${EVIL}</b>`;
    const out = html`<p>${inner}${[EVIL, raw('<i>ok</i>')]}${null}${undefined}${false}${3}</p>`.text;
    expect(out).toBe(
      '<p><b>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;</b>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;<i>ok</i>3</p>',
    );
  });
});

describe('the Scheduled column\'s "is this even polling?" line', () => {
  const card = (overrides: Partial<BoardData['automations'][number]>) => {
    const data = board([]);
    data.automations = [{ ...data.automations[0]!, lastError: null, ...overrides }];
    return boardPage(data, 'tok').text;
  };
  const line = (text: string): string =>
    /<div class="detail[^"]*">(last check|not polled|<span)[^\n]*<\/div>/.exec(text)?.[0] ?? '';

  it('last check, open matching items and whether the baseline is set', () => {
    expect(line(card({ baseline: { set: true, at: '2026-01-01T00:00:00.000Z' } }))).toBe(
      '<div class="detail">last check <time datetime="2026-01-01T00:00:00.000Z">2026-01-01 00:00 UTC</time> · 3 open matching · 0 new · baseline set <time datetime="2026-01-01T00:00:00.000Z">2026-01-01 00:00 UTC</time></div>',
    );
    expect(line(card({ lastPollAt: null, matching: null, baseline: { set: false, at: null } }))).toBe(
      '<div class="detail">not polled yet · baseline not set yet</div>',
    );
    // Without item memory there is no baseline to speak of.
    expect(line(card({}))).not.toContain('baseline');
  });

  it('the last poll error, with the baseline beside it', () => {
    expect(line(card({ lastError: 'HTTP 502', baseline: { set: true, at: null } }))).toBe(
      '<div class="detail error"><span class="error">last poll failed: HTTP 502</span> · baseline set</div>',
    );
  });

  it('an automation disabled in the settings file shows paused, says why, and offers Resume', () => {
    const text = card({ paused: true, disabled: true });
    expect(text).toContain('fix</a> <span class="tag">paused</span>');
    expect(text).toContain('disabled in the settings file (enabled = false)');
    expect(text).toContain('data-action="/api/v1/automations/fix/resume"');
  });
});

describe('board and run pages escape what GitHub and agents wrote', () => {
  it('an issue title, a reason, a branch, a worktree path and a poll error on the board', () => {
    const text = boardPage(board([run()]), 'tok').text;
    noScript(text);
    expect(text).toContain('Title &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;');
    expect(text).toContain(
      'branch <span class="branch" title="curupira/&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;">',
    );
    expect(text).toContain('last poll failed: boom &lt;script&gt;');
    expect(text).toContain('data-action="/api/v1/runs/r_0000000001AAAAAAAA/dismiss"');
    // Cost: the run's (unknown here: –) and the automation's day, parked by its budget.
    expect(text).toContain('<span class="cost" title="cost">–</span>');
    expect(text).toContain('cost today $1.50 of $2.00');
    expect(text).toContain('budget reached &lt;script&gt;');
    expect(text).toContain('fix</a> <span class="tag">parked</span>');
  });

  it('the run page shows the cost and the model, or – when unknown', () => {
    expect(runPage(run({ costUsd: 2.5, model: 'gpt-5-codex' }), undefined, 'tok').text).toContain(
      '$2.50 (gpt-5-codex)',
    );
    expect(runPage(run(), undefined, 'tok').text).toMatch(/cost<\/dt>\s*<dd>–/);
  });

  it('the run page lists the item’s other runs (a retry and the cancelled run before it), linked and escaped', () => {
    const cancelled = run({
      id: 'r_0000000001CANCEL00',
      status: 'cancelled',
      reason: `cancelled by an operator ${EVIL}`,
      createdAt: '2026-01-01T00:00:00.000Z',
    });
    const retry = run({
      id: 'r_0000000002RETRY000',
      status: 'succeeded',
      createdAt: '2026-01-01T00:05:00.000Z',
    });
    const text = runPage(retry, undefined, 'tok', undefined, undefined, undefined, {
      attempts: [retry, cancelled],
    }).text;
    noScript(text);
    expect(text).toContain('<h3>Other runs of this item</h3>');
    expect(text).toContain('<a href="/runs/r_0000000001CANCEL00">r_0000000001CANCEL00</a>');
    expect(text).toContain('2026-01-01 00:00:00 UTC');
    expect(text).toContain('cancelled by an operator &lt;script&gt;');
    // The run itself is not among "other runs"; a run alone has no such section.
    expect(text).not.toContain('href="/runs/r_0000000002RETRY000"');
    expect(
      runPage(retry, undefined, 'tok', undefined, undefined, undefined, { attempts: [retry] }).text,
    ).not.toContain('Other runs of this item');
  });

  it('the run page says which code the agent saw: a pull request’s head and base, or the base it was cut from', () => {
    const head = 'a'.repeat(40);
    const base = 'b'.repeat(40);
    const prRun = run({ taskType: 'github-pull-requests', itemId: '7', headCommit: head, baseCommit: base });
    expect(runPage(prRun, undefined, 'tok').text).toMatch(
      /code<\/dt>\s*<dd>pull request #7’s head aaaaaaaaaaaa \(base bbbbbbbbbbbb\)/,
    );
    expect(runPage(run({ baseCommit: base }), undefined, 'tok').text).toMatch(
      /code<\/dt>\s*<dd>a new branch from bbbbbbbbbbbb/,
    );
  });

  it('the run page shows the delivery: pull request, its follow-up gate, all escaped; only http(s) links', () => {
    const delivery: PullRequestRecord = {
      runId: 'r1',
      automationId: 'fix',
      taskKey: 'k',
      repo: 'acme/api',
      delivery: 'pr',
      headBranch: `curupira/${EVIL}`,
      headSha: 'a'.repeat(40),
      baseBranch: 'main',
      number: 7,
      url: 'https://github.com/acme/api/pull/7',
      adopted: false,
      state: 'open',
      detail: null,
      since: '2026-12-01T10:00:00.000Z',
      gate: 'ci_failing',
      gateSince: '2026-12-01T10:05:00.000Z',
      gateDetail: `failing on aaaaaaa: ${EVIL}`,
      createdAt: '2026-12-01T10:00:00.000Z',
      updatedAt: '2026-12-01T10:05:00.000Z',
    };
    const text = runPage(run(), undefined, 'tok', delivery).text;
    noScript(text);
    expect(text).toContain('<a href="https://github.com/acme/api/pull/7" rel="noreferrer">#7</a> open since');
    expect(text).toContain('ci failing since 2026-12-01T10:05:00.000Z: failing on aaaaaaa: &lt;script&gt;');
    const hostile = runPage(run(), undefined, 'tok', { ...delivery, url: 'javascript:alert(1)' }).text;
    expect(hostile).not.toContain('javascript:');
    expect(hostile).toMatch(/pull request<\/dt><dd>#7 open since/);
  });

  it('a transcript: narration, tool calls and results (long ones collapsed), errors', () => {
    const long = `${'line\n'.repeat(100)}${EVIL}`;
    const text = runPage(
      run(),
      [
        { kind: 'assistant', text: `narration ${EVIL}` },
        { kind: 'tool_call', name: `bash ${EVIL}`, input: 'ls' },
        { kind: 'tool_result', output: long, isError: false },
        { kind: 'error', message: EVIL },
        { kind: 'done', isError: true, result: EVIL },
      ],
      'tok',
    ).text;
    noScript(text);
    expect(text).toContain('narration &lt;script&gt;');
    expect(text).toContain('<details class="tool-call" open><summary>tool call: <b>bash &lt;script&gt;');
    expect(text).toMatch(/<details class="tool-result"><summary>tool result \(\d+ characters\)/);
    expect(text).toContain('prompt &lt;script&gt;');
    expect(text).toContain('curupira/&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;');
  });
});

describe('a run of a source outside GitHub, across repositories', () => {
  it('shows the source and every repository, worktree and pull request, escaped; a hostile address is no link', () => {
    const delivery = (key: string, url: string): PullRequestRecord => ({
      runId: key,
      taskKey: 'k',
      automationId: 'fix',
      repo: 'acme/web',
      delivery: 'pr',
      headBranch: 'curupira/fix/eng-7',
      headSha: 'b'.repeat(40),
      baseBranch: 'main',
      number: 9,
      url,
      adopted: false,
      state: 'open',
      detail: null,
      since: '2026-12-01T10:00:00.000Z',
      gate: null,
      gateSince: null,
      gateDetail: null,
      createdAt: '2026-12-01T10:00:00.000Z',
      updatedAt: '2026-12-01T10:00:00.000Z',
    });
    const page = (url: string) =>
      runPage(
        run({ taskType: 'linear', itemId: 'ENG-7', itemUrl: 'https://linear.app/acme/issue/ENG-7' }),
        undefined,
        'tok',
        undefined,
        undefined,
        undefined,
        {
          source: `Linear team ENG, project "${EVIL}"`,
          repositories: [
            { alias: 'api', repo: 'acme/api', primary: true, worktreePath: `/w/${EVIL}`, delivery: null },
            {
              alias: `web${EVIL}`,
              repo: `acme/web${EVIL}`,
              primary: false,
              worktreePath: `/w/web/${EVIL}`,
              delivery: delivery('r~web', url),
            },
          ],
        },
      ).text;
    const text = page('https://github.com/acme/web/pull/9');
    noScript(text);
    expect(text).toContain('<dt>source</dt><dd>Linear team ENG, project &quot;&lt;script&gt;');
    expect(text).toContain('<h3>Repositories (2)</h3>');
    expect(text).toContain(
      '<td>api <span class="muted">(primary)</span></td><td>acme/api</td><td><code>/w/&lt;script&gt;',
    );
    expect(text).toContain('none (no commit, or not delivered yet)');
    expect(text).toContain('<a href="https://github.com/acme/web/pull/9" rel="noreferrer">#9</a> open since');
    const hostile = page('javascript:alert(1)');
    expect(hostile).not.toContain('javascript:');
    expect(hostile).toMatch(/<td>#9 open since/);
  });
});

describe('items without a GitHub number, and a live run', () => {
  const fired = run({
    taskType: 'cron',
    repo: 'acme/shop',
    itemId: '1796266800',
    itemKey: 'cron:1796266800',
    itemTitle: 'nightly',
    itemUrl: 'cron://nightly',
    scheduledFor: '2026-12-03T03:00:00.000Z',
  });

  it('names a schedule fire and a chained run readably, with no dead cron:// link', () => {
    const page = runPage(fired, undefined, 'tok').text;
    expect(page).toMatch(/<dt>item<\/dt><dd>schedule fired 2026-12-03 03:00 UTC<\/dd>/);
    expect(page).not.toContain('cron://');
    expect(page).not.toContain('#1796266800');
    const card = boardPage(board([fired]), 'tok').text;
    expect(card).toContain('<span class="number">schedule fired 2026-12-03 03:00 UTC</span>');
    expect(card).not.toContain('#1796266800');
    const chained = run({ taskType: 'after', itemId: 'r_0000000009ZZZZZZZZ', itemUrl: 'cron://nightly' });
    expect(runPage(chained, undefined, 'tok').text).toMatch(
      /<dt>item<\/dt><dd>after run r_0000000009ZZZZZZZZ<\/dd>/,
    );
  });

  it('a running run’s worktree is in use, not removed', () => {
    const live = runPage(
      run({ status: 'running', finishedAt: null, worktreeKept: false }),
      undefined,
      'tok',
    ).text;
    expect(live).toMatch(/<dt>worktree<\/dt><dd>\/w\/.* \(in use\)<\/dd>/);
    expect(live).not.toContain('(removed)');
    const done = runPage(run({ status: 'succeeded', worktreeKept: false }), undefined, 'tok').text;
    expect(done).toContain('(removed)');
  });
});

describe('the live run page', () => {
  it('streams from the first event it did not render, so none shows twice', () => {
    const live = run({ status: 'running', finishedAt: null });
    const rendered = runPage(
      live,
      [
        { kind: 'session', sessionId: 's-1' },
        { kind: 'assistant', text: 'looking' },
      ],
      'tok',
    ).text;
    expect(rendered.match(/session s-1/g)).toHaveLength(1);
    expect(rendered).toContain('data-events="/api/v1/runs/r_0000000001AAAAAAAA/events?from=2"');
    expect(runPage(live, undefined, 'tok').text).toContain('/events?from=0"');
  });
});

describe('the pages’ scripts', () => {
  it('parse as JavaScript (an escape lost in a template string breaks every button)', async () => {
    const { Script } = await import('node:vm');
    const { BOARD_JS, FLEET_JS, RUN_JS } = await import('./assets.js');
    for (const script of [BOARD_JS, FLEET_JS, RUN_JS]) expect(() => new Script(script)).not.toThrow();
  });
});
