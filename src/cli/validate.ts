import type { Command } from 'commander';
import { loadSettings } from '../config/load.js';
import { resolveScreening } from '../config/screening.js';
import type { ResolvedAutomation, Settings } from '../config/types.js';
import { describeCodeSetting } from '../core/code-source.js';
import { ConfigError, formatConfigIssue } from '../core/errors.js';
import { repositoriesExplain } from '../delivery/repositories.js';
import { appendsItem } from '../engine/task.js';
import { resolveTargets } from '../notify/targets.js';
import { pipelineExplainRows } from '../pipeline/schema.js';
import { BODY_CAP_CHARS } from '../prompt/untrusted.js';
import { sandboxChoice, sandboxLimits } from '../sandbox/choice.js';
import { scrub } from '../workspace/git.js';
import { EXIT, setExitCode } from './exit-codes.js';
import { type CliIo, writeJson, writeLine } from './io.js';
import type { GlobalOptions } from './program.js';

export function validMessage(settings: Settings): string {
  const n = settings.automations.length;
  return `Configuration is valid (${n} automation${n === 1 ? '' : 's'}; max active tasks: ${settings.execution.max_active_tasks}).`;
}

/**
 * What this environment lacks that `run` and `serve` read at start (a notification's URL or secret):
 * the file is valid, but they would refuse to start here. Nothing is contacted.
 */
export function environmentWarnings(settings: Settings, env: NodeJS.ProcessEnv): string[] {
  try {
    resolveTargets(settings, env);
    return [];
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return error.issues.map(
      (issue) =>
        `${formatConfigIssue(issue)}: \`curupira run\` and \`serve\` refuse to start until it is set`,
    );
  }
}

/** What screening does for one automation, in one line. */
export function screeningSummary(automation: ResolvedAutomation, settings: Settings): string {
  const hook = automation.trigger.screening;
  if (hook && 'unscreened' in hook) return `not screened (${hook.unscreened})`;
  const s = resolveScreening(settings.execution.screening, automation.config.screening, settings.dir);
  if (s.mode === 'off') return 'off: text written by strangers reaches the agent unscreened';
  const { command, modelDir } = s.classifier;
  const classifier = command
    ? `classifier command ${command.join(' ')}`
    : modelDir
      ? `classifier model ${modelDir}`
      : s.required && s.mode === 'block'
        ? 'no classifier: vouched items run, unvouched ones are held'
        : 'no classifier (scanners only)';
  const trusted = s.trustedAuthors.length > 0 ? `${s.trustedAuthors.join(', ')} and ` : '';
  return `${s.mode}; ${classifier}; trusted: ${trusted}association ≥ ${s.minAuthorAssociation}${
    s.requireTrustedLabeler ? '; labels must come from a trusted actor' : ''
  }`;
}

/**
 * What happens to an item nobody trusted vouched for (its author is not trusted and no trusted
 * actor applied the labels the automation matches on), in a few words; undefined when the
 * automation is not screened.
 */
export function unvouchedSummary(automation: ResolvedAutomation, settings: Settings): string | undefined {
  const hook = automation.trigger.screening;
  if (hook && 'unscreened' in hook) return undefined;
  const s = resolveScreening(settings.execution.screening, automation.config.screening, settings.dir);
  if (s.mode === 'off') return 'run unscreened (screening is off)';
  if (s.mode === 'warn') return 'run; findings are only warnings (mode = "warn")';
  const { command, modelDir } = s.classifier;
  if (command || modelDir)
    return `run only when the scanners and the classifier (${command ? command.join(' ') : modelDir}) find nothing to block`;
  if (!s.required)
    return 'run when the deterministic scanners find nothing to block (required = false, no classifier)';
  return 'are held (blocked): no classifier is configured; set classifier_model, classifier_command or classifier_agent = true under [settings.screening], or required = false to screen them with the scanners alone';
}

/**
 * `validate`'s one line per distinct answer: what happens to unvouched items, for which automations.
 * Vouched items (a trusted author, or labels a trusted actor applied) always run, scanned.
 */
export function unvouchedLines(settings: Settings): string[] {
  const groups = new Map<string, string[]>();
  for (const automation of settings.automations) {
    const what = unvouchedSummary(automation, settings);
    if (what === undefined) continue;
    groups.set(what, [...(groups.get(what) ?? []), automation.id]);
  }
  const all = groups.size === 1 && [...groups.values()][0]!.length === settings.automations.length;
  return [...groups].map(
    ([what, ids]) =>
      `Unvouched items${all ? '' : ` (${ids.join(', ')})`} — an untrusted author, with no matching label applied by a trusted actor — ${what}.`,
  );
}

