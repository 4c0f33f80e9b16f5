/** The JSON API under `/api/v1` (described at `/api/v1/openapi.json`). */
import { type Context, Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import { ControlError, UsageError } from '../core/errors.js';
import {
  blockedByScreening,
  isTerminal,
  RUN_STATUSES,
  type RunRecord,
  type RunStatus,
} from '../core/types.js';

import { checkInputs, inputsFromJson } from '../pipeline/inputs.js';
import { redactedJson } from '../security/redact.js';
import type { RunFilter } from '../store/types.js';

import { automationCards, boardData } from './board-data.js';
import { ApiError, NO_FLEET_MESSAGE, throwWhenUnreachable } from './errors.js';
import {
  FIGURE_WINDOWS,
  type FigureWindowName,
  isWindowName,
  recentFigures,
  windowFigures,
} from './figures.js';
import { openApiDocument } from './openapi.js';
import { followRun } from './run-events.js';
import { runSourceAndRepositories } from './run-view.js';
import type { ServerContext } from './server-context.js';
import { removeKeptWorktree } from './worktree.js';

export const MAX_PAGE = 500;

/** JSON with secrets redacted (in its values, before it is serialized), as in logs and transcripts. */
export function json(c: Context, body: unknown, status: 200 | 202 = 200): Response {
  return c.body(redactedJson(body), status, { 'content-type': 'application/json; charset=utf-8' });
}

/** A run without its prompt (lists stay small; `GET /runs/{id}` has it). */
export function runSummary(run: RunRecord): Omit<RunRecord, 'prompt' | 'agentOutcome'> {
  const { prompt: _prompt, agentOutcome: _outcome, ...rest } = run;
  return rest;
}

/** How many of the items that need attention `/state` lists (newest first). */
const STATE_ATTENTION_LISTED = 10;
function parseStatuses(value: string | undefined): RunStatus[] | undefined {
  if (value === undefined || value === '') return undefined;
  const list = value.split(',').map((s) => s.trim());
  for (const status of list) {
    if (!(RUN_STATUSES as readonly string[]).includes(status))
      throw new ApiError('bad_request', `unknown status '${status}'; use one of ${RUN_STATUSES.join(', ')}`);
  }
  return list as RunStatus[];
}

function parseLimit(value: string | undefined): number {
  if (value === undefined) return 50;
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > MAX_PAGE)
    throw new ApiError('bad_request', `limit must be an integer from 1 to ${MAX_PAGE}, got '${value}'`);
  return Number(value);
}

function parseCursor(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!/^[0-9A-Za-z_]{1,64}$/.test(value)) throw new ApiError('bad_request', `invalid cursor '${value}'`);
  return value;
}

/** The window of a figures request: `24h`, `7d` (the default) or `30d`. */
export function parseWindow(value: string | undefined): FigureWindowName {
  if (value === undefined || value === '') return '7d';
  if (!isWindowName(value))
    throw new ApiError(
      'bad_request',
      `window must be one of ${Object.keys(FIGURE_WINDOWS).join(', ')}, got '${value}'`,
    );
  return value;
}

/** The run search both the API and the pages take: task, profile, repository, title text. */
export function searchFilter(query: (name: string) => string | undefined): RunFilter {
  const filter: RunFilter = {};
  const text = (name: string, max = 200): string | undefined => {
    const value = query(name);
    if (value === undefined || value === '') return undefined;
    if (value.length > max) throw new ApiError('bad_request', `${name} is longer than ${max} characters`);
    return value;
  };
  const task = text('task', 1000);
  const profile = text('profile');
  const repo = text('repo');
  const q = text('q');
  if (task !== undefined) filter.taskKey = task;
  if (profile !== undefined) filter.profile = profile;
  if (repo !== undefined) filter.repo = repo;
  if (q !== undefined) filter.text = q;
  return filter;
}

async function mustRun(ctx: ServerContext, id: string): Promise<RunRecord> {
  const run = await ctx.store.getRun(id);
  if (!run) throw new ApiError('run_not_found', `no run ${id}`);
  return run;
}

