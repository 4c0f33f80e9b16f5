/** Deterministic screening of untrusted issue and pull-request text; the engine's gate is src/screening/gate.ts, behind src/screening/feature.ts. */

export type { PolicyOptions, ScreeningMode, SeverityAction, Verdict, VerdictAction } from './policy.js';
export { DEFAULT_POLICY, DEFAULT_THRESHOLDS, decide } from './policy.js';
export { MAX_FINDINGS_PER_SCANNER_FIELD, SCANNERS, scan } from './scan.js';
export { excerptOf, makeVisible, viewOf } from './text.js';
export type { Finding, Hit, Scanner, ScreenField, ScreenInput, Severity, TextView } from './types.js';
export { SEVERITIES } from './types.js';

import { decide, type PolicyOptions, type Verdict } from './policy.js';
import { scan } from './scan.js';
import type { ScreenInput } from './types.js';

/** Scans every field and applies the policy: the one call the engine needs. */
export function screen(input: ScreenInput, options: Partial<PolicyOptions> = {}): Verdict {
  if (options.mode === 'off') return decide([], options);
  return decide(scan(input), options);
}
