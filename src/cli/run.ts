import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { loadDriver } from '../agents/registry.js';
import { automationsFileOf } from '../config/automations-file.js';
import { loadSettings } from '../config/load.js';
import type { ResolvedAutomation, Settings } from '../config/types.js';
import { systemClock } from '../core/clock.js';
import { type ConfigError, UsageError } from '../core/errors.js';
import type { RunRecord } from '../core/types.js';
import { isFailure } from '../core/types.js';
import type { SelfCommand } from '../engine/executor.js';
import { logFile, transcriptsDir } from '../engine/paths.js';
import { describeTask, previewFirstTask, quoteForDisplay, type TaskPreview } from '../engine/preview.js';
import { type EngineOptions, runEngine } from '../features.js';
import { type Logger, silentLogger } from '../log.js';
import { checkInputs, parseSetPairs } from '../pipeline/inputs.js';
import { githubHosts, sandboxChoice, sandboxLimits } from '../sandbox/choice.js';
import { describeSandbox } from '../sandbox/index.js';
import { acquireStateLock, openStore, stateLocation } from '../store/index.js';
import type { Store } from '../store/types.js';
import { runItemName, taskItemName } from '../triggers/registry.js';
import { createServiceKit } from '../triggers/service.js';
import { EXIT, setExitCode } from './exit-codes.js';
import { type CliIo, writeLine } from './io.js';
import type { GlobalOptions } from './program.js';
import { engineLogger, githubAccess } from './runtime.js';
import { StatusLine } from './status-line.js';

interface RunOptions {
  watch?: boolean;
  dryRun?: boolean;
  size?: string;
  logFormat?: 'text' | 'json';
  set?: string[];
}

export function parseSize(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < 1) {
    throw new UsageError(`--size must be a positive integer, got '${value}'`);
  }
  return Number(value);
}

function checkCombination(options: RunOptions): void {
  if (options.dryRun && options.watch) throw new UsageError('--dry-run cannot be combined with --watch');
  if (options.dryRun && options.size !== undefined)
    throw new UsageError('--dry-run cannot be combined with --size');
}

export function summarizeRuns(runs: readonly RunRecord[], discoveryFailed = false, held = 0): string[] {
  if (runs.length === 0)
    return [discoveryFailed || held > 0 ? 'No run started.' : 'No matching task is currently available.'];
  const counts = new Map<string, number>();
  for (const run of runs) counts.set(run.status, (counts.get(run.status) ?? 0) + 1);
  const lines = [
    `${runs.length} run${runs.length === 1 ? '' : 's'}: ${[...counts].map(([s, n]) => `${n} ${s.replace('_', ' ')}`).join(', ')}`,
  ];
  for (const run of runs) {
    let line = `  ${run.status.padEnd(9)} ${run.automationId} ${runItemName(run)} ${JSON.stringify(run.itemTitle)} (${run.id})`;
    if (run.worktreeKept && run.worktreePath) {
      line += `\n            kept worktree ${run.worktreePath} on ${run.branch} (${run.commits} unpushed commit${run.commits === 1 ? '' : 's'})`;
    }
    if (run.reason) line += `\n            ${run.reason}`;
    lines.push(line);
  }
  return lines;
}

/** What `run --watch` says first: which file, how many automations, where the log goes. */
export function watchBanner(settings: Settings): string {
  const n = settings.automations.length;
  return `Watching ${n} automation${n === 1 ? '' : 's'} (${settings.automations.map((a) => a.id).join(', ')}) from ${settings.file}; log: ${logFile(settings)}. Ctrl+C stops.`;
}