function control<T>(action: () => T): T {
  try {
    return action();
  } catch (error) {
    if (error instanceof ControlError) throw new ApiError(error.reason, error.message);
    throw error;
  }
}

async function controlAsync<T>(action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (error) {
    if (error instanceof ControlError) throw new ApiError(error.reason, error.message);
    throw error;
  }
}

function readRoutes(api: Hono, ctx: ServerContext): void {
  api.get('/state', async (c) => {
    const data = await boardData(ctx.store, ctx.engine, ctx.hub.status);
    return json(c, {
      version: ctx.version,
      startedAt: new Date(ctx.startedAt).toISOString(),
      summary: data.summary,
      attentionCount: data.attentionCount,
      // One entry per item, its newest attempt (the board's column): an item whose newest run
      // since succeeded is not in it, whatever its earlier attempts were.
      attention: (data.attentionGroups ?? []).slice(0, STATE_ATTENTION_LISTED).map((group) => ({
        ...runSummary(group.latest),
        earlierAttempts: group.earlier.length,
      })),
      running: data.inProgress.map(runSummary),
      queued: data.engine?.queued ?? 0,
      // What waits for a slot, in the order it starts (the first 20): no run yet.
      queuedTasks: data.engine?.queuedTasks ?? [],
      draining: data.engine?.draining ?? false,
      stopping: data.engine?.stopping ?? false,
      automations: data.automations,
      reloadError: data.engine?.reloadError ?? null,
      figures: await recentFigures(
        ctx.store,
        data.automations.map((a) => a.id),
      ),
    });
  });
  api.get('/figures', async (c) => {
    const automation = c.req.query('automation');
    const window = parseWindow(c.req.query('window'));
    if (
      automation !== undefined &&
      !ctx.engine.currentSettings().automations.some((a) => a.id === automation)
    )
      throw new ApiError('automation_not_found', `no automation '${automation}' is configured`);
    return json(c, await windowFigures(ctx.store, window, automation ?? null));
  });
  api.get('/automations', (c) => json(c, { automations: automationCards(ctx.engine, new Date()) }));
  api.get('/runs', async (c) => {
    const limit = parseLimit(c.req.query('limit'));
    const cursor = parseCursor(c.req.query('cursor'));
    const attention = c.req.query('attention');
    const rows = await ctx.store.listRuns({
      ...searchFilter((name) => c.req.query(name)),
      ...(c.req.query('automation') ? { automationId: c.req.query('automation')! } : {}),
      ...(parseStatuses(c.req.query('status')) ? { status: parseStatuses(c.req.query('status'))! } : {}),
      ...(cursor ? { beforeId: cursor } : {}),
      ...(attention === 'true' ? { attention: true } : attention === 'false' ? { attention: false } : {}),
      limit: limit + 1,
    });
    const page = rows.slice(0, limit);
    return json(c, {
      runs: page.map(runSummary),
      nextCursor: rows.length > limit ? page.at(-1)!.id : null,
    });
  });
  api.get('/findings', async (c) => {
    // Findings of code-review watches (issue 29), oldest first: open ones unless `status` says otherwise.
    const status = c.req.query('status') ?? 'open';
    if (status !== 'open' && status !== 'resolved' && status !== 'all')
      throw new ApiError('bad_request', `status must be open, resolved or all, got '${status}'`);
    const watch = c.req.query('watch');
    const findings = await ctx.store.listFindings({
      ...(watch ? { watch } : {}),
      ...(status === 'all' ? {} : { status }),
      limit: parseLimit(c.req.query('limit')),
    });
    return json(c, { findings });
  });
  api.get('/runs/:id', async (c) => {
    const run = await mustRun(ctx, c.req.param('id'));
    // The run's delivery (docs/pull-requests.md): branch, pull request, state, since when, detail.
    const delivery = (await ctx.store.getPullRequest(run.id).catch(() => undefined)) ?? null;
    // Where the item comes from (a source outside GitHub; null otherwise) and, for a task across
    // repositories, every repository with its worktree and delivery (empty otherwise).
    const { source, repositories } = await runSourceAndRepositories(
      ctx.store,
      ctx.engine.currentSettings().automations,
      run,
    );
    return json(c, { run, delivery, source: source ?? null, repositories });
  });
  api.get('/runs/:id/events', async (c) => {
    const run = await mustRun(ctx, c.req.param('id'));
    const last = c.req.header('last-event-id') ?? c.req.query('from');
    const from =
      last !== undefined && /^\d+$/.test(last) ? Number(last) + (c.req.header('last-event-id') ? 1 : 0) : 0;
    return streamSSE(c, async (stream) => {
      const abort = new AbortController();
      stream.onAbort(() => abort.abort());
      for await (const item of followRun(ctx.store, run.id, { from, signal: abort.signal })) {
        if (item.kind === 'event')
          await stream.writeSSE({
            id: String(item.index),
            event: 'agent',
            data: redactedJson(item.event),
          });
        else await stream.writeSSE({ event: item.kind, data: redactedJson(runSummary(item.run)) });
      }
    });
  });
  api.get('/events', (c) =>
    streamSSE(c, async (stream) => {
      const closed = new Promise<void>((resolve) => stream.onAbort(resolve));
      await stream.writeSSE({ event: 'change', id: String(ctx.hub.version), data: String(ctx.hub.version) });
      const unsubscribe = ctx.hub.subscribe((version) => {
        stream
          .writeSSE({ event: 'change', id: String(version), data: String(version) })
          .catch(() => undefined);
      });
      const ping = setInterval(() => {
        stream.writeSSE({ event: 'ping', data: '' }).catch(() => undefined);
      }, 15_000);
      await closed;
      clearInterval(ping);
      unsubscribe();
    }),
  );
  api.get('/fleet', async (c) => {
    if (!ctx.fleet) throw new ApiError('no_fleet', NO_FLEET_MESSAGE);
    throwWhenUnreachable(ctx.fleet);
    const [hosts, dispatches, waiting] = await Promise.all([
      ctx.fleet.hosts(),
      ctx.fleet.liveDispatches(),
      ctx.fleet.waiting(),
    ]);
    return json(c, { hosts, dispatches, waiting });
  });
  api.get('/openapi.json', (c) => json(c, openApiDocument(ctx.version)));
}

