/** `curupira runs` and `curupira runs show ID`: the run history, read from the state file. */

import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { loadDrivers } from '../agents/registry.js';
import { renderEvents, renderTranscriptFile, transcriptEvents } from '../agents/transcript.js';
import type { AgentEvent } from '../agents/types.js';
import { loadSettings } from '../config/load.js';
import type { ResolvedAutomation, Settings } from '../config/types.js';
import { describeRunCode } from '../core/code-source.js';
import { UsageError } from '../core/errors.js';
import { formatInputs, formatResult } from '../core/result-line.js';
import { isTerminal, RUN_STATUSES, type RunRecord, type RunStatus } from '../core/types.js';
import { formatCost } from '../cost/prices.js';
import {
  deliveryRunId,
  type RunRepository,
  runRepositories,
  shownDelivery,
} from '../delivery/repositories.js';
import { stateDir } from '../engine/paths.js';
import { maxAttempts } from '../retries/retry.js';
import { pendingNote } from '../retries/unattended.js';
import { makeVisible } from '../screening/text.js';
import { connectDaemon } from '../server/client.js';
import { runSourceAndRepositories } from '../server/run-view.js';
import { openStore, stateLocation } from '../store/index.js';
import type { Allowance, PullRequestRecord, Store } from '../store/types.js';
import {
  findTriggerDefinition,
  runAutomation,
  runItemLink,
  runItemName,
  runSource,
} from '../triggers/registry.js';
import { EXIT, setExitCode } from './exit-codes.js';
import { type CliIo, writeJson, writeLine } from './io.js';
import type { GlobalOptions } from './program.js';
import { formatDuration } from './status-line.js';

function duration(run: RunRecord): string {
  if (!run.startedAt) return '-';
  const end = run.finishedAt ? Date.parse(run.finishedAt) : Date.now();
  return formatDuration(end - Date.parse(run.startedAt));
}

function parseStatuses(value: string | undefined): RunStatus[] | undefined {
  if (value === undefined) return undefined;
  const statuses = value.split(',').map((s) => s.trim());
  for (const status of statuses) {
    if (!(RUN_STATUSES as readonly string[]).includes(status)) {
      throw new UsageError(`unknown status '${status}'; use one of ${RUN_STATUSES.join(', ')}`);
    }
  }
  return statuses as RunStatus[];
}

/** The run's sandbox (issue 26): its policy, and every connection it refused. */
export function sandboxLines(run: RunRecord): string[] {
  const findings = (run.screeningFindings ?? []).filter((f) => f.scanner === 'sandbox');
  const lines: string[] = [];
  for (const f of findings) {
    if (f.rule === 'policy') lines.push(`  sandbox:     ${f.excerpt}`);
    else lines.push(`    ${f.severity.padEnd(8)} ${f.excerpt}`);
  }
  return lines;
}

/** What screening found and decided, and any allowance of a blocked run. */
export function screeningLines(run: RunRecord, allowances: readonly Allowance[] = []): string[] {
  const findings = (run.screeningFindings ?? []).filter((f) => f.scanner !== 'sandbox');
  if (run.screeningReason === null && findings.length === 0) return [];
  const lines = [`  screening:   ${run.screeningReason ?? '-'}`];
  if (findings.length > 0) {
    lines.push(`  findings:    ${findings.length}`);
    for (const f of findings)
      lines.push(
        `    ${f.severity.padEnd(8)} ${f.scanner}/${f.rule} in ${f.field} at ${f.offset}: ${f.excerpt}`,
      );
  }
  for (const a of allowances)
    lines.push(
      `  allowed:     by ${a.allowedBy} at ${a.allowedAt} (${a.usedAt ? `used at ${a.usedAt}` : 'waiting for the next dispatch'})`,
    );
  if (run.status === 'blocked' && !allowances.some((a) => a.usedAt === null))
    lines.push(`  to allow:    curupira allow ${run.id}  (lets this exact text run once)`);
  return lines;
}

