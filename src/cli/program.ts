/**
 * The command-line program. `runCli` is what `main.ts` calls and what tests call in-process; it
 * maps every error to a message and a documented exit code, never a stack trace for a user mistake.
 */
import { Command, CommanderError } from 'commander';
import { defaultConfigPath, resolvePath } from '../config/load.js';
import { ConfigError, CurupiraError, errorMessage, UsageError } from '../core/errors.js';
import { registerDemo } from './demo.js';
import { registerDoctor } from './doctor.js';
import { EXIT } from './exit-codes.js';
import { registerGc } from './gc.js';
import type { CliIo } from './io.js';
import { writeLine } from './io.js';
import { registerRun } from './run.js';
import { registerRuns } from './runs.js';
import { registerSchema } from './schema.js';
import { registerSimulator } from './simulator.js';
import { registerValidate } from './validate.js';
import { packageVersion } from './version.js';

export interface GlobalOptions {
  /** Absolute path of the settings file. */
  config: string;
  /** True when --config was not given (the default path is used). */
  defaultConfig: boolean;
}

export function createProgram(io: CliIo): Command {
  const program = new Command(io.programName);
  program
    .description('Run coding agents on your GitHub work, unattended.')
    .option('--config <path>', 'settings file', defaultConfigPath())
    .version(`${io.programName} ${packageVersion()}`, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help')
    .showHelpAfterError('(run with --help for usage)')
    .enablePositionalOptions()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
    })
    .exitOverride();
  const globals = (): GlobalOptions => {
    const opts = program.opts<{ config: string }>();
    const given = program.getOptionValueSource('config') !== 'default';
    return { config: resolvePath(opts.config, io.cwd), defaultConfig: !given };
  };
  registerValidate(program, io, globals);
  registerSchema(program, io);
  registerRun(program, io, globals);
  registerRuns(program, io, globals);
  registerDoctor(program, io, globals);
  registerGc(program, io, globals);
  registerSimulator(program, io);
  registerDemo(program, io);
  for (const command of program.commands) {
    command
      .helpOption('-h, --help', 'show help')
      .exitOverride()
      .configureOutput({
        writeOut: (text) => io.stdout.write(text),
        writeErr: (text) => io.stderr.write(text),
      });
  }
  return program;
}

/** Runs the CLI; resolves to the process exit code. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const program = createProgram(io);
  if (argv.length === 0) {
    program.outputHelp();
    return EXIT.ok;
  }
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return currentExitCode ?? EXIT.ok;
  } catch (error) {
    return reportError(error, io);
  } finally {
    currentExitCode = undefined;
  }
}

let currentExitCode: number | undefined;

/** Commands call this to set the exit code without throwing (e.g. `run` when a task failed). */
export function setExitCode(code: number): void {
  currentExitCode = code;
}

export function reportError(error: unknown, io: CliIo): number {
  if (error instanceof CommanderError) {
    if (
      error.code === 'commander.helpDisplayed' ||
      error.code === 'commander.version' ||
      error.code === 'commander.help'
    ) {
      return EXIT.ok;
    }
    return EXIT.config;
  }
  if (error instanceof ConfigError) {
    writeLine(io.stderr, `Configuration error: ${error.message}`);
    if (error.code === 'config_file_not_found') {
      writeLine(
        io.stderr,
        'Write a settings file there (examples/settings.toml is a commented one) or pass --config PATH before the command; `curupira demo` runs without one.',
      );
    }
    return EXIT.config;
  }
  if (error instanceof UsageError) {
    writeLine(io.stderr, `error: ${error.message}`);
    return EXIT.config;
  }
  if (error instanceof CurupiraError) {
    writeLine(io.stderr, `${prefixFor(error)}${error.message}`);
    return EXIT.failure;
  }
  writeLine(io.stderr, `Unexpected error: ${errorMessage(error)}`);
  if (io.env.CURUPIRA_DEBUG && error instanceof Error && error.stack) writeLine(io.stderr, error.stack);
  return EXIT.failure;
}

function prefixFor(error: CurupiraError): string {
  switch (error.code) {
    case 'state':
    case 'state_locked':
    case 'dispatch':
      return 'Dispatch error: ';
    case 'github_auth':
    case 'github_rate_limit':
    case 'github_transient':
    case 'github_request':
    case 'github_graphql':
      return 'GitHub error: ';
    default:
      return 'Error: ';
  }
}
