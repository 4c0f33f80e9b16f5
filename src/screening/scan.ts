/**
 * Runs every scanner over every field. The registry is an ordered array: adding a scanner is a file
 * in scanners/ with its tests and one line here.
 */
import { agentConfig } from './scanners/agent-config.js';
import { credentialFishing } from './scanners/credential-fishing.js';
import { encodedPayload } from './scanners/encoded-payload.js';
import { exfiltration } from './scanners/exfiltration.js';
import { hiddenContent } from './scanners/hidden-content.js';
import { instructionOverride } from './scanners/instruction-override.js';
import { invisibleCharacters } from './scanners/invisible-characters.js';
import { roleSpoofing } from './scanners/role-spoofing.js';
import { excerptOf, viewOf } from './text.js';
import type { Finding, Scanner, ScreenInput } from './types.js';
import { SEVERITIES } from './types.js';

export const SCANNERS: readonly Scanner[] = [
  invisibleCharacters,
  hiddenContent,
  roleSpoofing,
  instructionOverride,
  encodedPayload,
  exfiltration,
  credentialFishing,
  agentConfig,
];

/** Findings of one scanner in one field beyond this many are dropped (the first ones are kept). */
export const MAX_FINDINGS_PER_SCANNER_FIELD = 10;

/** Runs `scanners` (all of them by default) over every field; findings in field order, then offset. */
export function scan(input: ScreenInput, scanners: readonly Scanner[] = SCANNERS): Finding[] {
  const findings: Finding[] = [];
  for (const field of input.fields) {
    if (field.text === '') continue;
    const view = viewOf(field.text);
    const inField: Finding[] = [];
    for (const scanner of scanners) {
      const hits = scanner.scan(view);
      // The same place reported twice by one scanner (two rules, two patterns) keeps the worst.
      const byOffset = new Map<number, (typeof hits)[number]>();
      for (const hit of hits) {
        const seen = byOffset.get(hit.offset);
        if (!seen || SEVERITIES.indexOf(hit.severity) > SEVERITIES.indexOf(seen.severity))
          byOffset.set(hit.offset, hit);
      }
      const kept = [...byOffset.values()]
        .sort(
          (a, b) => SEVERITIES.indexOf(b.severity) - SEVERITIES.indexOf(a.severity) || a.offset - b.offset,
        )
        .slice(0, MAX_FINDINGS_PER_SCANNER_FIELD);
      for (const hit of kept) {
        inField.push({
          scanner: scanner.id,
          rule: hit.rule,
          severity: hit.severity,
          field: field.name,
          offset: hit.offset,
          excerpt: excerptOf(field.text, hit.offset, hit.length),
        });
      }
    }
    inField.sort((a, b) => a.offset - b.offset);
    findings.push(...inField);
  }
  return findings;
}