/** What `--explain` shows of one automation, as label/value rows. Remote credentials are scrubbed. */
export function explainRows(
  automation: ResolvedAutomation,
  now: Date,
  settings?: Settings,
): [string, string][] {
  const { repository } = automation;
  const rows: [string, string][] = [
    [
      'trigger',
      automation.config.trigger_type && automation.config.trigger_type !== automation.triggerType
        ? `${automation.triggerType} (written as ${automation.config.trigger_type})`
        : automation.triggerType,
    ],
    ['repository', `${repository.alias} (${scrub(repository.remote)} → ${repository.checkoutPath})`],
    [
      'checkout',
      automation.config.checkout === 'main'
        ? 'main (the shared checkout as it is; one run at a time)'
        : 'worktree (a new worktree and branch per task)',
    ],
    ['code', `the agent sees ${describeCodeSetting(automation.config, automation.trigger)}`],
    [
      'profile',
      `${automation.profileName} (provider ${automation.profile.provider}${automation.profile.model ? `, model ${automation.profile.model}` : ''})`,
    ],
  ];
  const repositories = repositoriesExplain(automation);
  if (repositories) rows.splice(2, 0, [repositories.label, repositories.value]);
  if (automation.automationsFile)
    rows.unshift([
      'written in',
      `${automation.automationsFile} (the automations file \`curupira mcp\` writes)`,
    ]);
  if (automation.config.enabled === false)
    rows.unshift([
      'state',
      'disabled (enabled = false): never polled or fired, shown paused on the board; edit the file to enable it',
    ]);
  for (const line of automation.trigger.explain(automation, now)) rows.push([line.label, line.value]);
  rows.push([
    'prompt',
    `${automation.promptSyntax === 'jinja' ? 'Jinja syntax' : '${…} template'}; placeholders: ${
      automation.placeholders.length > 0 ? automation.placeholders.join(', ') : 'none'
    }${appendsItem(automation) ? "; names no item, so the item's number, title and fenced body are appended" : ''}`,
  ]);
  rows.push(...pipelineExplainRows(automation.config));
  rows.push(...deliveryRows(automation));
  if (settings) rows.push(['screening', screeningSummary(automation, settings)]);
  const untrusted = automation.placeholders.filter((p) => automation.trigger.untrustedFields.includes(p));
  if (untrusted.length > 0) {
    const fenced = automation.config.untrusted_text !== 'raw';
    rows.push([
      'untrusted text',
      `${untrusted.join(', ')} (written by anyone who can open an item; ${fenced ? 'fenced as data' : 'inserted raw (unsafe)'}, bodies capped at ${BODY_CAP_CHARS} characters)`,
    ]);
  }
  if (settings) rows.push(['sandbox', sandboxRow(automation, settings)]);
  return rows;
}

/** The effective sandbox as configured (what starts here is `run --dry-run`'s and `doctor`'s to say). */
function sandboxRow(automation: ResolvedAutomation, settings: Settings): string {
  const choice = sandboxChoice(automation, settings.execution);
  if (choice.mode === 'none') return `none (${choice.source}): the agent reaches what curupira's user can`;
  const profile = automation.profile;
  const hosts = [
    `${profile.provider}'s API`,
    ...profile.sandbox_hosts,
    ...automation.config.sandbox_hosts,
    ...(profile.github_token ? ['GitHub'] : []),
  ];
  const limits = sandboxLimits(settings.execution);
  const start =
    choice.mode === 'auto'
      ? 'bubblewrap where it starts, else none with a warning on the run'
      : choice.mode === 'required'
        ? 'the best sandbox that starts, else the run fails'
        : 'bubblewrap, else the run fails';
  const writable = [
    automation.additionalRepositories?.length
      ? 'every repository’s worktree, checkout and git directories'
      : 'the worktree and its git directories',
    ...profile.sandbox_write_paths,
  ];
  return `${choice.mode} (${choice.source}): ${start}; writable: ${writable.join(', ')}; private home and /tmp; hosts: ${hosts.join(', ')}; limits: ${limits.memoryMb} MiB, ${limits.maxProcesses} processes`;
}

