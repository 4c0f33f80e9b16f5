/**
 * The only module that touches pino. Lines are `TIME LEVEL message key=value…` (the reference's log
 * format, plus fields), or JSON with `--log-format json`. Secrets are scrubbed here, at the logger,
 * by `src/security/redact.ts`: known token shapes always, and any value registered with
 * `registerSecret` (the GitHub token, and the value of every secret-looking variable); a field
 * whose name says token, authorization, password or secret is replaced whole.
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { pino } from 'pino';
import { REDACTED, redact } from './security/redact.js';

export type Logger = pino.Logger;
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

export { MIN_SECRET_LENGTH, redact, registerSecret } from './security/redact.js';

function redactValue(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return redact(value);
  if (depth > 4 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => redactValue(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    out[key] =
      /token|authorization|password|secret/i.test(key) && typeof v === 'string'
        ? REDACTED
        : redactValue(v, depth + 1);
  }
  return out;
}

const LEVEL_NAMES: Record<number, string> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARNING',
  50: 'ERROR',
  60: 'CRITICAL',
};

function formatValue(value: unknown): string {
  if (typeof value === 'string') return /[\s"=]/.test(value) || value === '' ? JSON.stringify(value) : value;
  return JSON.stringify(value);
}

/** Formats one pino JSON line as `2026-01-01T00:00:00.000Z INFO message key=value`. */
export function formatLine(json: string): string {
  const record = JSON.parse(json) as Record<string, unknown>;
  const { time, level, msg, pid: _pid, hostname: _host, ...fields } = record;
  const when = typeof time === 'number' ? new Date(time).toISOString() : String(time);
  const parts = [when, LEVEL_NAMES[Number(level)] ?? String(level), String(msg ?? '')];
  for (const [key, value] of Object.entries(fields)) {
    if (value !== undefined) parts.push(`${key}=${formatValue(value)}`);
  }
  return `${parts.join(' ')}\n`;
}

export interface LoggerOptions {
  level?: LogLevel;
  /** Append lines to this file too (its folder is created with mode 0700). */
  file?: string;
  /** Where the console lines go; default stderr. `null` for none. */
  console?: NodeJS.WritableStream | null;
  format?: 'text' | 'json';
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const consoleStream = options.console === undefined ? process.stderr : options.console;
  const format = options.format ?? 'text';
  if (options.file) mkdirSync(dirname(options.file), { recursive: true, mode: 0o700 });
  // A log file that cannot be written (a full disk) never takes the process down: the console
  // says so once, and writing resumes by itself when the file accepts lines again.
  let fileFailing = false;
  const destination = {
    write(raw: string): void {
      // Arguments are redacted on the way in (below); the whole line once more on the way out, so
      // that nothing a later binding or serializer adds can carry a secret either.
      const line = redact(raw);
      const text = format === 'json' ? line : formatLine(line);
      consoleStream?.write(text);
      if (!options.file) return;
      try {
        appendFileSync(options.file, formatLine(line));
        if (fileFailing) {
          fileFailing = false;
          consoleStream?.write(`note: writing the log file ${options.file} again\n`);
        }
      } catch (error) {
        if (fileFailing) return;
        fileFailing = true;
        const code = (error as NodeJS.ErrnoException).code;
        consoleStream?.write(
          `warning: cannot write the log file ${options.file}${code === 'ENOSPC' ? ': the disk is full' : `: ${(error as Error).message}`}; log lines go to the console only until it can be written again\n`,
        );
      }
    },
  };
  return pino(
    {
      level: options.level ?? 'info',
      base: undefined,
      hooks: {
        logMethod(args, method) {
          const scrubbed = args.map((arg) => redactValue(arg)) as Parameters<typeof method>;
          method.apply(this, scrubbed);
        },
      },
    },
    destination,
  );
}

/** A logger that drops everything, for tests and quiet commands. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
