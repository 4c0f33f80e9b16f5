/**
 * Steering a running `curupira serve` from the CLI over its unix socket: `status`, `cancel`,
 * `pause`, `resume`, `trigger`. Without a daemon, `status` reads the state file, `pause` and
 * `resume` write it (the next start honours them), and the others say that none is running.
 */

import type { Command } from 'commander';
import { loadSettings } from '../config/load.js';
import type { Settings } from '../config/types.js';
import { errorMessage, UsageError } from '../core/errors.js';
import { type RunRecord, UNFINISHED_STATUSES } from '../core/types.js';
import { formatCost } from '../cost/prices.js';
import { stateDir } from '../engine/paths.js';
import type { QueuedTask } from '../engine/types.js';
import { unreachable } from '../fleet/durable-store.js';
import type { DispatchRecord, FleetHost, WaitingTask } from '../fleet/types.js';
import { checkInputs, parseSetPairs } from '../pipeline/inputs.js';
import { pauseReasonKey } from '../retries/unattended.js';
import { scrub } from '../security/redact.js';
import { ATTENTION_READ, type AutomationCard, groupAttention } from '../server/board-data.js';
import { connectDaemon, type Daemon } from '../server/client.js';
import { statusFigures, windowEnding } from '../server/figures.js';
import { type BudgetPark, openStore, stateLocation } from '../store/index.js';
import type { Store } from '../store/types.js';
import { EXIT, setExitCode } from './exit-codes.js';
import { type FleetAccess, fleetStatusLines, noFleet, type OpenFleet } from './fleet-status.js';
import { type CliIo, writeLine } from './io.js';
import type { GlobalOptions } from './program.js';
import { runTable } from './runs.js';

export const NO_DAEMON = 'no daemon running; start `curupira serve`';

function fail(io: CliIo, message: string): void {
  writeLine(io.stderr, `error: ${message}`);
  setExitCode(EXIT.failure);
}

/** Runs `action` against the daemon; prints its error answer, or NO_DAEMON when none runs. */
async function withDaemon(
  io: CliIo,
  settings: Settings,
  action: (daemon: Daemon) => Promise<void>,
): Promise<void> {
  const daemon = await connectDaemon(stateDir(settings));
  if (!daemon) return fail(io, NO_DAEMON);
  await action(daemon);
}

function answered(io: CliIo, answer: { status: number; body: Record<string, unknown> }): boolean {
  if (answer.status < 300) return true;
  const error = answer.body.error as { code: string; message: string } | undefined;
  fail(io, `${error?.message ?? `the daemon answered ${answer.status}`}${error ? ` (${error.code})` : ''}`);
  return false;
}

const DISABLED = 'paused (enabled = false in the settings file)';

/** ` · $1.20 today` and, at 80 % of a daily budget or parked by one, what it says. */
function budgetWords(budget: AutomationCard['budget']): string {
  if (!budget) return '';
  const spent = ` · ${formatCost(budget.spentTodayUsd)} today${budget.limitPerDayUsd === undefined ? '' : ` of ${formatCost(budget.limitPerDayUsd)}`}`;
  return budget.state === 'warning' ? `${spent} (budget warning: 80 % used)` : spent;
}

function parkedWords(park: BudgetPark | undefined): string {
  return park ? ` · parked until ${park.until} (${park.reason})` : '';
}

function automationLine(card: AutomationCard): string {
  const state = card.disabled
    ? DISABLED
    : card.paused
      ? `paused${card.pausedReason ? `: ${card.pausedReason}` : ''}`
      : card.budget?.state === 'parked'
        ? `parked until ${card.budget.parkedUntil} (${card.budget.reason})`
        : card.nextFireAt
          ? `next fire ${card.nextFireAt}`
          : card.lastError
            ? `last poll failed: ${card.lastError}`
            : card.lastPollAt
              ? `last check ${card.lastPollAt}`
              : 'not polled yet';
  const extra = [
    ...(card.parkedUntil ? [`provider parked (usage limit) until ${card.parkedUntil}`] : []),
    ...card.retries,
  ];
  return [
    `  ${card.id.padEnd(16)} ${card.triggerType.padEnd(22)} ${state}${budgetWords(card.budget)}`,
    ...extra.map((e) => `    └ ${e}`),
  ].join('\n');
}

