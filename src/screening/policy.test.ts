import { describe, expect, it } from 'vitest';
import { decide } from './policy.js';
import type { Finding, Severity } from './types.js';

function finding(severity: Severity, scanner = 'instruction-override'): Finding {
  return { scanner, rule: 'r', severity, field: 'body', offset: 7, excerpt: 'x' };
}

describe('decide', () => {
  it('allows when there are no findings', () => {
    expect(decide([])).toEqual({ action: 'allow', findings: [], reason: 'no findings' });
  });

  it('blocks on high and critical by default and names the worst finding', () => {
    const verdict = decide([finding('low', 'invisible-characters'), finding('critical')]);
    expect(verdict.action).toBe('block');
    expect(verdict.reason).toBe('blocked: instruction-override/r (critical) in body at 7');
    expect(decide([finding('high')]).action).toBe('block');
  });

  it('warns on medium and low by default', () => {
    expect(decide([finding('medium'), finding('low')])).toMatchObject({ action: 'warn' });
  });

  it('never blocks a trusted actor, but keeps the findings as warnings', () => {
    const verdict = decide([finding('critical')], { trusted: true });
    expect(verdict.action).toBe('warn');
    expect(verdict.findings).toHaveLength(1);
    expect(verdict.reason).toMatch(/^trusted actor, not blocked: /);
  });

  it('turns blocks into warnings in warn mode, and allows everything when off', () => {
    expect(decide([finding('critical')], { mode: 'warn' }).action).toBe('warn');
    expect(decide([finding('critical')], { mode: 'off' })).toMatchObject({
      action: 'allow',
      reason: 'screening is off',
    });
  });

  it('applies custom thresholds per severity', () => {
    const thresholds = { low: 'ignore', medium: 'block', high: 'block', critical: 'block' } as const;
    expect(decide([finding('medium')], { thresholds }).action).toBe('block');
    expect(decide([finding('low')], { thresholds })).toMatchObject({
      action: 'allow',
      reason: 'findings below every threshold',
    });
  });
});