/** The dry run's account of what the agent would get and where it would run. */
export function previewLines(preview: TaskPreview): string[] {
  const argv = preview.argv.map((arg, i) =>
    i === preview.promptArgIndex ? '"$PROMPT"' : quoteForDisplay(arg),
  );
  const lines = [
    `profile:  ${preview.profileName} (provider ${preview.provider})`,
    preview.branch
      ? `worktree: ${preview.cwd} on branch ${preview.branch}`
      : `checkout: ${preview.cwd} (the shared checkout as it is)`,
    ...(preview.additional ?? []).map(
      (w) => `          also ${w.alias} (${w.repo}): worktree ${w.path} on branch ${preview.branch}`,
    ),
    `code:     ${preview.code}`,
    `command:  ${argv.join(' ')}`,
  ];
  if (preview.promptArgIndex !== undefined) {
    lines.push(
      `          ($PROMPT is ${preview.resumeSessionId ? 'the resume message below' : 'the prompt below'}, as one argument; run in the ${preview.branch ? 'worktree' : 'checkout'})`,
    );
  }
  if (preview.envNames.length > 0) lines.push(`env:      also sets ${preview.envNames.join(', ')}`);
  if (preview.resumeSessionId) {
    lines.push(
      `session:  resumes saved session ${preview.resumeSessionId}; the agent is told:`,
      '--- resume message ---',
      ...preview.resumePrompt!.trimEnd().split('\n'),
      '--- end of resume message ---',
      'Its original prompt:',
    );
  }
  lines.push('--- prompt ---', ...preview.prompt.trimEnd().split('\n'), '--- end of prompt ---');
  return lines;
}

/** The sandbox the run would get here: backend (probed), writable paths, hosts, limits, or none and why. */
export async function sandboxPreview(
  automation: ResolvedAutomation,
  settings: Settings,
  /** A task across repositories: its other worktrees and checkouts, writable as in the run. */
  alsoWritable: readonly string[] = [],
): Promise<string[]> {
  const { profile } = automation;
  const driver = await loadDriver(profile.provider);
  const hosts = [
    ...(driver.sandbox?.hosts ?? []),
    ...profile.sandbox_hosts,
    ...automation.config.sandbox_hosts,
    ...(profile.github_token ? githubHosts(settings.execution.github.api_url) : []),
  ];
  const policy = await describeSandbox(
    sandboxChoice(automation, settings.execution),
    hosts,
    sandboxLimits(settings.execution),
  );
  const lines = [`sandbox:  ${policy.summary}`];
  if (policy.backend !== 'none') {
    lines.push(
      `          writable: ${[...policy.writable, ...profile.sandbox_write_paths, ...alsoWritable].join(', ')}`,
    );
    lines.push(`          hosts: ${policy.hosts.join(', ') || 'none'}`);
    if (driver.sandbox?.keys?.length)
      lines.push('          model keys: held outside by the key proxy when set in the environment');
    lines.push(`          limits: ${policy.limits.join(', ')}`);
  }
  return lines;
}

/** Held items `run --dry-run` names one by one before it says how many more it passed over. */
const PASSED_SHOWN = 10;

async function dryRun(settings: Settings, io: CliIo): Promise<void> {
  const log = silentLogger();
  const access = githubAccess(settings, io.env, log);
  const store = await openStore(stateLocation(settings.execution), { readonly: true });
  try {
    const { found, passed } = await previewFirstTask(settings, {
      github: access.client,
      clock: systemClock,
      log,
      store,
      service: createServiceKit({ env: io.env, dir: settings.dir }),
      env: io.env,
    });
    for (const held of passed.slice(0, PASSED_SHOWN))
      writeLine(
        io.stdout,
        `Passed over ${held.automation.id}: ${taskItemName(held.automation, held.task)}: ${held.why}.`,
      );
    if (passed.length > PASSED_SHOWN)
      writeLine(
        io.stdout,
        `Passed over ${passed.length - PASSED_SHOWN} more held items (\`curupira runs --status blocked,escalated,cancelled\` lists their runs).`,
      );
    if (!found) {
      writeLine(
        io.stdout,
        passed.length > 0
          ? 'No task would run now: every match is held, as said above.'
          : 'No matching task is currently available.',
      );
      return;
    }
    const { automation, task } = found;
    writeLine(io.stdout, `Selected ${automation.id}: ${taskItemName(automation, task)}: ${task.item.title}`);
    writeLine(io.stdout, task.item.url);
    if (found.screening) writeLine(io.stdout, `screening: ${found.screening}`);
    const source = automation.trigger.sourceSummary?.(automation);
    if (source) writeLine(io.stdout, `source:   ${source}`);
    const preview = await describeTask(automation, task, store, io.env);
    for (const line of previewLines(preview)) writeLine(io.stdout, line);
    const alsoWritable = (preview.additional ?? []).flatMap((w) => [w.path, w.checkout]);
    for (const line of await sandboxPreview(automation, settings, alsoWritable)) writeLine(io.stdout, line);
    writeLine(io.stdout, 'Dry run: no task was reserved or executed.');
  } finally {
    await store.close();
  }
}