/** The run's delivery: the pushed branch and its pull request (number, URL, state, since when). */
export function deliveryLines(delivery: PullRequestRecord | undefined): string[] {
  if (!delivery) return [];
  const sha = delivery.headSha ? ` at ${delivery.headSha.slice(0, 12)}` : '';
  const lines = [
    `  pushed:      ${delivery.headBranch}${sha} (${delivery.delivery === 'pr' ? 'pull request' : 'branch only'})`,
  ];
  if (delivery.number !== null) {
    lines.push(
      `  pull req.:   #${delivery.number} ${delivery.url ?? ''} ${delivery.state} since ${delivery.since}${delivery.adopted ? ' (adopted)' : ''}`,
    );
  } else if (delivery.delivery === 'pr') {
    lines.push(`  pull req.:   not opened yet (${delivery.state} since ${delivery.since})`);
  }
  if (delivery.detail) lines.push(`  delivery:    ${delivery.detail}`);
  if (delivery.gate && delivery.state === 'open')
    lines.push(
      `  follow-up:   ${delivery.gate.replace(/_/g, ' ')}${delivery.gateSince ? ` since ${delivery.gateSince}` : ''}${delivery.gateDetail ? `: ${delivery.gateDetail}` : ''}`,
    );
  return lines;
}

/** A source outside GitHub: where the item comes from (team, project, filters). */
function sourceLines(run: RunRecord, automations: readonly ResolvedAutomation[]): string[] {
  const source = runSource(run, automations);
  return source ? [`  source:      ${makeVisible(source)}`] : [];
}

/**
 * A task across repositories: each additional repository with its worktree and its delivery (the
 * primary's are the `worktree:` and delivery lines above), after a line naming them all.
 */
export function repositoryLines(repositories: readonly RunRepository[]): string[] {
  const lines = [
    `  repositories: ${repositories.map((r) => `${r.alias} (${r.repo}${r.primary ? ', primary' : ''})`).join(', ')}`,
  ];
  for (const r of repositories) {
    if (r.primary) continue;
    lines.push(`  repository:  ${r.repo} (${r.alias})`);
    if (r.worktreePath) lines.push(`  worktree:    ${r.worktreePath}`);
    lines.push(...deliveryLines(r.delivery ?? undefined));
  }
  return lines;
}

/** What became of a run's worktree, in words for `runs show`. */
function worktreeState(run: RunRecord, automations: readonly ResolvedAutomation[]): string {
  if (!run.worktreeKept) return '(removed)';
  if (runAutomation(run, automations)?.config.keep_worktree === 'always')
    return '(kept for inspection: keep_worktree = "always"; `curupira gc` removes it)';
  return `(kept: ${run.commits} unpushed commit${run.commits === 1 ? '' : 's'} or uncommitted changes)`;
}

