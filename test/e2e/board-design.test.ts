/// <reference lib="dom" />
/**
 * The board people keep open (issue 28), in chromium over a seeded history: status colours that
 * mean what they say, cards with the pull request and its gate, one Needs attention card per item,
 * the header's totals, the automation page's figures, filters and paging, the runs search, the
 * token page, light and dark, 390 px wide; actions with feedback and a link to the run they
 * caused; a failed settings reload as a banner. Every page passes axe-core with no serious or
 * critical violation. Screenshots go to test-artifacts/board/.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { RunStatus } from '../../src/core/types.js';
import type { DispatchRecord, FleetHost } from '../../src/fleet/types.js';
import { fleetPage } from '../../src/server/pages.js';
import type { Store } from '../../src/store/types.js';
import { seriousViolations } from '../helpers/axe.js';
import { createHarness, type Harness, issueAutomation, ROOT } from '../helpers/harness.js';
import { type Served, serveInProcess } from '../helpers/serve.js';

const CHROMIUM = '/usr/bin/chromium';
const ARTIFACTS = join(ROOT, 'test-artifacts', 'board');
const QUIET = '[settings.polling]\npoll_interval_seconds = 600';
const FAST = '[settings.polling]\npoll_interval_seconds = 0.3\ncron_poll_interval_seconds = 0.3';

let browser: BrowserContext | undefined;
let profile: string | undefined;
let h: Harness | undefined;
let served: Served | undefined;

beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is missing: \`npm test\` installs it (apt-get install chromium)`);
  mkdirSync(ARTIFACTS, { recursive: true });
  profile = mkdtempSync(join(tmpdir(), 'curupira-chromium-'));
  browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1400, height: 900 },
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-sync',
    ],
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

afterEach(async () => {
  await served?.stop();
  served = undefined;
  await h?.cleanup();
  h = undefined;
});

async function open(path: string): Promise<Page> {
  const page = await browser!.newPage();
  page.on('dialog', (dialog) => {
    throw new Error(`unexpected dialog: ${dialog.message()}`);
  });
  await page.goto(
    new URL(`${path}${path.includes('?') ? '&' : '?'}token=${served!.token}`, served!.url).href,
  );
  return page;
}

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

/** The page at 390 px: nothing wider than the screen, and a screenshot. */
async function mobile(page: Page, name: string): Promise<void> {
  await page.setViewportSize({ width: 390, height: 844 });
  expect(await page.evaluate(() => document.scrollingElement!.scrollWidth)).toBeLessThanOrEqual(390);
  await shot(page, name);
  await page.setViewportSize({ width: 1400, height: 900 });
}

interface Seed {
  item: string;
  title: string;
  status: RunStatus;
  profile: string;
  cost?: number;
  reason?: string;
  pr?: { number: number; merged?: boolean; gate?: 'ci_failing'; gateDetail?: string };
}

async function seed(store: Store, s: Seed): Promise<string> {
  const run = await store.createRun({
    automationId: 'fix',
    taskKey: `["fix","acme/api","github-issues","${s.item}"]`,
    repo: 'acme/api',
    taskType: 'github-issues',
    itemId: s.item,
    itemKey: `issue:${s.item}`,
    itemTitle: s.title,
    itemUrl: `https://github.com/acme/api/issues/${s.item}`,
    status: 'running',
    profile: s.profile,
    provider: 'claude',
  });
  const started = new Date(Date.now() - 5 * 60_000).toISOString();
  await store.updateRun(run.id, {
    status: s.status,
    startedAt: started,
    finishedAt: new Date().toISOString(),
    reason: s.reason ?? null,
    costUsd: s.cost ?? null,
    branch: `curupira/fix/github-issues-${s.item}-${s.title.toLowerCase().replace(/\W+/g, '-')}`,
  });
  if (s.pr) {
    await store.beginPullRequest({
      runId: run.id,
      automationId: 'fix',
      taskKey: run.taskKey,
      repo: 'acme/api',
      delivery: 'pr',
      headBranch: `curupira/fix/${s.item}`,
    });
    await store.updatePullRequest(run.id, {
      number: s.pr.number,
      url: `https://github.com/acme/api/pull/${s.pr.number}`,
      state: s.pr.merged ? 'merged' : 'open',
      ...(s.pr.gate ? { gate: s.pr.gate, gateDetail: s.pr.gateDetail ?? null } : {}),
    });
  }
  return run.id;
}

