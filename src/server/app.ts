/** The HTTP application of `curupira serve`: auth, the JSON API, the board pages and their assets. */

import { existsSync, readFileSync } from 'node:fs';
import { type Context, Hono } from 'hono';
import { loadDrivers } from '../agents/registry.js';
import { transcriptEvents } from '../agents/transcript.js';
import { errorMessage } from '../core/errors.js';
import { isTerminal, type RunRecord } from '../core/types.js';
import { shownDelivery } from '../delivery/repositories.js';
import { parseReviewSummary, REVIEW_SUMMARY_MARK } from '../delivery/review-summary.js';
import { stateDir } from '../engine/paths.js';
import { redact } from '../log.js';
import type { PullRequestRecord } from '../store/types.js';
import { branchDiff, commitDiff } from '../workspace/diff.js';
import { apiRoutes, json } from './api.js';
import { ACTIONS_JS, BOARD_CSS, BOARD_JS, FLEET_JS, ICON_SVG, RUN_JS } from './assets.js';
import { authenticated, tokenLogin } from './auth.js';
import { automationPageRoutes } from './automation-page.js';
import { boardData } from './board-data.js';
import { diffSection, parseDiff } from './diff-view.js';
import { ApiError, HTTP_STATUS, NO_FLEET_MESSAGE, throwWhenUnreachable } from './errors.js';
import { findingsPageRoutes } from './findings-page.js';
import type { Html } from './html.js';
import {
  boardLive,
  boardPage,
  type FleetGlance,
  fleetLive,
  fleetPage,
  messagePage,
  runPage,
} from './pages.js';
import { runSourceAndRepositories } from './run-view.js';
import type { ServerContext } from './server-context.js';
import { tokenPath } from './token.js';
import { tokenPage } from './token-page.js';
import { webhookRoutes } from './webhooks.js';

/** How long one rendering of the live board serves the clients that ask for the same change. */
const LIVE_CACHE_MS = 1000;

function wantsHtml(c: Context): boolean {
  return !c.req.path.startsWith('/api/');
}

/** Every string in a value, redacted (before it is serialized: a JSON escape is never cut). */
function redactValues(value: unknown): unknown {
  if (typeof value === 'string') return redact(value);
  if (Array.isArray(value)) return value.map(redactValues);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactValues(v)]));
  return value;
}

function errorResponse(
  c: Context,
  code: ApiError['code'],
  message: string,
  extra?: Readonly<Record<string, unknown>>,
): Response {
  const status = HTTP_STATUS[code];
  if (wantsHtml(c)) {
    return c.html(
      messagePage(code === 'unauthorized' ? 'Token needed' : 'Not available', message).text,
      status,
    );
  }
  const more = extra ? (redactValues(extra) as Record<string, unknown>) : {};
  return c.body(JSON.stringify({ error: { code, message: redact(message) }, ...more }), status, {
    'content-type': 'application/json; charset=utf-8',
  });
}

/** Where the token is kept (the settings' state folder), or null when the settings cannot say. */
function tokenFileOf(ctx: ServerContext): string | null {
  try {
    return tokenPath(stateDir(ctx.engine.currentSettings()));
  } catch {
    return null;
  }
}

function sendHtml(c: Context, page: Html): Response {
  return c.html(redact(page.text), 200, { 'cache-control': 'no-store' });
}

function asset(c: Context, body: string, type: string): Response {
  return c.body(body, 200, { 'content-type': type, 'cache-control': 'no-cache' });
}

/** A run's transcript: the file on this machine, else (a fleet) the copy its worker shared. */
async function transcriptOf(
  ctx: ServerContext,
  run: { id: string; provider: string | null; transcriptPath: string | null },
) {
  if (!run.provider) return undefined;
  if (run.transcriptPath && existsSync(run.transcriptPath))
    return transcriptEvents(run.provider, readFileSync(run.transcriptPath, 'utf8'));
  const shared = await ctx.fleet?.transcript(run.id).catch(() => undefined);
  return shared === undefined ? undefined : transcriptEvents(run.provider, shared);
}