export function runLines(
  run: RunRecord,
  transcript: string[] | undefined,
  allowances: readonly Allowance[] = [],
  delivery?: PullRequestRecord,
  automations: readonly ResolvedAutomation[] = [],
  /** A task across repositories: the deliveries of its other repositories (delivery/repositories.ts). */
  others: readonly PullRequestRecord[] = [],
): string[] {
  const link = runItemLink(run);
  const lines = [
    `run ${run.id}`,
    `  automation:  ${run.automationId}`,
    `  status:      ${run.status}${run.reason ? ` (${run.reason})` : ''}`,
    ...(run.result
      ? [
          `  result:      ${makeVisible(formatResult(run.result))} (by ${run.result.via === 'tool' ? 'the result tool' : 'its result line'})`,
        ]
      : []),
    ...(run.inputs ? [`  inputs:      ${makeVisible(formatInputs(run.inputs))}`] : []),
    `  item:        ${runItemName(run, automations)} ${JSON.stringify(run.itemTitle)}${link ? ` ${link}` : ''}`,
    `  item key:    ${run.itemKey}`,
    ...sourceLines(run, automations),
    `  created:     ${run.createdAt} (times are UTC)`,
    `  started:     ${run.startedAt ?? '-'}`,
    `  finished:    ${run.finishedAt ?? '-'} (${duration(run)})`,
  ];
  lines.push(...sandboxLines(run));
  lines.push(...screeningLines(run, allowances));
  if (run.scheduledFor) lines.push(`  scheduled:   ${run.scheduledFor}`);
  if (run.upstreamRunId) lines.push(`  after run:   ${run.upstreamRunId}`);
  if (run.host) lines.push(`  host:        ${makeVisible(run.host)}`);
  lines.push(`  agent:       ${run.profile ?? '-'} (${run.provider ?? '-'})`);
  lines.push(`  session:     ${run.sessionId ?? '-'}${run.resumed ? ' (resumed)' : ''}`);
  if (run.exitCode !== null || run.signal) lines.push(`  exit:        ${run.exitCode ?? run.signal}`);
  if (run.usage) {
    lines.push(
      `  usage:       ${run.usage.inputTokens} input (${run.usage.cachedInputTokens} cached), ${run.usage.outputTokens} output tokens${
        run.usage.costUsd === undefined ? '' : `, $${run.usage.costUsd.toFixed(4)}`
      }`,
    );
  }
  lines.push(`  cost:        ${formatCost(run.costUsd)}${run.model ? ` (${run.model})` : ''}`);
  if (run.branch) lines.push(`  branch:      ${run.branch}`);
  const code = describeRunCode(run, findTriggerDefinition(run.taskType));
  if (code) lines.push(`  code:        ${code}`);
  if (run.worktreePath) lines.push(`  worktree:    ${run.worktreePath} ${worktreeState(run, automations)}`);
  lines.push(...deliveryLines(delivery));
  const repositories = runRepositories(run, runAutomation(run, automations), [
    ...(delivery ? [delivery] : []),
    ...others,
  ]);
  if (repositories.length > 0) lines.push(...repositoryLines(repositories));
  else for (const other of others) lines.push(`  repository:  ${other.repo}`, ...deliveryLines(other));
  if (run.transcriptPath) lines.push(`  transcript:  ${run.transcriptPath}`);
  if (run.prompt) {
    lines.push(
      '',
      'prompt:',
      ...run.prompt
        .trimEnd()
        .split('\n')
        .map((l) => `  ${l}`),
    );
  }
  if (transcript) lines.push('', 'transcript:', ...transcript.map((l) => `  ${l}`));
  return lines;
}

/** A run of a task across repositories: `  [+1 repo]`, how many besides the primary (none otherwise). */
function repositoriesNote(run: RunRecord, automations: readonly ResolvedAutomation[]): string {
  const more = runAutomation(run, automations)?.additionalRepositories?.length ?? 0;
  return more > 0 ? `  [+${more} repo${more === 1 ? '' : 's'}]` : '';
}

/** The run list with a header row; times are UTC, as the header says. */
/**
 * The run list. A run whose task runs again by itself says when under its row (`retry 2/3 at
 * 14:05:30`, `parked until 15:00:00`; `maxAttemptsOf` gives the automation's `max_attempts`).
 */
