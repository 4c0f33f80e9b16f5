import { describe, expect, it } from 'vitest';
import { declareWriter, writerOn, writesWanted } from './writers.js';

const LOG = declareWriter({ feature: 'run log', keys: ['run_log'], settingsWide: ['run_log'] });
const LABELS = declareWriter({ feature: 'state labels', keys: ['status_label', 'failed_label'] });
const auto = (config: Record<string, unknown>) => ({ config }) as never;

describe('GitHub writers', () => {
  it('a declared key turns its writer on when set to anything but false', () => {
    expect(writerOn(LABELS, auto({ failed_label: 'agent:failed' }))).toBe(true);
    expect(writerOn(LABELS, auto({}))).toBe(false);
    expect(writerOn(LOG, auto({ run_log: false }))).toBe(false);
    expect(writerOn(LOG, auto({ run_log: true }))).toBe(true);
  });

  it('a settings-wide key is the default, and the automation overrides it either way', () => {
    expect(writerOn(LOG, auto({}), { run_log: true })).toBe(true);
    expect(writerOn(LOG, auto({ run_log: false }), { run_log: true })).toBe(false);
    expect(writerOn(LOG, auto({ run_log: true }), { run_log: false })).toBe(true);
    // Only keys declared settings-wide are read from [settings].
    expect(writerOn(LABELS, auto({}), { run_log: true })).toBe(false);
  });

  it('writes are wanted when any automation turns any writer on', () => {
    expect(writesWanted([LOG, LABELS], [auto({}), auto({ status_label: 'x' })])).toBe(true);
    expect(writesWanted([LOG, LABELS], [auto({}), auto({ run_log: false })])).toBe(false);
    expect(writesWanted([], [auto({ status_label: 'x' })])).toBe(false);
  });
});
