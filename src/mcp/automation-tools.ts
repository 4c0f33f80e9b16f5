/**
 * The tools `curupira mcp` offers for automations and runs: list them with their state, validate,
 * create, change and delete automations (in the automations file only), run one now, pause and
 * resume, list runs and read one with its transcript. Each call reads the settings afresh, so what
 * the daemon, the board and `validate` see is what these tools see. The server acts on this
 * curupira only: the settings file it was started with and its state.
 */
import { existsSync } from 'node:fs';
import { z } from 'zod';
import { loadDrivers } from '../agents/registry.js';
import { renderTranscriptFile } from '../agents/transcript.js';
import { automationsFileOf } from '../config/automations-file.js';
import { loadSettings } from '../config/load.js';
import type { ResolvedAutomation, Settings } from '../config/types.js';
import { type ConfigIssue, errorMessage, formatConfigIssue } from '../core/errors.js';
import { RUN_STATUSES, type RunRecord } from '../core/types.js';
import { checkInputs, inputsFromJson } from '../pipeline/inputs.js';
import { pauseReasonKey } from '../retries/unattended.js';
import { openStore, stateLocation } from '../store/index.js';
import type { Store } from '../store/types.js';
import { IDENTIFIER_PATTERN } from '../triggers/common-schema.js';
import { runItemName } from '../triggers/registry.js';
import { judge, readAgentTables, type Tables, writeAgentFile } from './automations-file.js';
import { type McpTool, type ToolAnswer, tool } from './stdio.js';

/** A running `curupira serve` of these settings, reached over its socket. */
export interface DaemonPort {
  call(
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: Record<string, unknown> }>;
}

export interface AutomationToolsOptions {
  /** Absolute path of the settings file. */
  settingsFile: string;
  /** The daemon of these settings, when one runs (the composition root wires the socket client). */
  daemon(settings: Settings): Promise<DaemonPort | undefined>;
  /** What `validate --explain` shows of one automation. */
  explain(automation: ResolvedAutomation, settings: Settings): string[];
}

const NO_DAEMON = 'no daemon running; start `curupira serve`';
/** How much of a transcript `run_show` returns: its last lines. */
const TRANSCRIPT_LINES = 200;

const Id = z.string().regex(new RegExp(IDENTIFIER_PATTERN), 'must contain only letters, digits, `_` and `-`');
const Table = z
  .record(z.string(), z.unknown())
  .describe(
    'The automation’s keys, as in an [automations.<id>] table of the settings file (trigger_type, repository, prompt, …); docs/configuration.md lists them',
  );

function json(data: Record<string, unknown>, text?: string): ToolAnswer {
  return { text: text ?? JSON.stringify(data, null, 2), data };
}

function refused(message: string, data: Record<string, unknown> = {}): ToolAnswer {
  return { text: message, data: { error: message, ...data }, isError: true };
}

/**
 * A refused change's problems. Those in the automations file are located in text that was never
 * written (the file on disk is unchanged), so they are given by key path alone; a problem in the
 * settings file keeps its line.
 */
function problemsAnswer(problems: readonly ConfigIssue[], unwritten: string): ToolAnswer {
  problems = problems.map((p) => {
    if (p.file !== unwritten) return p;
    const { file: _file, line: _line, column: _column, ...rest } = p;
    return rest;
  });
  const lines = problems.map(formatConfigIssue);
  return refused(
    `the automation is refused (the same check as \`curupira validate\`; nothing was written):\n${lines.map((l) => `  - ${l}`).join('\n')}`,
    {
      valid: false,
      problems: problems.map((p) => ({
        path: p.path,
        message: p.message,
        file: p.file ?? null,
        line: p.line ?? null,
      })),
    },
  );
}

async function withStore<T>(
  settings: Settings,
  readonly: boolean,
  use: (store: Store) => Promise<T>,
): Promise<T> {
  const store = await openStore(stateLocation(settings.execution), readonly ? { readonly: true } : {});
  try {
    return await use(store);
  } finally {
    await store.close();
  }
}

function runSummary(run: RunRecord): Record<string, unknown> {
  const { prompt: _prompt, agentOutcome: _outcome, ...rest } = run;
  return rest;
}

