/**
 * The command-line program. `runCli` is what `main.ts` calls and what tests call in-process; it
 * maps every error to a message and a documented exit code, never a stack trace for a user mistake.
 */
import { Command, CommanderError, Help } from 'commander';
import { defaultConfigPath, resolvePath } from '../config/paths.js';
import { ConfigError, CurupiraError, errorMessage, UsageError } from '../core/errors.js';
import type { LogLevel } from '../log.js';
import { registerSecretEnv, scrub } from '../security/redact.js';
import { packageVersion } from '../version.js';
import { clearExitCode, EXIT, exitCodeSet } from './exit-codes.js';
import type { CliIo } from './io.js';
import { redactingIo, writeLine } from './io.js';
import { COMMAND_SUMMARY } from './summary.js';

export interface GlobalOptions {
  /** Absolute path of the settings file. */
  config: string;
  /** True when neither --config nor CURUPIRA_CONFIG was given (the default path is used). */
  defaultConfig: boolean;
  /** `--log-level`, when given (commands keep their own default otherwise). */
  logLevel: LogLevel | undefined;
}

const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'silent'] as const satisfies readonly LogLevel[];

type Register = (program: Command, io: CliIo, globals: () => GlobalOptions) => void;

/**
 * Every command's module, in the order help lists them. Only the module of the command being run is
 * loaded (`run --watch` loads nothing of the simulator, the schema export or the other commands);
 * help without a command, and anything unrecognised, loads them all.
 */
const MODULES: readonly (readonly [names: readonly string[], load: () => Promise<Register>])[] = [
  [['validate'], async () => (await import('./validate.js')).registerValidate],
  [['schema'], async () => (await import('./schema.js')).registerSchema],
  [['run'], async () => (await import('./run.js')).registerRun],
  [['runs'], async () => (await import('./runs.js')).registerRuns],
  [['serve'], async () => (await import('./serve.js')).registerServe],
  [['worker'], async () => (await import('./serve.js')).registerWorker],
  [
    ['status', 'cancel', 'trigger', 'pause', 'resume'],
    async () => (await import('./control.js')).registerControl,
  ],
  [['allow'], async () => (await import('./allow.js')).registerAllow],
  [['reset'], async () => (await import('./reset.js')).registerReset],
  [['retry'], async () => (await import('./retry.js')).registerRetry],
  [['doctor'], async () => (await import('./doctor.js')).registerDoctor],
  [['gc'], async () => (await import('./gc.js')).registerGc],
  [['simulator'], async () => (await import('./simulator.js')).registerSimulator],
  [['demo'], async () => (await import('./demo.js')).registerDemo],
  [['init'], async () => (await import('./init.js')).registerInit],
  [['mcp'], async () => (await import('./mcp.js')).registerMcp],
  [['findings'], async () => (await import('./findings.js')).registerFindings],
];

function moduleOf(command: string): (() => Promise<Register>) | undefined {
  return MODULES.find(([names]) => names.includes(command))?.[1];
}

/** Program options that take a value (`-c FILE`): the word after them is not the command. */
const VALUE_OPTIONS = new Set(['-c', '--config', '--log-level']);

/**
 * The command `argv` runs, when it names one before any program-level help or version flag; else
 * null (every command is registered, so help and "unknown command" hints list them all).
 */
export function commandIn(argv: readonly string[]): string | null {
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!;
    if (word === '--') return null;
    if (VALUE_OPTIONS.has(word)) {
      i++;
      continue;
    }
    if (word.startsWith('-')) {
      if (['-h', '--help', '-V', '--version'].includes(word)) return null;
      continue;
    }
    return moduleOf(word) ? word : null;
  }
  return null;
}

/** The commands that read the settings file: each accepts `-c/--config` and `--log-level` itself too. */
const SETTINGS_COMMANDS = new Set([
  'validate',
  'run',
  'runs',
  'show',
  'doctor',
  'gc',
  'init',
  'serve',
  'worker',
  'status',
  'cancel',
  'pause',
  'resume',
  'trigger',
  'mcp',
  'findings',
  'allow',
  'reset',
  'retry',
]);

function configHelp(): string {
  return `settings file (default: $CURUPIRA_CONFIG, else ${defaultConfigPath()}); before or after the command`;
}

const LOG_LEVEL_HELP = `log level: ${LOG_LEVELS.join(', ')} (default info)`;

function addGlobalOptions(command: Command): void {
  command.option('-c, --config <path>', configHelp()).option('--log-level <level>', LOG_LEVEL_HELP);
}

