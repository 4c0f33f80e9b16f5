import { describe, expect, it } from 'vitest';
import { createLogger, MIN_SECRET_LENGTH, redact, registerSecret } from './log.js';

describe('createLogger with a log file that cannot be written', () => {
  it('keeps logging to the console, says once that the disk is full, and never throws', () => {
    const lines: string[] = [];
    // /dev/full refuses every write with ENOSPC, as a full disk does.
    const log = createLogger({
      file: '/dev/full',
      console: { write: (t: string) => lines.push(t) } as never,
    });
    expect(() => {
      log.info('first');
      log.info('second');
    }).not.toThrow();
    const warnings = lines.filter((l) => l.startsWith('warning: cannot write the log file /dev/full'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('the disk is full');
    expect(lines.filter((l) => / INFO (first|second)/.test(l))).toHaveLength(2);
  });
});

describe('createLogger redaction', () => {
  it('redacts messages, fields, field names that say secret, and bindings added later', () => {
    const lines: string[] = [];
    registerSecret('logged-secret-value-7');
    const log = createLogger({ console: { write: (t: string) => lines.push(t) } as never });
    log
      .child({ bound: 'logged-secret-value-7' })
      .warn(
        { detail: 'key ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8', password: 'hunter2' },
        'failed with logged-secret-value-7',
      );
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('WARNING failed with [redacted]');
    expect(lines[0]).toContain('bound=[redacted]');
    expect(lines[0]).toContain('detail="key [redacted]"');
    expect(lines[0]).toContain('password=[redacted]');
    expect(lines[0]).not.toMatch(/logged-secret-value-7|ghp_A1b2|hunter2/);
  });
});

describe('redact', () => {
  it('replaces a registered value everywhere it appears', () => {
    registerSecret('plain-secret-value-1');
    expect(redact('a plain-secret-value-1 b plain-secret-value-1')).toBe('a [redacted] b [redacted]');
  });

  it('replaces a registered value also as it appears inside a JSON string', () => {
    const value = 'with"quote\\and\tcontrol';
    registerSecret(value);
    const line = JSON.stringify({ type: 'message', text: `KEY=${value}` });
    expect(line).not.toContain(value);
    const clean = redact(line);
    expect(clean).toBe('{"type":"message","text":"KEY=[redacted]"}');
    expect(JSON.parse(clean)).toEqual({ type: 'message', text: 'KEY=[redacted]' });
  });

  it('does not register values shorter than the minimum, which would mangle ordinary text', () => {
    const short = 'x'.repeat(MIN_SECRET_LENGTH - 1);
    registerSecret(short);
    registerSecret(undefined);
    registerSecret('');
    expect(redact(`value ${short}`)).toBe(`value ${short}`);
  });

  it('replaces the longer of two overlapping secrets whole', () => {
    registerSecret('overlap-secret');
    registerSecret('overlap-secret-and-more-0001');
    expect(redact('k=overlap-secret-and-more-0001')).toBe('k=[redacted]');
  });

  it('still replaces known token shapes that were never registered', () => {
    expect(redact('token ghp_abcdefghijklmnopqrstuvwxyz0123')).toBe('token [redacted]');
  });
});

describe('createLogger JSON lines', () => {
  it('writes level, time, bindings, fields and msg in that order, one line each, and drops lines under the level', () => {
    const lines: string[] = [];
    const log = createLogger({ console: { write: (t: string) => lines.push(t) } as never, format: 'json' });
    log.debug('hidden');
    log.info('plain');
    log.child({ run: 7 }).child({ step: 'push' }).warn({ attempt: 2, skipped: undefined }, 'retrying');
    log.error({ code: 'E1' });
    expect(lines.every((line) => line.endsWith('}\n'))).toBe(true);
    const records = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(records.map((r) => Object.keys(r))).toEqual([
      ['level', 'time', 'msg'],
      ['level', 'time', 'run', 'step', 'attempt', 'msg'],
      ['level', 'time', 'code'],
    ]);
    expect(records[1]).toMatchObject({ level: 40, run: 7, step: 'push', attempt: 2, msg: 'retrying' });
    expect(typeof records[0]!.time).toBe('number');
    const quiet: string[] = [];
    createLogger({ console: { write: (t: string) => quiet.push(t) } as never, level: 'silent' }).error('x');
    expect(quiet).toEqual([]);
  });

  it('survives a circular field', () => {
    const lines: string[] = [];
    const log = createLogger({ console: { write: (t: string) => lines.push(t) } as never, format: 'json' });
    const deep: Record<string, unknown> = { a: { b: { c: { d: { e: {} } } } } };
    (deep.a as { b: { c: { d: { e: Record<string, unknown> } } } }).b.c.d.e.loop = deep;
    log.info({ deep }, 'loop');
    expect(lines[0]).toContain('[Circular]');
  });
});
