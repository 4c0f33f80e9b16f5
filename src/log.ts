/**
 * The logger. Lines are `TIME LEVEL message key=value…` (the reference's log
 * format, plus fields), or JSON with `--log-format json`. Secrets are scrubbed here, at the logger,
 * by `src/security/redact.ts`: known token shapes always, and any value registered with
 * `registerSecret` (the GitHub token, and the value of every secret-looking variable); a field
 * whose name says token, authorization, password or secret is replaced whole.
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { REDACTED, redact } from './security/redact.js';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

/** `log.info('text')` or `log.info({ key: value }, 'text')`, as with pino. */
export interface LogFn {
  (message: string): void;
  (fields: object, message?: string): void;
}

/**
 * pino's calling convention and JSON lines (`{"level":30,"time":…,…bindings,…fields,"msg":…}`),
 * written synchronously by this module: pino with its dependencies was about 9 MiB of a daemon.
 */
export interface Logger {
  readonly level: string;
  trace: LogFn;
  debug: LogFn;
  info: LogFn;
  warn: LogFn;
  error: LogFn;
  fatal: LogFn;
  child(bindings: Record<string, unknown>): Logger;
  isLevelEnabled(level: string): boolean;
}

const LEVEL_VALUES: Record<string, number> = {
  trace: 10,
  debug: 20,
  info: 30,
  warn: 40,
  error: 50,
  fatal: 60,
  silent: Number.POSITIVE_INFINITY,
};

/** JSON that survives cycles and BigInts (a repeated object is written once, then `"[Circular]"`). */
function safeJson(value: unknown): string {
  const seen = new WeakSet<object>();
  return JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v === 'bigint') return v.toString();
    if (typeof v === 'object' && v !== null) {
      if (seen.has(v)) return '[Circular]';
      seen.add(v);
    }
    return v;
  });
}

function makeLogger(level: string, bindings: Record<string, unknown>, write: (line: string) => void): Logger {
  const threshold = LEVEL_VALUES[level] ?? LEVEL_VALUES.info!;
  const method =
    (name: string): LogFn =>
    (first: object | string, message?: string): void => {
      const value = LEVEL_VALUES[name]!;
      if (value < threshold) return;
      const fields = typeof first === 'string' ? {} : (redactValue(first) as Record<string, unknown>);
      const msg = typeof first === 'string' ? first : message;
      const record = { level: value, time: Date.now(), ...bindings, ...fields };
      write(`${safeJson(msg === undefined ? record : { ...record, msg: redact(String(msg)) })}\n`);
    };
  return {
    level,
    trace: method('trace'),
    debug: method('debug'),
    info: method('info'),
    warn: method('warn'),
    error: method('error'),
    fatal: method('fatal'),
    child: (more) => makeLogger(level, { ...bindings, ...(redactValue(more) as object) }, write),
    isLevelEnabled: (name) => (LEVEL_VALUES[name] ?? 0) >= threshold,
  };
}

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
  return makeLogger(options.level ?? 'info', {}, (raw) => destination.write(raw));
}

/** A logger that drops everything, for tests and quiet commands. */
export function silentLogger(): Logger {
  return makeLogger('silent', {}, () => undefined);
}