/** What `curupira status` reaches beyond the state file and the daemon: the fleet, when there is one. */
export interface StatusDeps {
  /** Opens the fleet of the settings (`state_db_url`); the embedded store has none. */
  openFleet: OpenFleet;
}

export const defaultStatusDeps: StatusDeps = {
  // The fleet's modules (pg, pg-boss) load only for a PostgreSQL state.
  openFleet: async (settings) =>
    settings.execution.state_db_url
      ? (await import('./fleet.js')).openFleetView(settings)
      : noFleet(settings),
};

/** The fleet block from the daemon's `GET /api/v1/fleet`; nothing when it has no fleet (404). */
async function fleetFromDaemon(io: CliIo, daemon: Daemon): Promise<void> {
  const answer = await daemon.call('GET', '/fleet');
  if (answer.status === 404) return;
  if (answer.status >= 300) {
    const error = answer.body.error as { code?: string; message?: string } | undefined;
    if (error?.code === 'database_unreachable' && error.message)
      writeLine(io.stdout, `fleet: ${error.message}`);
    else
      writeLine(
        io.stdout,
        `fleet: unavailable (${error?.message ?? `the daemon answered ${answer.status}`})`,
      );
    return;
  }
  const body = answer.body as { hosts: FleetHost[]; dispatches: DispatchRecord[]; waiting?: WaitingTask[] };
  for (const line of fleetStatusLines(body.hosts, Date.now(), body.dispatches, body.waiting ?? []))
    writeLine(io.stdout, line);
}

/** The fleet block read from the shared state itself (no daemon on this host). */
async function fleetFromState(io: CliIo, settings: Settings, deps: StatusDeps): Promise<void> {
  let access: FleetAccess | undefined;
  try {
    access = await deps.openFleet(settings);
    if (!access) return;
    const [hosts, dispatches, waiting] = await Promise.all([
      access.view.hosts(),
      access.view.liveDispatches(),
      access.view.waiting(),
    ]);
    for (const line of fleetStatusLines(hosts, Date.now(), dispatches, waiting)) writeLine(io.stdout, line);
  } catch (error) {
    writeLine(
      io.stdout,
      `fleet: ${unreachable(error) ? 'database unreachable' : 'unavailable'} (${scrub(errorMessage(error))})`,
    );
  } finally {
    await access?.close();
  }
}

/** `curupira status`: from the daemon when one answers on this host, else from the state. */
export async function printStatus(
  io: CliIo,
  settings: Settings,
  deps: StatusDeps = defaultStatusDeps,
): Promise<void> {
  const daemon = await connectDaemon(stateDir(settings));
  if (daemon) {
    await statusFromDaemon(io, daemon);
    await fleetFromDaemon(io, daemon);
  } else {
    await statusFromFile(io, settings);
    await fleetFromState(io, settings, deps);
  }
}

/**
 * `curupira status --json`: the daemon's state (`GET /api/v1/state`, figures included) when one
 * answers, else what the state file says, with the same figures computed from it.
 */
export async function printStatusJson(io: CliIo, settings: Settings): Promise<void> {
  const daemon = await connectDaemon(stateDir(settings));
  if (daemon) {
    const answer = await daemon.call('GET', '/state');
    if (!answered(io, answer)) return;
    writeLine(io.stdout, JSON.stringify({ daemon: true, ...answer.body }, null, 2));
    return;
  }
  const store = await openStore(stateLocation(settings.execution), { readonly: true });
  try {
    const window = windowEnding(new Date());
    const paused = new Set(await store.listPaused());
    const figures = await statusFigures(
      store,
      settings.automations.map((a) => a.id),
      window,
    );
    writeLine(
      io.stdout,
      JSON.stringify(
        {
          daemon: false,
          attentionCount: (await attentionOf(store)).count,
          running: (await store.listRuns({ status: [...UNFINISHED_STATUSES], limit: 20 })).map(
            ({ prompt: _p, agentOutcome: _o, ...rest }) => rest,
          ),
          automations: settings.automations.map((a) => ({
            id: a.id,
            triggerType: a.triggerType,
            paused: paused.has(a.id) || a.config.enabled === false,
            disabled: a.config.enabled === false,
          })),
          figures,
        },
        null,
        2,
      ),
    );
  } finally {
    await store.close();
  }
}