/** 60 runs of `fix`: a merged PR, a "no changes" success, an item that failed twice, an open PR with failing checks, 55 chores. */
async function seedHistory(store: Store): Promise<void> {
  for (let i = 0; i < 55; i += 1)
    await seed(store, { item: String(100 + i), title: `Chore ${i}`, status: 'succeeded', profile: 'alpha' });
  await seed(store, {
    item: '1',
    title: 'Speed up login',
    status: 'merged',
    profile: 'alpha',
    cost: 1,
    reason: 'merged: pull request #1 merged',
    pr: { number: 1, merged: true },
  });
  await seed(store, {
    item: '2',
    title: 'Tidy the README',
    status: 'succeeded',
    profile: 'alpha',
    cost: 0.5,
    reason: 'no changes: the agent finished without a commit or a changed file',
  });
  await seed(store, {
    item: '3',
    title: 'Fix the flaky export',
    status: 'failed',
    profile: 'beta',
    cost: 0.25,
    reason: 'claude exited with status 1: first try',
  });
  await seed(store, {
    item: '3',
    title: 'Fix the flaky export',
    status: 'failed',
    profile: 'beta',
    cost: 0.25,
    reason: 'claude exited with status 1: second try',
  });
  await seed(store, {
    item: '4',
    title: 'Add a dark theme',
    status: 'succeeded',
    profile: 'beta',
    cost: 0.5,
    pr: { number: 2, gate: 'ci_failing', gateDetail: 'build failed' },
  });
}

