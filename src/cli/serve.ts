/**
 * `curupira serve`: the `run --watch` engine plus the board, the JSON API and the control socket.
 * The token is printed once, in the URL, the first time; later starts say where it is kept.
 */
import type { Command } from 'commander';
import { loadSettings } from '../config/load.js';
import { UsageError } from '../core/errors.js';
import { acquireStateLock, openStore, stateLocation } from '../store/index.js';
import { EXIT, setExitCode } from './exit-codes.js';
import { type CliIo, writeLine } from './io.js';
import type { GlobalOptions } from './program.js';
import { engineControls, settingsReloader } from './run.js';
import { engineLogger } from './runtime.js';
import { serveEngine } from './serve-engine.js';

export const DEFAULT_PORT = 7878;
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1']);

interface ServeOptions {
  port: string;
  host: string;
  logFormat?: string;
  role?: string;
}

function parsePort(value: string): number {
  if (!/^\d+$/.test(value) || Number(value) > 65535)
    throw new UsageError(`--port must be 0 (pick a free port) or a port number up to 65535, got '${value}'`);
  return Number(value);
}

export function registerServe(program: Command, io: CliIo, globals: () => GlobalOptions): void {
  program
    .command('serve')
    .description('Run the engine (as `run --watch`) with the board, the JSON API and CLI control.')
    .option('--port <n>', 'HTTP port on the host (0 picks a free one)', String(DEFAULT_PORT))
    .option(
      '--host <address>',
      'address to listen on; anything but 127.0.0.1 reaches beyond this machine',
      '127.0.0.1',
    )
    .option('--log-format <format>', 'text or json log lines', 'text')
    .option(
      '--role <role>',
      'with state_db_url, the fleet role: all (poll when elected, and work), poller, or worker (default all)',
    )
    .action(async (options: ServeOptions) => {
      const port = parsePort(options.port);
      if (options.logFormat !== 'text' && options.logFormat !== 'json')
        throw new UsageError(`--log-format must be text or json, got '${options.logFormat}'`);
      const { config: file, logLevel } = globals();
      const { settings, warnings } = loadSettings(file);
      for (const warning of warnings) writeLine(io.stderr, `warning: ${warning}`);
      if (options.role !== undefined || settings.execution.state_db_url) {
        const { parseRole, runFleetRole } = await import('./fleet.js');
        const role = parseRole(options.role ?? 'all');
        const log = engineLogger({
          settings,
          console: io.stderr,
          format: options.logFormat,
          ...(logLevel ? { level: logLevel } : {}),
        });
        const listen =
          role === 'worker' ? undefined : { host: options.host, port, banner: options.logFormat === 'text' };
        const { interrupted } = await runFleetRole({
          role,
          settings,
          file,
          io,
          log,
          ...(listen ? { listen } : {}),
        });
        setExitCode(interrupted ? EXIT.interrupted : EXIT.ok);
        return;
      }
      if (!LOOPBACK.has(options.host)) {
        writeLine(
          io.stderr,
          `warning: listening on ${options.host}: the board is reachable beyond this machine over plain HTTP; the token still guards every route, but anyone on the path can read it`,
        );
      }
      const lock = await acquireStateLock(settings.execution.state_db_path);
      const store = await openStore(stateLocation(settings.execution));
      const log = engineLogger({
        settings,
        console: io.stderr,
        format: options.logFormat,
        ...(logLevel ? { level: logLevel } : {}),
      });
      const { signals, engineBase } = engineControls(settings, io, log, file);
      process.on('SIGINT', signals.handle);
      process.on('SIGTERM', signals.handle);
      try {
        await serveEngine(io, {
          engine: { ...engineBase(store), mode: 'watch', reload: settingsReloader(file) },
          host: options.host,
          port,
          banner: options.logFormat === 'text',
        });
        setExitCode(signals.interrupted() ? EXIT.interrupted : EXIT.ok);
      } finally {
        process.off('SIGINT', signals.handle);
        process.off('SIGTERM', signals.handle);
        await store.close();
        await lock.release();
      }
    });
}

/** `curupira worker`: `serve --role worker` (no board). */
export function registerWorker(program: Command, io: CliIo, globals: () => GlobalOptions): void {
  program
    .command('worker')
    .description(
      'Run fleet jobs on this host (needs state_db_url): `serve --role worker`, without the board.',
    )
    .option('--log-format <format>', 'text or json log lines', 'text')
    .action(async (options: { logFormat?: string }) => {
      if (options.logFormat !== 'text' && options.logFormat !== 'json')
        throw new UsageError(`--log-format must be text or json, got '${options.logFormat}'`);
      const { config: file, logLevel } = globals();
      const { settings, warnings } = loadSettings(file);
      for (const warning of warnings) writeLine(io.stderr, `warning: ${warning}`);
      const { runFleetRole } = await import('./fleet.js');
      const log = engineLogger({
        settings,
        console: io.stderr,
        format: options.logFormat,
        ...(logLevel ? { level: logLevel } : {}),
      });
      const { interrupted } = await runFleetRole({ role: 'worker', settings, file, io, log });
      setExitCode(interrupted ? EXIT.interrupted : EXIT.ok);
    });
}