async function statusFromDaemon(io: CliIo, daemon: Daemon): Promise<void> {
  const answer = await daemon.call('GET', '/state');
  if (!answered(io, answer)) return;
  const state = answer.body as {
    summary: string;
    attentionCount: number;
    attention?: RunRecord[];
    running: RunRecord[];
    queued?: number;
    queuedTasks?: QueuedTask[];
    automations: AutomationCard[];
  };
  writeLine(io.stdout, `daemon: running · ${state.summary} · ${state.attentionCount} need attention`);
  writeLine(io.stdout, 'automations:');
  for (const card of state.automations) writeLine(io.stdout, automationLine(card));
  if (state.running.length > 0) {
    writeLine(io.stdout, 'in progress:');
    for (const line of runTable(state.running)) writeLine(io.stdout, `  ${line}`);
  }
  const queued = state.queuedTasks ?? [];
  if (queued.length > 0) {
    const more =
      (state.queued ?? 0) > queued.length ? ` (the first ${queued.length} of ${state.queued})` : '';
    writeLine(io.stdout, `queued for a free slot${more}:`);
    for (const task of queued)
      writeLine(io.stdout, `  ${task.automationId}  ${task.item}  ${JSON.stringify(task.title)}`);
  }
  // The items the count counts (the board's column): a daemon older than this list has none.
  if (state.attentionCount > 0 && state.attention) attentionLines(io, state.attention, state.attentionCount);
}

/** How many of the runs that need attention `status` lists (newest first). */
const ATTENTION_LISTED = 10;

/**
 * The items that need attention, one line each: its newest run (the board's column). An item
 * whose newest run since succeeded needs none, whatever its earlier attempts were.
 */
function attentionLines(io: CliIo, runs: readonly RunRecord[], count: number): void {
  if (runs.length === 0) return;
  const more = count > runs.length ? ` (the newest ${runs.length} of ${count})` : '';
  writeLine(io.stdout, `needs attention${more} (\`curupira runs show ID\` for one):`);
  for (const line of runTable(runs)) writeLine(io.stdout, `  ${line}`);
}

/** What needs attention in the state file, counted and listed as the board does: by item. */
async function attentionOf(store: Store): Promise<{ count: number; listed: RunRecord[] }> {
  const read = await store.listRuns({ attention: true, limit: ATTENTION_READ });
  const total = await store.countRuns({ attention: true });
  const { groups } = await groupAttention(store, read);
  return {
    count: groups.length + Math.max(0, total - read.length),
    listed: groups.slice(0, ATTENTION_LISTED).map((group) => group.latest),
  };
}

async function statusFromFile(io: CliIo, settings: Settings): Promise<void> {
  const store = await openStore(stateLocation(settings.execution), { readonly: true });
  try {
    const paused = new Set(await store.listPaused());
    const reasons = new Map<string, string>();
    for (const id of paused) reasons.set(id, (await store.getMeta(pauseReasonKey(id))) ?? '');
    const parks = await store.listBudgetParks(new Date().toISOString());
    const parkOf = (id: string) => parks.find((p) => p.scope === id) ?? parks.find((p) => p.scope === '*');
    const unfinished = await store.listRuns({ status: [...UNFINISHED_STATUSES], limit: 20 });
    const attention = await attentionOf(store);
    writeLine(io.stdout, `daemon: not running (start \`curupira serve\`); from the state file:`);
    writeLine(io.stdout, `${attention.count} need attention`);
    writeLine(io.stdout, 'automations:');
    for (const a of settings.automations)
      writeLine(
        io.stdout,
        `  ${a.id.padEnd(16)} ${a.triggerType.padEnd(22)} ${a.config.enabled === false ? DISABLED : paused.has(a.id) ? `paused${reasons.get(a.id) ? `: ${reasons.get(a.id)}` : ''}` : 'enabled'}${parkedWords(parkOf(a.id))}`,
      );
    if (unfinished.length > 0) {
      writeLine(io.stdout, 'left unfinished (a start closes them):');
      for (const line of runTable(unfinished)) writeLine(io.stdout, `  ${line}`);
    }
    if (attention.count > 0) attentionLines(io, attention.listed, attention.count);
  } finally {
    await store.close();
  }
}

