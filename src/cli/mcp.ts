/**
 * `curupira mcp`: the MCP server over stdio for agents and people (src/mcp/). Stdout carries only
 * protocol messages; warnings go to stderr.
 */
import type { Command } from 'commander';
import { loadSettings } from '../config/load.js';
import type { Settings } from '../config/types.js';
import { UsageError } from '../core/errors.js';
import { stateDir } from '../engine/paths.js';
import { automationTools } from '../mcp/automation-tools.js';
import { NoCommitError, runTools } from '../mcp/run-tools.js';
import { type McpTool, serveStdio } from '../mcp/stdio.js';
import { connectDaemon } from '../server/client.js';
import { openStore, stateLocation } from '../store/index.js';
import type { Store } from '../store/types.js';
import { packageVersion } from '../version.js';
import { type CliIo, unredacted, writeLine } from './io.js';
import type { GlobalOptions } from './program.js';
import { explainAutomation } from './validate.js';

async function withStoreOf<T>(settings: Settings, use: (store: Store) => Promise<T>): Promise<T> {
  const store = await openStore(stateLocation(settings.execution));
  try {
    return await use(store);
  } finally {
    await store.close();
  }
}

/** The tools for one run (`--run`), nothing else (src/mcp/run-tools.ts). */
async function toolsOfRun(
  settings: Settings,
  runId: string,
  commit: string | undefined,
): Promise<{ tools: McpTool[]; instructions: string }> {
  const run = await withStoreOf(settings, (store) => store.getRun(runId));
  if (!run) throw new UsageError(`no run with id ${runId}`);
  const automation = settings.automations.find((a) => a.id === run.automationId);
  try {
    return runTools({
      run,
      automation: automation
        ? { config: automation.config, offersTools: automation.trigger.agentTools !== undefined }
        : undefined,
      commit,
      withStore: (use) => withStoreOf(settings, use),
    });
  } catch (error) {
    if (error instanceof NoCommitError) throw new UsageError(error.message);
    throw error;
  }
}

const INSTRUCTIONS =
  'curupira runs coding agents on GitHub work. These tools list its automations and runs, run, pause and resume automations, and create or change automations in the automations file beside its settings file (validated exactly as the settings file is).';

export function registerMcp(program: Command, io: CliIo, globals: () => GlobalOptions): void {
  program
    .command('mcp')
    .description('Serve the MCP tools (automations, runs) over stdio, for agents and people.')
    .option(
      '--run <id>',
      "serve only this run's tools: the result tool (result_report) when its automation declares outcomes, the findings tools for a review watch's run",
    )
    .option(
      '--commit <sha>',
      'with --run: the commit the review is pinned to (default: the run’s base commit)',
    )
    .action(async (options: { run?: string; commit?: string }) => {
      const file = globals().config;
      // Refuse to start on a broken settings file: the first tool call would fail anyway.
      const { settings, warnings } = loadSettings(file);
      for (const warning of warnings) writeLine(io.stderr, `warning: ${warning}`);
      if (options.commit !== undefined && options.run === undefined)
        throw new UsageError('--commit goes with --run');
      const forRun = options.run ? await toolsOfRun(settings, options.run, options.commit) : undefined;
      const tools = forRun
        ? forRun.tools
        : automationTools({
            settingsFile: file,
            daemon: (s) => connectDaemon(stateDir(s)),
            explain: (automation, s) => explainAutomation(automation, new Date(), s),
          });
      const input = io.stdin ?? process.stdin;
      const out = unredacted(io.stdout);
      await serveStdio(
        input as NodeJS.ReadableStream as import('node:stream').Readable,
        { write: (text) => out.write(text) },
        tools,
        {
          name: 'curupira',
          version: packageVersion(),
          instructions: forRun ? forRun.instructions : INSTRUCTIONS,
        },
        (error) => writeLine(io.stderr, `mcp: ${error instanceof Error ? error.message : String(error)}`),
      );
    });
}