/** The run page's diff: what the run's branch changed, from the checkout (or its kept worktree). */
async function runChanges(
  ctx: ServerContext,
  run: RunRecord,
  delivery: PullRequestRecord | undefined,
): Promise<Html> {
  if (!run.branch || !isTerminal(run.status))
    return diffSection(
      undefined,
      null,
      run.branch ? 'The diff shows once the run has finished.' : 'This run made no branch.',
    );
  const automation = ctx.engine.currentSettings().automations.find((a) => a.id === run.automationId);
  const cwd =
    run.worktreeKept && run.worktreePath && existsSync(run.worktreePath)
      ? run.worktreePath
      : automation?.repository.checkoutPath;
  if (!cwd || !existsSync(cwd))
    return diffSection(undefined, null, 'The repository checkout is not on this machine.');
  try {
    // Delivered, the local branch is gone but its pushed commit and the run's base commit remain.
    const diff =
      (await branchDiff(cwd, run.branch, delivery?.baseBranch ?? null)) ??
      (delivery?.headSha && run.baseCommit
        ? await commitDiff(cwd, run.baseCommit, delivery.headSha)
        : undefined);
    if (!diff) return diffSection(undefined, null, `The branch ${run.branch} is no longer in the checkout.`);
    return diffSection(parseDiff(diff.text), diff.base, null);
  } catch (error) {
    return diffSection(undefined, null, `The diff could not be read: ${errorMessage(error)}`);
  }
}

/** The board header's fleet badge: the hosts, `unavailable` when they cannot be read, nothing without a fleet. */
async function fleetGlance(ctx: ServerContext): Promise<FleetGlance | undefined> {
  if (!ctx.fleet) return undefined;
  const away = (): FleetGlance | undefined => {
    const since = ctx.fleet?.unreachableSince?.();
    return since === undefined ? undefined : { unreachableSince: since };
  };
  try {
    return away() ?? (await ctx.fleet.hosts());
  } catch {
    return away() ?? 'unavailable';
  }
}

async function fleetNow(ctx: ServerContext) {
  if (!ctx.fleet) throw new ApiError('no_fleet', NO_FLEET_MESSAGE);
  throwWhenUnreachable(ctx.fleet);
  const [hosts, dispatches, waiting] = await Promise.all([
    ctx.fleet.hosts(),
    ctx.fleet.liveDispatches(),
    ctx.fleet.waiting(),
  ]);
  return { hosts, dispatches, waiting, now: Date.now() };
}