async function pauseWithoutDaemon(io: CliIo, settings: Settings, id: string, paused: boolean): Promise<void> {
  const automation = settings.automations.find((a) => a.id === id);
  if (!automation) return fail(io, `no automation '${id}' is configured (automation_not_found)`);
  if (!paused && automation.config.enabled === false)
    return fail(
      io,
      `automation '${id}' is disabled in ${settings.file} (enabled = false): edit the file to resume it (automation_disabled)`,
    );
  const store = await openStore(stateLocation(settings.execution));
  try {
    await store.setPaused(id, paused);
    await store.setMeta(pauseReasonKey(id), '');
  } finally {
    await store.close();
  }
  writeLine(
    io.stdout,
    `${paused ? 'Paused' : 'Resumed'} ${id} in the state file (no daemon is running; the next start honours it).`,
  );
}

/** `curupira trigger WATCH --baseline`: the daemon runs a baseline of the watch now. */
async function baselineNow(io: CliIo, settings: Settings, id: string, set: readonly string[]): Promise<void> {
  if (set.length > 0)
    throw new UsageError('--baseline takes no --set: a baseline review has no inputs of its own');
  await withDaemon(io, settings, async (daemon) => {
    const answer = await daemon.call('POST', `/automations/${encodeURIComponent(id)}/baseline`);
    if (answered(io, answer))
      writeLine(
        io.stdout,
        `Running a baseline of ${id} now: the whole repository at the branch’s head (\`curupira findings --watch ${id}\` lists what it finds).`,
      );
  });
}

export function registerControl(
  program: Command,
  io: CliIo,
  globals: () => GlobalOptions,
  deps: StatusDeps = defaultStatusDeps,
): void {
  const settings = (): Settings => {
    const { settings: loaded, warnings } = loadSettings(globals().config);
    for (const warning of warnings) writeLine(io.stderr, `warning: ${warning}`);
    return loaded;
  };
  program
    .command('status')
    .description('What the daemon is doing (or, without one, what the state file says).')
    .option('--json', 'print the state and the outcome figures of the last 7 days as JSON')
    .action(async (options: { json?: boolean }) => {
      if (options.json) await printStatusJson(io, settings());
      else await printStatus(io, settings(), deps);
    });
  program
    .command('cancel <run>')
    .description('Cancel a running run: its agent is stopped, its session kept (needs `curupira serve`).')
    .action(async (run: string) => {
      await withDaemon(io, settings(), async (daemon) => {
        const answer = await daemon.call('POST', `/runs/${encodeURIComponent(run)}/cancel`);
        if (answered(io, answer))
          writeLine(
            io.stdout,
            `Cancelling ${run}; its session is kept, and its item does not run again until you retry it (\`curupira retry ${run}\`, or Retry on the board).`,
          );
      });
    });
  program
    .command('trigger <automation>')
    .description(
      'Run an automation now: a schedule fires at once, an event trigger polls (needs `curupira serve`).',
    )
    .option(
      '--set <key=value>',
      "an input for the runs this trigger starts (repeatable): the automation's `inputs` key, read as ${key}",
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option(
      '--baseline',
      'a review watch: run a baseline now, a review of the whole repository at the branch’s head, whatever its own scan',
    )
    .action(async (id: string, options: { set?: string[]; baseline?: boolean }) => {
      if (options.baseline) return baselineNow(io, settings(), id, options.set ?? []);
      const inputs = parseSetPairs(options.set ?? []);
      const s = settings();
      const automation = s.automations.find((a) => a.id === id);
      if (automation) checkInputs(inputs, [automation]);
      await withDaemon(io, s, async (daemon) => {
        const answer = await daemon.call(
          'POST',
          `/automations/${encodeURIComponent(id)}/run`,
          Object.keys(inputs).length > 0 ? { inputs } : undefined,
        );
        if (answered(io, answer))
          writeLine(io.stdout, answer.body.result === 'fired' ? `Fired ${id}.` : `Polling ${id} now.`);
      });
    });
  for (const [verb, paused] of [
    ['pause', true],
    ['resume', false],
  ] as const) {
    program
      .command(`${verb} <automation>`)
      .description(
        paused
          ? 'Pause an automation (no polls, no fires) until resumed; remembered across restarts.'
          : 'Resume a paused automation.',
      )
      .action(async (id: string) => {
        const s = settings();
        const daemon = await connectDaemon(stateDir(s));
        if (!daemon) return pauseWithoutDaemon(io, s, id, paused);
        const answer = await daemon.call('POST', `/automations/${encodeURIComponent(id)}/${verb}`);
        if (answered(io, answer)) writeLine(io.stdout, `${paused ? 'Paused' : 'Resumed'} ${id}.`);
      });
  }
}