export function registerRun(program: Command, io: CliIo, globals: () => GlobalOptions): void {
  program
    .command('run')
    .description('Run agents on the tasks available now (or keep watching with --watch).')
    .option('--watch', 'keep polling until stopped (Ctrl+C); reloads the settings file when it changes')
    .option('--size <n>', 'start at most N runs, then finish them and exit')
    .option('--dry-run', 'show the first task that would run, without reserving or running anything')
    .option('--log-format <format>', 'text or json log lines', 'text')
    .option(
      '--set <key=value>',
      "an input for this invocation's runs (repeatable): each automation that declares the key in `inputs` reads it as ${key}",
      (value: string, previous: string[]) => [...previous, value],
      [] as string[],
    )
    .action(async (options: RunOptions) => {
      checkCombination(options);
      const size = parseSize(options.size);
      if (options.logFormat !== 'text' && options.logFormat !== 'json') {
        throw new UsageError(`--log-format must be text or json, got '${options.logFormat}'`);
      }
      const { config: file, logLevel } = globals();
      const { settings, warnings } = loadSettings(file);
      const inputs = parseSetPairs(options.set ?? []);
      checkInputs(inputs, settings.automations);
      for (const warning of warnings) writeLine(io.stderr, `warning: ${warning}`);
      if (options.dryRun) {
        await dryRun(settings, io);
        return;
      }
      if (options.watch && options.logFormat === 'text') writeLine(io.stderr, watchBanner(settings));
      const lock = await acquireStateLock(settings.execution.state_db_path);
      const store = await openStore(stateLocation(settings.execution));
      const status = io.stderr.isTTY && options.logFormat === 'text' ? new StatusLine(io.stderr) : undefined;
      const log = engineLogger({
        settings,
        console: status
          ? ({ write: (text: string) => status.write(text) } as NodeJS.WritableStream)
          : io.stderr,
        format: options.logFormat,
        ...(logLevel ? { level: logLevel } : {}),
      });
      const { signals, engineBase } = engineControls(settings, io, log, file);
      const onSignal = signals.handle;
      process.on('SIGINT', onSignal);
      process.on('SIGTERM', onSignal);
      try {
        const result = await runEngine({
          ...engineBase(store),
          mode: options.watch ? 'watch' : 'drain',
          ...(size === undefined ? {} : { size }),
          ...(Object.keys(inputs).length > 0 ? { inputs } : {}),
          ...(options.watch ? { reload: settingsReloader(file) } : {}),
          ...(status ? { onStatus: (s) => status.update(s) } : {}),
        });
        status?.close();
        for (const line of summarizeRuns(result.runs, result.discoveryErrors.length > 0, result.held.length))
          writeLine(io.stdout, line);
        for (const run of result.held) {
          const item = `${run.automationId} ${runItemName(run)} ${JSON.stringify(run.itemTitle)}`;
          writeLine(
            io.stdout,
            run.status === 'cancelled'
              ? `  still cancelled: ${item}: an operator cancelled run ${run.id}; Retry on the board (or POST /api/v1/runs/${run.id}/retry) runs it again`
              : `  still blocked: ${item}: unchanged since run ${run.id}; \`curupira allow ${run.id}\` lets it run once`,
          );
        }
        for (const { automationId, message } of result.discoveryErrors) {
          writeLine(io.stderr, `Discovery failed for ${automationId}: ${message}`);
        }
        for (const { automationId, count } of result.waiting) {
          writeLine(
            io.stdout,
            `${count} more matching item${count === 1 ? '' : 's'} of ${automationId} wait${count === 1 ? 's' : ''} beyond batch_size (${settings.execution.polling.batch_size}); the next run reaches them`,
          );
        }
        const failed = result.runs.some((r) => isFailure(r.status)) || result.discoveryErrors.length > 0;
        setExitCode(signals.interrupted() ? EXIT.interrupted : failed ? EXIT.failure : EXIT.ok);
      } finally {
        status?.close();
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
        await store.close();
        await lock.release();
      }
    });
}