/**
 * The inputs of a "run now" (`{"inputs": {"focus": "docs"}}`, optional), checked as `run --set`
 * checks them: declared by the automation, strings. No body (the board's button): none.
 */
async function triggerInputs(
  c: Context,
  ctx: ServerContext,
  id: string,
): Promise<Record<string, string> | undefined> {
  const text = await c.req.text();
  if (text.trim() === '') return undefined;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new ApiError('bad_request', 'the body is not JSON: send {"inputs": {"key": "value"}} or nothing');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new ApiError('bad_request', 'the body is a JSON object: {"inputs": {"key": "value"}}');
  const automation = ctx.engine.currentSettings().automations.find((a) => a.id === id);
  if (!automation) return undefined; // the trigger answers 404 with the engine's words
  try {
    const inputs = inputsFromJson((body as { inputs?: unknown }).inputs);
    checkInputs(inputs, [automation]);
    return Object.keys(inputs).length > 0 ? inputs : undefined;
  } catch (error) {
    if (error instanceof UsageError) throw new ApiError('bad_request', error.message);
    throw error;
  }
}

function actionRoutes(api: Hono, ctx: ServerContext): void {
  const automation = (c: Context): string => c.req.param('id')!;
  api.post('/automations/:id/run', async (c) => {
    const inputs = await triggerInputs(c, ctx, automation(c));
    const result = control(() => ctx.engine.trigger(automation(c), inputs));
    ctx.hub.changed();
    return json(c, { automation: automation(c), result }, 202);
  });
  // "Run a baseline now" (a review watch, whatever its own scan): the whole repository at the head.
  api.post('/automations/:id/baseline', (c) => {
    const result = control(() => ctx.engine.scanNow(automation(c), 'baseline'));
    ctx.hub.changed();
    return json(c, { automation: automation(c), scan: 'baseline', result }, 202);
  });
  for (const [verb, paused] of [
    ['pause', true],
    ['resume', false],
  ] as const) {
    api.post(`/automations/:id/${verb}`, async (c) => {
      await controlAsync(() => ctx.engine.setPaused(automation(c), paused));
      ctx.hub.changed();
      return json(c, { automation: automation(c), paused });
    });
  }
  api.post('/runs/:id/cancel', async (c) => {
    const run = await mustRun(ctx, c.req.param('id'));
    control(() => ctx.engine.cancel(run.id));
    return json(c, { run: run.id, result: 'cancelling' }, 202);
  });
  api.post('/runs/:id/retry', async (c) => {
    const run = await mustRun(ctx, c.req.param('id'));
    const result = await controlAsync(() => ctx.engine.retry(run.id));
    ctx.hub.changed();
    return json(c, { run: run.id, result }, 202);
  });
  api.post('/runs/:id/dismiss', async (c) => {
    const run = await mustRun(ctx, c.req.param('id'));
    if (!isTerminal(run.status)) throw new ApiError('run_active', `run ${run.id} has not finished`);
    const at = new Date().toISOString();
    const updated = await ctx.store.updateRun(run.id, { dismissedAt: at });
    // `attempts=true`: the item's earlier attempts that still need attention go with it.
    if (c.req.query('attempts') === 'true') {
      const earlier = await ctx.store.listRuns({ taskKey: run.taskKey, attention: true, limit: MAX_PAGE });
      for (const other of earlier) await ctx.store.updateRun(other.id, { dismissedAt: at });
    }
    ctx.hub.changed();
    return json(c, { run: runSummary(updated) });
  });
  api.post('/runs/:id/allow', async (c) => {
    const run = await mustRun(ctx, c.req.param('id'));
    if (!blockedByScreening(run))
      throw new ApiError(
        'not_blocked',
        `run ${run.id} was not blocked by screening (its status is ${run.status})`,
      );
    const waiting = (await ctx.store.listAllowances({ runId: run.id, pending: true }))[0];
    // Who allows it: `{"by": "alice"}` (`curupira allow` sends the local user), else the board.
    const asked = (await c.req.json().catch(() => undefined)) as { by?: unknown } | undefined;
    const by =
      typeof asked?.by === 'string' && asked.by.trim() !== '' ? asked.by.trim().slice(0, 200) : 'board';
    const allowance = waiting ?? (await ctx.store.addAllowance(run.id, by));
    ctx.engine.allowed();
    ctx.hub.changed();
    return json(c, { run: run.id, allowedBy: allowance.allowedBy, allowedAt: allowance.allowedAt }, 202);
  });
  api.post('/runs/:id/remove-worktree', async (c) => {
    const run = await mustRun(ctx, c.req.param('id'));
    // Only `{"confirm": true}` confirms; no body, another body or one that is not JSON does not.
    const asked = (await c.req.json().catch(() => undefined)) as { confirm?: unknown } | undefined;
    const updated = await removeKeptWorktree(ctx, run, asked?.confirm === true);
    ctx.hub.changed();
    return json(c, { run: runSummary(updated) });
  });
  // Actions are POST only; another method on an action's path says so.
  const refuse = (c: Context, actions: readonly string[], name: string): never => {
    if (actions.includes(name))
      throw new ApiError('method_not_allowed', `${c.req.path} is an action: use POST with the token header`);
    throw new ApiError('not_found', `no route ${c.req.method} ${c.req.path}`);
  };
  api.all('/automations/:id/:verb', (c) =>
    refuse(c, ['run', 'baseline', 'pause', 'resume'], c.req.param('verb')),
  );
  api.all('/runs/:id/:action', (c) =>
    refuse(c, ['cancel', 'retry', 'dismiss', 'allow', 'remove-worktree'], c.req.param('action')),
  );
}

export function apiRoutes(ctx: ServerContext): Hono {
  const api = new Hono();
  readRoutes(api, ctx);
  actionRoutes(api, ctx);
  return api;
}
