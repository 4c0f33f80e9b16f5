/**
 * The logger: pino's JSON line format (`{"level":30,"time":…,<bindings>,<fields>,"msg":…}`),
 * written here in a few lines rather than by pino and its nine packages, which every idle daemon
 * loaded (issue 31). Lines are `TIME LEVEL message key=value…` (the reference's log
 * format, plus fields), or JSON with `--log-format json`. Secrets are scrubbed here, at the logger,
 * by `src/security/redact.ts`: known token shapes always, and any value registered with
 * `registerSecret` (the GitHub token, and the value of every secret-looking variable); a field
 * whose name says token, authorization, password or secret is replaced whole.
 */
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { REDACTED, redact } from './security/redact.js';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

/** One level's method: `log.info('message')`, `log.info({ field: 1 }, 'message')`, `log.info({ field: 1 })`. */
export type LogFn = (fieldsOrMessage: unknown, message?: string) => void;

export interface Logger {
  readonly level: LogLevel;
  debug: LogFn;
  info: LogFn;
  warn: LogFn;
  error: LogFn;
  /** A logger whose lines carry `bindings` as fields, before each call's own. */
  child(bindings: Record<string, unknown>): Logger;
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

/** Formats one JSON line as `2026-01-01T00:00:00.000Z INFO message key=value`. */
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

const LEVEL_NUMBERS = { debug: 20, info: 30, warn: 40, error: 50, silent: Number.POSITIVE_INFINITY } as const;

/** `JSON.stringify`, with `[Circular]` and BigInts as strings where plain stringify would throw. */
function stringify(value: unknown): string {
  try {
    return JSON.stringify(value);
  } catch {
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
}

/** An object's members as JSON without its braces: `"a":1,"b":"x"`, or `''`. */
function members(fields: unknown): string {
  const json = stringify(fields);
  return json.length > 2 ? json.slice(1, -1) : '';
}

class LineLogger implements Logger {
  readonly #threshold: number;
  /** The bindings of `child`, as JSON members each with a leading comma (or ''). */
  readonly #bindings: string;
  readonly #write: (line: string) => void;

  constructor(
    readonly level: LogLevel,
    bindings: string,
    write: (line: string) => void,
  ) {
    this.#threshold = LEVEL_NUMBERS[level];
    this.#bindings = bindings;
    this.#write = write;
  }

  debug: LogFn = (fields, message) => this.#line(20, fields, message);
  info: LogFn = (fields, message) => this.#line(30, fields, message);
  warn: LogFn = (fields, message) => this.#line(40, fields, message);
  error: LogFn = (fields, message) => this.#line(50, fields, message);

  child(bindings: Record<string, unknown>): Logger {
    const more = members(redactValue(bindings));
    return new LineLogger(this.level, more ? `${this.#bindings},${more}` : this.#bindings, this.#write);
  }

  #line(level: number, first: unknown, message: string | undefined): void {
    if (level < this.#threshold) return;
    let line = `{"level":${level},"time":${Date.now()}${this.#bindings}`;
    let msg: unknown = message;
    if (typeof first === 'object' && first !== null) {
      const more = members(redactValue(first));
      if (more) line += `,${more}`;
    } else msg = first;
    if (msg !== undefined) line += `,"msg":${stringify(redactValue(msg))}`;
    this.#write(`${line}}\n`);
  }
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
  return new LineLogger(options.level ?? 'info', '', (line) => destination.write(line));
}

/** A logger that drops everything, for tests and quiet commands. */
export function silentLogger(): Logger {
  return new LineLogger('silent', '', () => {});
}