/**
 * Ctrl+C: first drain (no new runs, running agents finish), then stop them now (sessions kept),
 * then exit at once. SIGTERM does what `shutdown` says first, then the same.
 */
export function signalHandler(
  settings: Settings,
  log: Logger,
  stop: AbortController,
  drain: AbortController,
): { handle(signal: NodeJS.Signals): void; interrupted(): boolean } {
  let interrupted = false;
  let signals = 0;
  const handle = (signal: NodeJS.Signals): void => {
    signals += 1;
    if (signal === 'SIGINT') interrupted = true;
    const first = signals === 1 && (signal === 'SIGINT' || settings.execution.shutdown === 'drain');
    if (first) {
      log.warn(
        { signal },
        'Stopping: no new runs; running agents finish first (press Ctrl+C again to stop them now; their sessions are kept)',
      );
      drain.abort();
    } else if (!stop.signal.aborted) {
      log.warn(
        { signal },
        'Stopping: no new runs; running agents are stopped and their sessions kept for resume',
      );
      stop.abort();
    } else {
      log.warn({ signal }, 'Stopping now');
      process.exit(interrupted ? EXIT.interrupted : EXIT.failure);
    }
  };
  return { handle, interrupted: () => interrupted };
}

/**
 * This curupira as an agent's CLI starts it (a review run's findings server): this Node, this
 * build's entry point, and the settings file it runs with (absolute), so it reads the same state.
 */
export function selfCommand(settingsFile: string): SelfCommand {
  return {
    command: process.execPath,
    args: [fileURLToPath(new URL('./main.js', import.meta.url)), '--config', resolve(settingsFile)],
  };
}

/** The stop and drain switches, the GitHub access they end, and the Ctrl+C/SIGTERM handler. */
export function engineControls(
  settings: Settings,
  io: CliIo,
  log: Logger,
  settingsFile: string,
): {
  stop: AbortController;
  drain: AbortController;
  access: ReturnType<typeof githubAccess>;
  signals: ReturnType<typeof signalHandler>;
  /** What every engine the CLI starts shares: settings, store, clock, log, GitHub access, signals. */
  engineBase: (store: Store) => EngineOptions;
} {
  const stop = new AbortController();
  const drain = new AbortController();
  const access = githubAccess(
    settings,
    io.env,
    log,
    systemClock,
    AbortSignal.any([stop.signal, drain.signal]),
  );
  const engineBase = (store: Store): EngineOptions => ({
    settings,
    mode: 'drain',
    store,
    clock: systemClock,
    log,
    env: io.env,
    github: access.client,
    tokens: access.tokens,
    transcriptsDir: transcriptsDir(settings),
    selfCommand: selfCommand(settingsFile),
    stopSignal: stop.signal,
    drainSignal: drain.signal,
  });
  return { stop, drain, access, signals: signalHandler(settings, log, stop, drain), engineBase };
}

/**
 * Watch mode's reload hook: the settings again when the settings file or the automations file
 * beside it (what `curupira mcp` writes) changed.
 */
export function settingsReloader(file: string): () => Settings | ConfigError | undefined {
  const both = () => `${fileMtime(file)}/${fileMtime(automationsFileOf(resolve(file)))}`;
  let mtime = both();
  return () => {
    const current = both();
    if (current === mtime) return undefined;
    mtime = current;
    try {
      return loadSettings(file).settings;
    } catch (error) {
      return error as ConfigError;
    }
  };
}

function fileMtime(file: string): number | undefined {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
}