/** What `deliver` writes, and how a delivered pull request is followed (docs/pull-requests.md). */
function deliveryRows(automation: ResolvedAutomation): [string, string][] {
  const c = automation.config;
  if (!c.deliver) return [];
  const named = automation.trigger.firesAreOccasions
    ? 'curupira/<automation>/<date>-<time> of the fire, UTC'
    : 'curupira/<automation>/<number>-<title>';
  if (c.deliver === 'branch')
    return [
      [
        'delivery',
        `WRITES: pushes the run’s branch (as ${named}) when it succeeds (never forced); no pull request`,
      ],
    ];
  if (c.deliver === 'head')
    return [
      [
        'delivery',
        'WRITES: pushes the agent’s commits to the pull request’s own branch when it succeeds (fast-forward only; never to a fork’s branch)',
      ],
    ];
  const base = c.pr_base_branch ? ` into ${c.pr_base_branch}` : '';
  const actions = [
    `answers trusted reviews${c.trusted_bots.length > 0 ? ` (and ${c.trusted_bots.join(', ')})` : ''} and failing checks${c.rerun_failed_checks ? ' (failed jobs re-run once first)' : ''} with up to ${c.remediation_budget} remediation run${c.remediation_budget === 1 ? '' : 's'} in the same session`,
    c.resolve_conflicts ? 'resolves conflicts (one run per head and base)' : 'a conflict needs a person',
    c.update_branch ? 'updates a branch behind its base' : 'a branch behind its base stays behind',
    c.merge === 'auto'
      ? `merges (${c.merge_method}) once approved and green${c.human_merge_paths.length > 0 ? `, unless it touches ${c.human_merge_paths.join(', ')}` : ''}`
      : 'a person merges',
  ];
  const across = automation.additionalRepositories?.length
    ? `; across repositories: one pull request in each repository that changed, each linking the others, followed as one unit (the item is closed once, when the last one merges)`
    : '';
  return [
    [
      'delivery',
      `WRITES: pushes the run’s branch (as ${named}) and opens a ${c.pr_draft ? 'draft ' : ''}pull request${base} (or adopts the open one)${across}${automation.trigger.firesAreOccasions ? '; while it is open, the next fires are skipped' : ''}`,
    ],
    ['follow-up', `every ${c.follow_interval} s while watching: ${actions.join('; ')}`],
  ];
}

/** The `--explain` block of one automation: what it will do, before anything runs. */
export function explainAutomation(automation: ResolvedAutomation, now: Date, settings?: Settings): string[] {
  const rows = explainRows(automation, now, settings);
  const width = Math.max(...rows.map(([label]) => label.length)) + 1;
  return [
    `automation ${automation.id}`,
    ...rows.map(([label, value]) => `  ${`${label}:`.padEnd(width + 1)}${value}`),
  ];
}

export function registerValidate(program: Command, io: CliIo, globals: () => GlobalOptions): void {
  program
    .command('validate')
    .description('Check the settings file without contacting GitHub or writing anything.')
    .option(
      '--explain',
      'also show what each automation will do: trigger, repository, profile, search query, schedule, placeholders',
    )
    .option('--json', 'print the result as JSON on stdout (problems included; exit codes unchanged)')
    .action((options: { explain?: boolean; json?: boolean }) => {
      if (options.json) {
        const { code, report } = validationReport(globals().config, new Date(), io.env);
        writeJson(io.stdout, report);
        setExitCode(code);
        return;
      }
      const { settings, warnings } = loadSettings(globals().config);
      for (const warning of [...warnings, ...environmentWarnings(settings, io.env)])
        writeLine(io.stderr, `warning: ${warning}`);
      writeLine(io.stdout, validMessage(settings));
      for (const line of unvouchedLines(settings)) writeLine(io.stdout, line);
      if (options.explain) {
        const now = new Date();
        for (const automation of settings.automations) {
          writeLine(io.stdout);
          for (const line of explainAutomation(automation, now, settings)) writeLine(io.stdout, line);
        }
      }
    });
}

export interface ValidationReport {
  valid: boolean;
  file: string;
  problems: { path: string; message: string; line: number | null; column: number | null }[];
  warnings: string[];
  maxActiveTasks?: number;
  automations?: {
    id: string;
    trigger: string;
    repository: { alias: string; remote: string; checkout: string };
    profile: string;
    provider: string;
    model: string | null;
    placeholders: string[];
    untrustedPlaceholders: string[];
    explain: Record<string, string>;
  }[];
}

/** `validate --json`: the same verdict as the text form, as one JSON document. */
export function validationReport(
  file: string,
  now: Date,
  env: NodeJS.ProcessEnv,
): { code: number; report: ValidationReport } {
  try {
    const loaded = loadSettings(file);
    const { settings } = loaded;
    const warnings = [...loaded.warnings, ...environmentWarnings(settings, env)];
    return {
      code: EXIT.ok,
      report: {
        valid: true,
        file: settings.file,
        problems: [],
        warnings,
        maxActiveTasks: settings.execution.max_active_tasks,
        automations: settings.automations.map((automation) => ({
          id: automation.id,
          trigger: automation.triggerType,
          repository: {
            alias: automation.repository.alias,
            remote: scrub(automation.repository.remote),
            checkout: automation.repository.checkoutPath,
          },
          profile: automation.profileName,
          provider: automation.profile.provider,
          model: automation.profile.model ?? null,
          placeholders: automation.placeholders,
          untrustedPlaceholders: automation.placeholders.filter((p) =>
            automation.trigger.untrustedFields.includes(p),
          ),
          explain: Object.fromEntries(explainRows(automation, now, settings)),
        })),
      },
    };
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return {
      code: EXIT.config,
      report: {
        valid: false,
        file,
        problems: error.issues.map((issue) => ({
          path: issue.path,
          message: issue.message,
          line: issue.line ?? null,
          column: issue.column ?? null,
        })),
        warnings: [],
      },
    };
  }
}