function pageRoutes(app: Hono, ctx: ServerContext): void {
  app.get('/', async (c) =>
    sendHtml(
      c,
      boardPage(await boardData(ctx.store, ctx.engine, ctx.hub.status), ctx.token, await fleetGlance(ctx)),
    ),
  );
  app.get('/fleet', async (c) => {
    const { hosts, dispatches, waiting, now } = await fleetNow(ctx);
    return sendHtml(c, fleetPage(hosts, dispatches, ctx.token, now, waiting));
  });
  app.get('/fleet/live', async (c) => {
    const { hosts, dispatches, waiting, now } = await fleetNow(ctx);
    return sendHtml(c, fleetLive(hosts, dispatches, now, waiting));
  });
  // Every open board fetches this after a change notice: one render per change serves them all.
  let cached: { version: number; at: number; page: Html } | undefined;
  app.get('/board/live', async (c) => {
    const version = ctx.hub.version;
    if (!cached || cached.version !== version || Date.now() - cached.at > LIVE_CACHE_MS) {
      cached = {
        version,
        at: Date.now(),
        page: boardLive(await boardData(ctx.store, ctx.engine, ctx.hub.status), await fleetGlance(ctx)),
      };
    }
    return sendHtml(c, cached.page);
  });
  app.get('/runs/:id', async (c) => {
    const run = await ctx.store.getRun(c.req.param('id'));
    if (!run) throw new ApiError('run_not_found', `no run ${c.req.param('id')}`);
    await loadDrivers([run.provider]);
    // The run's delivery, or (a remediation run) the delivery of the run it follows.
    const delivery = await shownDelivery(ctx.store, run);
    const reviews = delivery
      ? parseReviewSummary(
          (await ctx.store.getPullRequestMark(delivery.runId, REVIEW_SUMMARY_MARK).catch(() => undefined))
            ?.value,
        )
      : undefined;
    return sendHtml(
      c,
      runPage(
        run,
        await transcriptOf(ctx, run),
        ctx.token,
        delivery,
        await runChanges(ctx, run, delivery),
        reviews,
        {
          ...(await runSourceAndRepositories(ctx.store, ctx.engine.currentSettings().automations, run)),
          attempts: await ctx.store.listRuns({ taskKey: run.taskKey, limit: ATTEMPTS_SHOWN + 1 }),
        },
      ),
    );
  });
  app.get('/assets/board.js', (c) => asset(c, BOARD_JS, 'text/javascript; charset=utf-8'));
  app.get('/assets/run.js', (c) => asset(c, RUN_JS, 'text/javascript; charset=utf-8'));
  app.get('/assets/fleet.js', (c) => asset(c, FLEET_JS, 'text/javascript; charset=utf-8'));
  app.get('/assets/actions.js', (c) => asset(c, ACTIONS_JS, 'text/javascript; charset=utf-8'));
  automationPageRoutes(app, sendHtml as (c: never, page: Html) => Response, ctx);
  findingsPageRoutes(app, sendHtml as (c: never, page: Html) => Response, ctx);
}

/** How many of an item's other runs a run page lists. */
const ATTEMPTS_SHOWN = 10;

export function createApp(ctx: ServerContext): Hono {
  const app = new Hono();
  app.use('*', async (c, next) => {
    await next();
    c.header('x-content-type-options', 'nosniff');
    c.header('referrer-policy', 'no-referrer');
    c.header('x-frame-options', 'DENY');
    c.header(
      'content-security-policy',
      "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; frame-ancestors 'none'",
    );
  });
  app.get('/api/v1/health', (c) => json(c, { ok: true, version: ctx.version }));
  // The stylesheet and the icon hold nothing of the state: served without the token, so that the
  // token page a stranger gets is styled too. The scripts stay behind it with everything else.
  app.get('/assets/board.css', (c) => asset(c, BOARD_CSS, 'text/css; charset=utf-8'));
  app.get('/assets/icon.svg', (c) => asset(c, ICON_SVG, 'image/svg+xml'));
  // GitHub signs its deliveries instead of sending the board's token.
  webhookRoutes(app, ctx);
  app.use('*', tokenLogin(ctx.token));
  app.use('*', async (c, next) => {
    if (!authenticated(c, ctx.token)) {
      if (wantsHtml(c))
        return c.html(
          tokenPage(tokenFileOf(ctx), new URL(c.req.url).origin, c.req.query('token') !== undefined).text,
          401,
        );
      return errorResponse(
        c,
        'unauthorized',
        wantsHtml(c)
          ? 'Open the URL `curupira serve` printed (it carries the token once), or send Authorization: Bearer <token>.'
          : 'send Authorization: Bearer <token> (the token is in the serve-token file of the state folder)',
      );
    }
    return next();
  });
  app.route('/api/v1', apiRoutes(ctx));
  pageRoutes(app, ctx);
  app.notFound((c) => errorResponse(c, 'not_found', `no route ${c.req.method} ${c.req.path}`));
  app.onError((error, c) => {
    if (error instanceof ApiError) return errorResponse(c, error.code, error.message, error.extra);
    return errorResponse(c, 'internal', errorMessage(error));
  });
  return app;
}
