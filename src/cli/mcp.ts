/**
 * `curupira mcp`: the MCP server over stdio for agents and people (src/mcp/). Stdout carries only
 * protocol messages; warnings go to stderr.
 */
import type { Command } from 'commander';
import { loadSettings } from '../config/load.js';
import { stateDir } from '../engine/paths.js';
import { automationTools } from '../mcp/automation-tools.js';
import { serveStdio } from '../mcp/stdio.js';
import { connectDaemon } from '../server/client.js';
import { packageVersion } from '../version.js';
import { type CliIo, unredacted, writeLine } from './io.js';
import type { GlobalOptions } from './program.js';
import { explainAutomation } from './validate.js';

const INSTRUCTIONS =
  'curupira runs coding agents on GitHub work. These tools list its automations and runs, run, pause and resume automations, and create or change automations in the automations file beside its settings file (validated exactly as the settings file is).';

export function registerMcp(program: Command, io: CliIo, globals: () => GlobalOptions): void {
  program
    .command('mcp')
    .description('Serve the MCP tools (automations, runs) over stdio, for agents and people.')
    .action(async () => {
      const file = globals().config;
      // Refuse to start on a broken settings file: the first tool call would fail anyway.
      const { warnings } = loadSettings(file);
      for (const warning of warnings) writeLine(io.stderr, `warning: ${warning}`);
      const tools = automationTools({
        settingsFile: file,
        daemon: (settings) => connectDaemon(stateDir(settings)),
        explain: (automation, settings) => explainAutomation(automation, new Date(), settings),
      });
      const input = io.stdin ?? process.stdin;
      const out = unredacted(io.stdout);
      await serveStdio(
        input as NodeJS.ReadableStream as import('node:stream').Readable,
        { write: (text) => out.write(text) },
        tools,
        { name: 'curupira', version: packageVersion(), instructions: INSTRUCTIONS },
        (error) => writeLine(io.stderr, `mcp: ${error instanceof Error ? error.message : String(error)}`),
      );
    });
}