describe('the board, designed (issue 28)', () => {
  it('board, automation page, runs search and token page over a seeded history; light, dark and 390 px; no serious axe violation', async () => {
    h = await createHarness({
      settingsExtra: QUIET,
      issues: [],
      automation: issueAutomation('fix', { prompt: 'Fix ${issue_title}' }),
    });
    served = await serveInProcess(h, { listen: true });
    await seedHistory(served.store);
    const page = await open('/');
    const done = page.locator('section[data-column="done"]');
    // A merged run and a "no changes" run are successes, in the success colour, with no Retry.
    const merged = done.locator('article.run[data-status="merged"]');
    await merged.waitFor();
    expect(await merged.locator('.pill.status').getAttribute('data-outcome')).toBe('success');
    const colours = await merged.locator('.pill.status').evaluate((el) => {
      const probe = document.createElement('span');
      probe.style.color = 'var(--success)';
      document.body.appendChild(probe);
      const want = getComputedStyle(probe).color;
      probe.remove();
      return { pill: getComputedStyle(el).color, want };
    });
    expect(colours.pill).toBe(colours.want);
    const noChanges = done.locator('article.run', { hasText: 'Tidy the README' });
    expect(await noChanges.getAttribute('class')).toContain('outcome-success');
    expect(await done.locator('article.outcome-success button', { hasText: 'Retry' }).count()).toBe(0);
    // The card names the item and number, the agent, duration and cost; the PR with its gate.
    const dark = done.locator('article.run', { hasText: 'Add a dark theme' });
    expect(await dark.locator('h3').textContent()).toBe('Add a dark theme acme/api#4');
    expect(await dark.locator('.meta').textContent()).toMatch(/beta \(claude\) · 5m · \$0\.50/);
    expect(await dark.locator('.gate').textContent()).toBe('PR #2 open · checks failing build failed');
    // One Needs attention card for the item that failed twice, the first attempt folded inside.
    const attention = page.locator('section[data-column="attention"] article.run');
    expect(await attention.count()).toBe(1);
    expect(await attention.locator('.attempts summary').textContent()).toBe('1 earlier attempt');
    expect(await page.locator('#attention').textContent()).toBe('1 need attention');
    // The header's fleet-wide totals.
    expect((await page.locator('#totals').textContent())!.replace(/\s+/g, ' ').trim()).toBe(
      '60 runs 1/2 PRs merged merge rate 50 % $2.50 spent $2.50 per merged PR',
    );
    expect(await seriousViolations(page)).toEqual([]);
    await shot(page, '20-board');
    await page.emulateMedia({ colorScheme: 'dark' });
    expect(await seriousViolations(page)).toEqual([]);
    await shot(page, '21-board-dark');
    await page.emulateMedia({ colorScheme: 'light' });
    await mobile(page, '22-board-390');

    // The automation page: trigger, figures (total and per profile), runs with filters and paging.
    await page.locator('article.automation h3 a', { hasText: 'fix' }).click();
    await page.waitForURL(/\/automations\/fix$/);
    const figure = (key: string) => page.locator(`#figures [data-figure="${key}"] .value`).textContent();
    expect(await figure('runs')).toBe('60');
    expect(await figure('opened')).toBe('2');
    expect(await figure('merged')).toBe('1');
    expect(await figure('merge-rate')).toBe('50 %');
    expect(await figure('cost')).toBe('$2.50');
    expect(await figure('cost-per-merged')).toBe('$2.50');
    expect(await figure('cost-per-run')).toBe('$0.0417');
    expect(await page.locator('[data-outcome-count="success"]').textContent()).toBe('success 58');
    expect(await page.locator('[data-outcome-count="failure"]').textContent()).toBe('failure 2');
    expect(
      await page
        .locator('table.figures-by-profile tbody tr')
        .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-profile'))),
    ).toEqual(['alpha', 'beta']);
    expect(await page.locator('#polling').textContent()).toMatch(/^polling · next poll|^not polled yet/);
    expect(await page.locator('#runs tbody tr').count()).toBe(50);
    expect(await seriousViolations(page)).toEqual([]);
    await shot(page, '23-automation');
    await mobile(page, '24-automation-390');
    await page.locator('#older').click();
    await page.waitForURL(/before=/);
    expect(await page.locator('#runs tbody tr').count()).toBe(10);
    await page.locator('input[name="q"]').fill('LOGIN');
    await page.locator('form.filters button[type="submit"]').click();
    await page.waitForURL(/q=LOGIN/);
    expect(await page.locator('#runs tbody tr').count()).toBe(1);

    // The runs search across automations: status and text.
    await page.goto(new URL('/runs?status=failed', served.url).href);
    expect(await page.locator('#runs tbody tr').count()).toBe(2);
    await page.goto(new URL('/runs?q=chore%2012', served.url).href);
    expect(await page.locator('#runs tbody tr td a', { hasText: 'Chore 12' }).count()).toBe(1);
    expect(await seriousViolations(page)).toEqual([]);
    await shot(page, '25-runs-search');

    // The fleet page: without a fleet it says why; with one (its page as a fleet's poller renders
    // it, served from this origin so its styles load) it lists hosts and dispatches.
    await page.goto(new URL('/fleet', served.url).href);
    expect(await page.locator('main, body').first().textContent()).toContain('no fleet');
    expect(await seriousViolations(page)).toEqual([]);
    const now = Date.now();
    const host = (name: string, health: FleetHost['health'], beat: number): FleetHost => ({
      name,
      role: name === 'p1' ? 'poller' : 'worker',
      pid: 4242,
      instance: `i-${name}`,
      version: '0.9.0',
      startedAt: new Date(now - 3_600_000).toISOString(),
      heartbeatAt: new Date(now - beat).toISOString(),
      capacity: 4,
      load: 1,
      checkouts: ['acme/api'],
      polling: name === 'p1',
      capabilities: null,
      machine: null,
      stoppedAt: null,
      health,
    });
    const running: DispatchRecord = {
      id: '0b6f3c1e-0000-4000-8000-000000000001',
      taskKey: 'fix:issue:7',
      automationId: 'fix',
      repo: 'acme/api',
      host: 'w1',
      state: 'running',
      runId: 'r_0000000001AAAAAAAA',
      enqueuedAt: new Date(now - 120_000).toISOString(),
      startedAt: new Date(now - 119_000).toISOString(),
      finishedAt: null,
      settledAt: null,
      detail: null,
      previousId: null,
      refused: false,
    };
    const html = fleetPage(
      [host('p1', 'healthy', 2_000), host('w1', 'healthy', 3_000), host('w2', 'late', 65_000)],
      [running],
      served.token,
      now,
    ).text;
    await page.route('**/fleet-sample', (route) =>
      route.fulfill({ status: 200, contentType: 'text/html; charset=utf-8', body: html }),
    );
    await page.goto(new URL('/fleet-sample', served.url).href);
    expect(await page.locator('tr.host').count()).toBe(3);
    expect(await seriousViolations(page)).toEqual([]);
    await shot(page, '27-fleet');

    // The token page: styled, says where the token file is and how to open the board with it.
    await browser!.clearCookies();
    const stranger = await browser!.newPage();
    const response = await stranger.goto(served.url!);
    expect(response!.status()).toBe(401);
    expect(await stranger.locator('#token-file').textContent()).toMatch(/\/serve-token$/);
    // Styled: its stylesheet is served without the token (it was not, and the page showed bare).
    expect(await stranger.locator('main.message').evaluate((main) => getComputedStyle(main).maxWidth)).toBe(
      '640px',
    );
    expect(await stranger.locator('#open-with').textContent()).toMatch(
      /\/\?token=\$\(cat .*\/serve-token\)$/,
    );
    expect(await seriousViolations(stranger)).toEqual([]);
    await shot(stranger, '26-token-page');
  }, 120_000);

  it('Retry shows its result and links to the run it caused; a failed settings reload is a banner until fixed', async () => {
    h = await createHarness({
      settingsExtra: FAST,
      issues: [],
      automation: issueAutomation('fix', { prompt: 'Fix ${issue_title}' }),
    });
    served = await serveInProcess(h, { listen: true, reload: true });
    const page = await open('/');
    h.world.addIssue('acme/api', {
      title: 'Broken [[fake:fail]]',
      body: '',
      labels: ['agent-ready'],
      author: 'octocat',
    });
    const failed = page.locator('section[data-column="attention"] article.run');
    await failed.first().waitFor({ timeout: 15_000 });
    const first = (await failed.first().getAttribute('data-run'))!;
    await failed.first().locator('button', { hasText: 'Retry' }).click();
    const caused = page.locator('#feedback .notice a.caused-run');
    await caused.waitFor({ timeout: 15_000 });
    expect(await page.locator('#feedback .notice').first().textContent()).toMatch(/^Retry: /);
    const href = (await caused.getAttribute('href'))!;
    expect(href).toMatch(/^\/runs\/r_/);
    expect(href).not.toBe(`/runs/${first}`);
    expect(await served.store.getRun(href.slice('/runs/'.length))).toMatchObject({
      itemTitle: 'Broken [[fake:fail]]',
    });
    await shot(page, '27-retry-feedback');
    // A settings file that does not parse: the board says so, with the error, until it is fixed.
    const good = h.settings();
    h.writeSettings('[settings\nthis is not toml');
    const banner = page.locator('#reload-error');
    await banner.waitFor({ timeout: 10_000 });
    expect(await banner.textContent()).toMatch(/The settings file did not reload/);
    expect(await seriousViolations(page)).toEqual([]);
    await shot(page, '28-reload-banner');
    h.configure({});
    await banner.waitFor({ state: 'detached', timeout: 10_000 });
    expect(good.automations.map((a) => a.id)).toEqual(['fix']);
  }, 120_000);
});
