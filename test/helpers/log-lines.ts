/** A logger whose JSON lines are kept in memory, for tests that read what was logged. */
import { Writable } from 'node:stream';
import { createLogger, type Logger, type LogLevel } from '../../src/log.js';

export interface CapturedLog {
  log: Logger;
  /** Each line logged so far, parsed. */
  entries(): Record<string, unknown>[];
  /** The `msg` of each line logged so far. */
  messages(): string[];
}

export function captureLog(level: LogLevel = 'info'): CapturedLog {
  const lines: string[] = [];
  const console = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  const entries = () => lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  return {
    log: createLogger({ level, console, format: 'json' }),
    entries,
    messages: () => entries().map((entry) => entry.msg as string),
  };
}
