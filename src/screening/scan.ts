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
import { intent } from './scanners/intent.js';
import { invisibleCharacters } from './scanners/invisible-characters.js';
import { roleSpoofing } from './scanners/role-spoofing.js';
import { excerptOf, normalised, viewOf } from './text.js';
import type { Finding, Scanner, ScreenField, ScreenInput } from './types.js';
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
  intent,
];

/** Findings of one scanner in one field beyond this many are dropped (the first ones are kept). */
export const MAX_FINDINGS_PER_SCANNER_FIELD = 10;

/** Findings of `scanners` in one text, in offset order (at most MAX_FINDINGS_PER_SCANNER_FIELD each). */
function scanText(name: string, text: string, scanners: readonly Scanner[]): Finding[] {
  const view = viewOf(text);
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
      .sort((a, b) => SEVERITIES.indexOf(b.severity) - SEVERITIES.indexOf(a.severity) || a.offset - b.offset)
      .slice(0, MAX_FINDINGS_PER_SCANNER_FIELD);
    for (const hit of kept) {
      inField.push({
        scanner: scanner.id,
        rule: hit.rule,
        severity: hit.severity,
        field: name,
        offset: hit.offset,
        excerpt: excerptOf(text, hit.offset, hit.length),
      });
    }
  }
  inField.sort((a, b) => a.offset - b.offset);
  return inField;
}

/** The scanners that read the item as a whole: those that match wording (a sentence can be split). */
const WHOLE_ITEM = new Set([
  'instruction-override',
  'role-spoofing',
  'credential-fishing',
  'exfiltration',
  'intent',
]);

const key = (f: Finding) => `${f.field}\u0000${f.scanner}\u0000${f.rule}\u0000${f.severity}`;

/**
 * Runs `scanners` (all of them by default) over every field; findings in field order, then offset.
 * Then twice more, for what a field-by-field reading of the raw text misses:
 *
 * - each field *normalised* (text.ts: look-alike letters, fullwidth forms, tag characters and URL
 *   escapes read as plain text): a finding there that the raw text lacks is added, pointing at the
 *   field's start, its excerpt taken from the normalised text;
 * - the item *as a whole* (every field, normalised, one after the other): a payload split across
 *   the title, the body and comments. A finding there of a scanner and rule no field has is added,
 *   in the field where it starts.
 */
export function scan(input: ScreenInput, scanners: readonly Scanner[] = SCANNERS): Finding[] {
  const findings: Finding[] = [];
  const readers = scanners.filter((s) => s.id !== 'invisible-characters');
  const normal: ScreenField[] = [];
  for (const field of input.fields) {
    if (field.text === '') continue;
    const own = scanText(field.name, field.text, scanners);
    findings.push(...own);
    const text = normalised(field.text);
    normal.push({ name: field.name, text });
    if (text === field.text) continue;
    const seen = new Set(own.map(key));
    for (const finding of scanText(field.name, text, readers))
      if (!seen.has(key(finding)))
        findings.push({ ...finding, offset: 0, excerpt: `(read as) ${finding.excerpt}` });
  }
  if (normal.length > 1) {
    const starts: number[] = [];
    let whole = '';
    for (const field of normal) {
      starts.push(whole.length);
      whole += `${field.text}\n\n`;
    }
    const seen = new Set(findings.map((f) => `${f.scanner}\u0000${f.rule}`));
    for (const finding of scanText(
      'item',
      whole,
      readers.filter((s) => WHOLE_ITEM.has(s.id)),
    )) {
      if (seen.has(`${finding.scanner}\u0000${finding.rule}`)) continue;
      let i = starts.length - 1;
      while (i > 0 && starts[i]! > finding.offset) i -= 1;
      seen.add(`${finding.scanner}\u0000${finding.rule}`);
      findings.push({
        ...finding,
        field: normal[i]!.name,
        offset: finding.offset - starts[i]!,
        excerpt: `(whole item) ${finding.excerpt}`,
      });
    }
  }
  return findings;
}