export function runTable(
  list: readonly RunRecord[],
  maxAttemptsOf?: (automationId: string) => number | undefined,
  automations: readonly ResolvedAutomation[] = [],
): string[] {
  const rows = list.map((run) => [
    run.id,
    run.result && run.result.outcome !== run.status ? `${run.status} (${run.result.outcome})` : run.status,
    run.createdAt.slice(0, 19).replace('T', ' '),
    duration(run),
    formatCost(run.costUsd),
    run.automationId,
    runItemName(run, automations),
    `${JSON.stringify(run.itemTitle)}${repositoriesNote(run, automations)}${run.worktreeKept ? '  [kept worktree]' : ''}`,
  ]);
  const header = ['ID', 'STATUS', 'CREATED (UTC)', 'TIME', 'COST', 'AUTOMATION', 'ITEM', 'TITLE'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const format = (cells: string[]): string =>
    cells
      .map((cell, i) =>
        i === cells.length - 1
          ? cell
          : i === 3 || i === 4
            ? cell.padStart(widths[i]!)
            : cell.padEnd(widths[i]!),
      )
      .join('  ');
  // An escalated item waits for a person: its reason (what to do) goes right under its row.
  return [
    format(header),
    ...rows.flatMap((row, i) => {
      const run = list[i]!;
      const pending = pendingNote(run, maxAttemptsOf?.(run.automationId));
      if (pending) return [format(row), `  └ ${pending}`];
      return run.status === 'escalated' && run.reason ? [format(row), `  └ ${run.reason}`] : [format(row)];
    }),
  ];
}

/** A run by its id, or by a prefix of it that only one run has (case-insensitive). */
export async function findRun(
  store: Store,
  id: string,
): Promise<{ run: RunRecord | undefined; candidates: RunRecord[] }> {
  const exact = await store.getRun(id);
  if (exact) return { run: exact, candidates: [exact] };
  const prefix = id.trim().toUpperCase();
  if (prefix === '') return { run: undefined, candidates: [] };
  const candidates = (await store.listRuns({ limit: Number.POSITIVE_INFINITY })).filter((run) =>
    run.id.toUpperCase().startsWith(prefix),
  );
  return { run: candidates.length === 1 ? candidates[0] : undefined, candidates };
}

/** A fleet run that ran on another host: the copy of its transcript its worker shared, if any. */
async function sharedTranscript(settings: Settings, run: RunRecord): Promise<string[] | undefined> {
  if (!run.provider || !run.host || !settings.execution.state_db_url) return undefined;
  const fleet = await (await import('./fleet.js')).openFleetView(settings);
  if (!fleet) return undefined;
  try {
    const text = await fleet.view.transcript(run.id).catch(() => undefined);
    return text === undefined ? undefined : renderEvents(transcriptEvents(run.provider, text));
  } finally {
    await fleet.close();
  }
}

/** Streams a running run's events from the daemon, as `runs show` renders a transcript. */
async function followFromDaemon(io: CliIo, dir: string, runId: string): Promise<void> {
  const daemon = await connectDaemon(dir);
  if (!daemon) {
    writeLine(io.stderr, 'error: no daemon running; start `curupira serve` to follow a run live');
    setExitCode(EXIT.failure);
    return;
  }
  writeLine(io.stdout);
  writeLine(io.stdout, 'live events:');
  await daemon.events(`/runs/${encodeURIComponent(runId)}/events`, (event, data) => {
    if (event === 'agent') {
      for (const line of renderEvents([JSON.parse(data) as AgentEvent])) writeLine(io.stdout, `  ${line}`);
    } else if (event === 'end') {
      const run = JSON.parse(data) as RunRecord;
      writeLine(io.stdout, `run ${run.id} ended: ${run.status}${run.reason ? ` (${run.reason})` : ''}`);
    }
  });
}

/**
 * The run `id` names (or a prefix only one run has); undefined after saying on stderr why not
 * (no such run, or an ambiguous prefix with its candidates), with exit code 1.
 */
export async function runFromArgument(
  store: Store,
  id: string,
  io: CliIo,
  hint = '`curupira runs` lists them.',
): Promise<RunRecord | undefined> {
  const found = await findRun(store, id);
  if (found.candidates.length > 1) {
    writeLine(io.stderr, `Run id prefix ${id} is ambiguous; it matches:`);
    for (const line of runTable(found.candidates)) writeLine(io.stderr, `  ${line}`);
    setExitCode(EXIT.failure);
    return undefined;
  }
  if (!found.run) {
    writeLine(io.stderr, `No run with id ${id}; ${hint}`);
    setExitCode(EXIT.failure);
  }
  return found.run;
}

export function registerRuns(program: Command, io: CliIo, globals: () => GlobalOptions): void {
  const runs = program
    .command('runs')
    .description(
      'List runs from the history (newest first; times in UTC); `runs show ID` for one run and its transcript.',
    )
    .option('--automation <id>', 'only this automation')
    .option('--status <list>', `only these statuses, comma-separated (${RUN_STATUSES.join(', ')})`)
    .option('--limit <n>', 'at most N runs', '50')
    .option('--json', 'print JSON')
    .action(async (options: { automation?: string; status?: string; limit: string; json?: boolean }) => {
      if (!/^\d+$/.test(options.limit) || Number(options.limit) < 1)
        throw new UsageError(`--limit must be a positive integer, got '${options.limit}'`);
      const statuses = parseStatuses(options.status);
      const { settings } = loadSettings(globals().config);
      const store = await openStore(stateLocation(settings.execution), { readonly: true });
      try {
        const list = await store.listRuns({
          ...(options.automation ? { automationId: options.automation } : {}),
          ...(statuses ? { status: statuses } : {}),
          limit: Number(options.limit),
        });
        if (options.json) {
          writeJson(io.stdout, list);
          return;
        }
        const known = settings.automations.map((a) => a.id);
        if (list.length === 0 && options.automation && !known.includes(options.automation))
          throw new UsageError(
            `unknown automation '${options.automation}': no run has it and the settings have none by that name (automations: ${known.join(', ') || 'none'})`,
          );
        if (list.length === 0) {
          const filters = [
            ...(options.automation ? [`--automation ${options.automation}`] : []),
            ...(statuses ? [`--status ${statuses.join(',')}`] : []),
          ];
          const any = filters.length > 0 && (await store.listRuns({ limit: 1 })).length > 0;
          writeLine(
            io.stdout,
            any ? `No runs match ${filters.join(' ')}; \`curupira runs\` lists them all.` : 'No runs yet.',
          );
          return;
        }
        const attemptsOf = (id: string) => {
          const automation = settings.automations.find((a) => a.id === id);
          return automation ? maxAttempts(settings, automation) : undefined;
        };
        for (const line of runTable(list, attemptsOf, settings.automations)) writeLine(io.stdout, line);
      } finally {
        await store.close();
      }
    });
  runs
    .command('show <id>')
    .description(
      'One run (its id, or a prefix only one run has): outcome, timings, item, session, usage, kept worktree, and the transcript as readable text.',
    )
    .option('--json', 'print JSON (without the transcript)')
    .option('--follow', 'while the run goes on, stream its agent events from the daemon (`curupira serve`)')
    .action(async (id: string, options: { json?: boolean; follow?: boolean }) => {
      const { settings } = loadSettings(globals().config);
      const store = await openStore(stateLocation(settings.execution), { readonly: true });
      try {
        const run = await runFromArgument(store, id, io);
        if (!run) return;
        if (options.json) {
          // As `GET /api/v1/runs/{id}` adds them: the source outside GitHub (null otherwise) and,
          // for a task across repositories, each repository with its worktree and delivery.
          const { source, repositories } = await runSourceAndRepositories(store, settings.automations, run);
          writeJson(io.stdout, { ...run, source: source ?? null, repositories });
          return;
        }
        if (options.follow && !isTerminal(run.status)) {
          for (const line of runLines(run, undefined, [], undefined, settings.automations))
            writeLine(io.stdout, line);
          await followFromDaemon(io, stateDir(settings), run.id);
          return;
        }
        await loadDrivers([run.provider]);
        const transcript =
          run.transcriptPath && run.provider && existsSync(run.transcriptPath)
            ? renderTranscriptFile(run.provider, run.transcriptPath)
            : await sharedTranscript(settings, run);
        const allowances = await store.listAllowances({ runId: run.id });
        // A remediation run (issue 13) pushed to the delivery of the run it follows: show that one.
        const delivery = await shownDelivery(store, run);
        const others = (await store.listPullRequests({ taskKey: run.taskKey }).catch(() => [])).filter(
          (d) => d.runId !== run.id && deliveryRunId(d.runId) === run.id,
        );
        for (const line of runLines(run, transcript, allowances, delivery, settings.automations, others))
          writeLine(io.stdout, line);
      } finally {
        await store.close();
      }
    });
}