function parseLogLevel(value: string): LogLevel {
  if ((LOG_LEVELS as readonly string[]).includes(value)) return value as LogLevel;
  throw new UsageError(`--log-level must be one of ${LOG_LEVELS.join(', ')}, got '${value}'`);
}

/** The nearest command (the one that runs, then its parents) where the option was given wins. */
function optionFromChain(command: Command | undefined, name: string): string | undefined {
  for (let current = command; current; current = current.parent ?? undefined) {
    const value = current.opts<Record<string, unknown>>()[name];
    if (typeof value === 'string') return value;
  }
  return undefined;
}

function allCommands(command: Command): Command[] {
  return command.commands.flatMap((child) => [child, ...allCommands(child)]);
}

function baseProgram(io: CliIo): Command {
  return new Command(io.programName)
    .description('Run coding agents on your GitHub work, unattended.')
    .option('-c, --config <path>', configHelp())
    .option('--log-level <level>', LOG_LEVEL_HELP)
    .version(`${io.programName} ${packageVersion()}`, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help')
    .showHelpAfterError('(run with --help for usage)')
    .enablePositionalOptions()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
    })
    .exitOverride();
}

/** True for the top-level help (`--help`, `-h` or no arguments), which `COMMAND_SUMMARY` answers. */
export function isTopLevelHelp(argv: readonly string[]): boolean {
  return argv.length === 0 || (argv.length === 1 && (argv[0] === '--help' || argv[0] === '-h'));
}

/** A program for top-level help only: each command is a stub named and described by `COMMAND_SUMMARY`. */
export function createSummaryProgram(io: CliIo): Command {
  const program = baseProgram(io);
  const terms = new Map<Command, string>();
  for (const [term, description] of COMMAND_SUMMARY)
    terms.set(program.command(term.split(' ')[0]!).description(description), term);
  const help = new Help();
  program.configureHelp({ subcommandTerm: (command) => terms.get(command) ?? help.subcommandTerm(command) });
  return program;
}

/** The program with `only` registered, or every command when `only` is null. */
export async function createProgram(io: CliIo, only: string | null = null): Promise<Command> {
  const program = baseProgram(io);
  let running: Command | undefined;
  program.hook('preAction', (_program, action) => {
    running = action;
  });
  const globals = (): GlobalOptions => {
    const given = optionFromChain(running, 'config');
    const fromEnv = io.env.CURUPIRA_CONFIG?.trim() ? io.env.CURUPIRA_CONFIG : undefined;
    const level = optionFromChain(running, 'logLevel');
    return {
      config: resolvePath(given ?? fromEnv ?? defaultConfigPath(), io.cwd),
      defaultConfig: given === undefined && fromEnv === undefined,
      logLevel: level === undefined ? undefined : parseLogLevel(level),
    };
  };
  const loaders = only === null ? MODULES.map(([, load]) => load) : [moduleOf(only)!];
  const registers = await Promise.all(loaders.map((load) => load()));
  for (const register of registers) register(program, io, globals);
  for (const command of allCommands(program)) {
    if (SETTINGS_COMMANDS.has(command.name())) addGlobalOptions(command);
    else
      command.addHelpText('after', '\nThis command reads no settings file, so -c/--config does not apply.');
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
export async function runCli(argv: readonly string[], given: CliIo): Promise<number> {
  // Secrets never leak: the values of secret-looking variables are known to redaction from the
  // start, and everything this process prints is redacted.
  registerSecretEnv(given.env);
  const io = redactingIo(given);
  if (isTopLevelHelp(argv)) {
    createSummaryProgram(io).outputHelp();
    return EXIT.ok;
  }
  const program = await createProgram(io, commandIn(argv));
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return exitCodeSet() ?? EXIT.ok;
  } catch (error) {
    return reportError(error, io);
  } finally {
    clearExitCode();
  }
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
        '`curupira init` writes a commented starter file there (or pass --config PATH / set CURUPIRA_CONFIG); `curupira demo` runs without one.',
      );
    }
    return EXIT.config;
  }
  if (error instanceof UsageError) {
    writeLine(io.stderr, `error: ${error.message}`);
    return EXIT.config;
  }
  // Messages may quote a remote URL (`https://user:token@host/…`) or a token: scrubbed either way.
  if (error instanceof CurupiraError) {
    writeLine(io.stderr, `${prefixFor(error)}${scrub(error.message)}`);
    return EXIT.failure;
  }
  writeLine(io.stderr, `Unexpected error: ${scrub(errorMessage(error))}`);
  // CURUPIRA_DEBUG=1 (documented in the README) adds the stack trace of an unexpected error.
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
    case 'source_auth':
    case 'source_rate_limit':
    case 'source_request':
      return 'Source error: ';
    default:
      return 'Error: ';
  }
}