export function automationTools(options: AutomationToolsOptions): McpTool[] {
  const file = options.settingsFile;
  const settings = () => loadSettings(file).settings;

  /** Validates the automations file as it would be after `change`; writes it when `write`. */
  function change(edit: (tables: Tables) => Tables, write: boolean, shown: string | null): ToolAnswer {
    const tables = edit(readAgentTables(file));
    const verdict = judge(file, tables);
    if (!verdict.valid) return problemsAnswer(verdict.problems, automationsFileOf(file));
    if (write) writeAgentFile(file, verdict.text);
    const automation = shown ? verdict.loaded.settings.automations.find((a) => a.id === shown) : undefined;
    const explain = automation ? options.explain(automation, verdict.loaded.settings) : [];
    return json(
      { valid: true, written: write, warnings: verdict.loaded.warnings, explain },
      [
        write ? `Written to ${verdict.loaded.settings.automationsFile}.` : 'Valid (nothing written).',
        ...verdict.loaded.warnings.map((w) => `warning: ${w}`),
        ...explain,
      ].join('\n'),
    );
  }

  async function pause(id: string, paused: boolean): Promise<ToolAnswer> {
    const s = settings();
    const automation = s.automations.find((a) => a.id === id);
    if (!automation) return refused(`no automation '${id}' is configured`);
    if (!paused && automation.config.enabled === false)
      return refused(`automation '${id}' is disabled (enabled = false): edit its file to resume it`);
    const daemon = await options.daemon(s);
    if (daemon) {
      const answer = await daemon.call(
        'POST',
        `/automations/${encodeURIComponent(id)}/${paused ? 'pause' : 'resume'}`,
      );
      if (answer.status >= 300) return refused(daemonError(answer.body, answer.status));
      return json({ id, paused, daemon: true }, `${paused ? 'Paused' : 'Resumed'} ${id}.`);
    }
    await withStore(s, false, async (store) => {
      await store.setPaused(id, paused);
      await store.setMeta(pauseReasonKey(id), '');
    });
    return json(
      { id, paused, daemon: false },
      `${paused ? 'Paused' : 'Resumed'} ${id} in the state file (no daemon is running; the next start honours it).`,
    );
  }

  return [
    tool({
      name: 'automations_list',
      description:
        'List the automations of this curupira: id, trigger, repository, profile, which file defines it, whether paused or disabled, and its last run.',
      input: z.object({}),
      async call() {
        const s = settings();
        const rows = await withStore(s, true, async (store) => {
          const paused = new Set(await store.listPaused());
          return Promise.all(
            s.automations.map(async (a) => {
              const [last] = await store.listRuns({ automationId: a.id, limit: 1 });
              return {
                id: a.id,
                trigger: a.triggerType,
                repository: a.repository.alias,
                profile: a.profileName,
                file: a.automationsFile ?? s.file,
                editable: a.automationsFile !== undefined,
                paused: paused.has(a.id) || a.config.enabled === false,
                disabled: a.config.enabled === false,
                lastRun: last ? { id: last.id, status: last.status, finishedAt: last.finishedAt } : null,
              };
            }),
          );
        });
        const text = rows
          .map(
            (r) =>
              `${r.id}  ${r.trigger}  ${r.repository}  ${r.disabled ? 'disabled' : r.paused ? 'paused' : 'active'}  last run: ${r.lastRun ? `${r.lastRun.id} ${r.lastRun.status}` : 'none'}${r.editable ? '  (automations file)' : ''}`,
          )
          .join('\n');
        return json({ automations: rows }, text || 'No automations.');
      },
    }),
    tool({
      name: 'automation_validate',
      description:
        'Check an automation as `curupira validate` would, as if written to the automations file, without writing anything; shows what it would do.',
      input: z.object({ id: Id, table: Table }),
      async call({ id, table }) {
        return change((tables) => ({ ...tables, [id]: table }), false, id);
      },
    }),
    tool({
      name: 'automation_create',
      description:
        'Create an automation in the automations file beside the settings file (never the settings file itself); refused, with validate’s messages, unless the result is valid.',
      input: z.object({ id: Id, table: Table }),
      async call({ id, table }) {
        if (settings().automations.some((a) => a.id === id) || id in readAgentTables(file))
          return refused(
            `automation '${id}' already exists; automation_update changes one in the automations file`,
          );
        return change((tables) => ({ ...tables, [id]: table }), true, id);
      },
    }),
    tool({
      name: 'automation_update',
      description:
        'Replace the table of an automation in the automations file (those in the settings file are the user’s and cannot be changed here).',
      input: z.object({ id: Id, table: Table }),
      async call({ id, table }) {
        if (!(id in readAgentTables(file))) return notEditable(id);
        return change((tables) => ({ ...tables, [id]: table }), true, id);
      },
    }),
    tool({
      name: 'automation_delete',
      description: 'Delete an automation from the automations file.',
      input: z.object({ id: Id }),
      async call({ id }) {
        if (!(id in readAgentTables(file))) return notEditable(id);
        return change(
          (tables) => Object.fromEntries(Object.entries(tables).filter(([key]) => key !== id)),
          true,
          null,
        );
      },
    }),
    tool({
      name: 'automation_run',
      description:
        'Run an automation now: a schedule fires at once, an event trigger polls (needs `curupira serve`). `inputs` sets the automation’s declared inputs for the runs it starts, as `curupira trigger --set key=value` does.',
      input: z.object({
        id: Id,
        inputs: z
          .record(z.string(), z.string())
          .optional()
          .describe('Values of inputs the automation declares (`inputs = { … }`), for these runs only'),
      }),
      async call({ id, inputs }) {
        const s = settings();
        const automation = s.automations.find((a) => a.id === id);
        if (!automation) return refused(`no automation '${id}' is configured`);
        if (inputs) {
          try {
            checkInputs(inputsFromJson(inputs), [automation]);
          } catch (error) {
            return refused(errorMessage(error));
          }
        }
        const daemon = await options.daemon(s);
        if (!daemon) return refused(NO_DAEMON);
        const answer = await daemon.call(
          'POST',
          `/automations/${encodeURIComponent(id)}/run`,
          inputs ? { inputs } : undefined,
        );
        if (answer.status >= 300) return refused(daemonError(answer.body, answer.status));
        const fired = answer.body.result === 'fired';
        return json(
          { id, result: answer.body.result ?? null },
          fired ? `Fired ${id}.` : `Polling ${id} now.`,
        );
      },
    }),
    tool({
      name: 'automation_pause',
      description: 'Pause an automation (no polls, no fires) until resumed; remembered across restarts.',
      input: z.object({ id: Id }),
      call: ({ id }) => pause(id, true),
    }),
    tool({
      name: 'automation_resume',
      description: 'Resume a paused automation.',
      input: z.object({ id: Id }),
      call: ({ id }) => pause(id, false),
    }),
    tool({
      name: 'runs_list',
      description: 'List runs, newest first: id, automation, item, status, reason, times, cost.',
      input: z.object({
        automation: Id.optional(),
        status: z.array(z.enum(RUN_STATUSES)).optional(),
        limit: z.number().int().min(1).max(200).default(20),
      }),
      async call({ automation, status, limit }) {
        const runs = await withStore(settings(), true, (store) =>
          store.listRuns({
            ...(automation ? { automationId: automation } : {}),
            ...(status ? { status } : {}),
            limit,
          }),
        );
        // Items named as `curupira runs` names them (acme/api#7, Linear ENG-1, a schedule's fire).
        const automations = settings().automations;
        const text = runs
          .map(
            (r) =>
              `${r.id}  ${r.automationId}  ${runItemName(r, automations)}  ${r.status}${r.reason ? ` (${r.reason})` : ''}`,
          )
          .join('\n');
        return json({ runs: runs.map(runSummary) }, text || 'No runs.');
      },
    }),
    tool({
      name: 'run_show',
      description: `One run by id: its record and the last ${TRANSCRIPT_LINES} lines of its transcript as readable text.`,
      input: z.object({ id: z.string().min(1) }),
      async call({ id }) {
        const run = await withStore(settings(), true, (store) => store.getRun(id));
        if (!run) return refused(`no run with id ${id}; runs_list lists them`);
        let transcript: string[] = [];
        if (run.transcriptPath && run.provider && existsSync(run.transcriptPath)) {
          await loadDrivers([run.provider]);
          transcript = renderTranscriptFile(run.provider, run.transcriptPath).slice(-TRANSCRIPT_LINES);
        }
        return json(
          { run: runSummary(run), transcript },
          [
            `${run.id}  ${run.automationId}  ${runItemName(run, settings().automations)} ${JSON.stringify(run.itemTitle)}  ${run.status}${run.reason ? ` (${run.reason})` : ''}`,
            ...(transcript.length > 0
              ? ['transcript:', ...transcript.map((l) => `  ${l}`)]
              : ['no transcript']),
          ].join('\n'),
        );
      },
    }),
  ];

  function notEditable(id: string): ToolAnswer {
    const inSettings = settings().automations.some((a) => a.id === id);
    return refused(
      inSettings
        ? `automation '${id}' is defined in the settings file ${file}, which is the user’s: only automations in the automations file can be changed here`
        : `no automation '${id}' in the automations file`,
    );
  }
}

function daemonError(body: Record<string, unknown>, status: number): string {
  const error = body.error as { code?: string; message?: string } | undefined;
  return error?.message
    ? `${error.message}${error.code ? ` (${error.code})` : ''}`
    : `the daemon answered ${status}`;
}
