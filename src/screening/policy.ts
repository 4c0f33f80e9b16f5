/**
 * The screening policy: a pure function from findings to a verdict. No I/O, no clock.
 *
 * - `mode: 'off'` allows everything (findings are still returned, for the record).
 * - `mode: 'warn'` never blocks: what would block becomes a warning.
 * - `mode: 'block'` (the default) applies `thresholds`: what each severity does. Default: high and
 *   critical block, medium and low warn.
 * - `trusted: true` (content by a trusted actor): findings are kept as warnings, never blocked.
 */
import type { Finding, Severity } from './types.js';
import { SEVERITIES } from './types.js';

export type ScreeningMode = 'block' | 'warn' | 'off';
export type SeverityAction = 'block' | 'warn' | 'ignore';
export type VerdictAction = 'allow' | 'warn' | 'block';

export interface PolicyOptions {
  mode: ScreeningMode;
  thresholds: Record<Severity, SeverityAction>;
  trusted: boolean;
}

export interface Verdict {
  action: VerdictAction;
  /** Every finding, in the order given (including those the thresholds ignore). */
  findings: Finding[];
  /** One line a user can act on: what was decided and the worst findings behind it. */
  reason: string;
}

export const DEFAULT_THRESHOLDS: Readonly<Record<Severity, SeverityAction>> = {
  low: 'warn',
  medium: 'warn',
  high: 'block',
  critical: 'block',
};

export const DEFAULT_POLICY: Readonly<PolicyOptions> = {
  mode: 'block',
  thresholds: DEFAULT_THRESHOLDS,
  trusted: false,
};

function rank(severity: Severity): number {
  return SEVERITIES.indexOf(severity);
}

function describe(findings: Finding[]): string {
  const worst = [...findings].sort((a, b) => rank(b.severity) - rank(a.severity))[0]!;
  const more = findings.length > 1 ? ` and ${findings.length - 1} more` : '';
  return `${worst.scanner}/${worst.rule} (${worst.severity}) in ${worst.field} at ${worst.offset}${more}`;
}

export function decide(findings: readonly Finding[], options: Partial<PolicyOptions> = {}): Verdict {
  const { mode, thresholds, trusted } = { ...DEFAULT_POLICY, ...options };
  const all = [...findings];
  if (mode === 'off') return { action: 'allow', findings: all, reason: 'screening is off' };
  const blocking = all.filter((finding) => thresholds[finding.severity] === 'block');
  const warning = all.filter((finding) => thresholds[finding.severity] !== 'ignore');
  if (blocking.length > 0) {
    if (mode === 'block' && !trusted)
      return { action: 'block', findings: all, reason: `blocked: ${describe(blocking)}` };
    const why = trusted ? 'trusted actor, not blocked' : 'warn mode, not blocked';
    return { action: 'warn', findings: all, reason: `${why}: ${describe(blocking)}` };
  }
  if (warning.length > 0) return { action: 'warn', findings: all, reason: `warning: ${describe(warning)}` };
  return {
    action: 'allow',
    findings: all,
    reason: all.length === 0 ? 'no findings' : 'findings below every threshold',
  };
}
