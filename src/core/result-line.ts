/**
 * The result line (issue 32, seed 001): how an agent without a result tool reports what it did, as
 * one line of its final message, from a closed set: `#N <outcome>`, `#N skipped: <reason>`,
 * `#N noop: <reason>`, `#N failed: <reason>` (the `#N ` part is optional; any outcome may carry a
 * `: <reason>`). The set is the automation's declared `outcomes` plus `noop`, `skipped`, `failed`.
 * What a reported outcome does to the run is decided in src/core/outcome.ts (`reportedOutcome`).
 */
import type { RunResult } from './types.js';

/** Outcomes every automation that declares outcomes accepts: they are statuses of their own. */
export const BUILT_IN_OUTCOMES = ['noop', 'skipped', 'failed'] as const;

/** The closed set of an automation that declares `outcomes`: its own, then the built-in ones. */
export function outcomeSet(declared: readonly string[]): string[] {
  return [...new Set([...declared, ...BUILT_IN_OUTCOMES])];
}

/** An outcome name: lowercase words joined by `-` or `_` (`ready-for-agent`, `needs_info`). */
export const OUTCOME_PATTERN = /^[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*$/;

const LINE = /^(?:#(\d+)\s+)?([a-z][a-z0-9]*(?:[-_][a-z0-9]+)*)(?:\s*:\s*(.*))?$/;

/** What the final message said: a result of the set, a `#N word` line outside it, or nothing. */
export type ParsedResult =
  | { kind: 'result'; result: RunResult }
  | { kind: 'undeclared'; outcome: string; line: string }
  | { kind: 'none' };

/** Removes what a model wraps a line in: list dashes, backticks, bold. */
function bare(line: string): string {
  return line
    .trim()
    .replace(/^[-*>]\s+/, '')
    .replace(/^(`+|\*\*)(.*)\1$/, '$2')
    .trim();
}

/**
 * The last line of `text` that is a result of `set`. A `#N word` line whose word is not in the
 * set, with no result line below it, is reported as `undeclared` (the agent tried and missed).
 */
export function parseResultLine(text: string, set: readonly string[]): ParsedResult {
  const lines = text.split(/\r?\n/);
  for (let i = lines.length - 1; i >= 0; i -= 1) {
    const line = bare(lines[i]!);
    if (!line) continue;
    const match = LINE.exec(line);
    if (!match) continue;
    const [, item, outcome, reason] = match;
    if (!set.includes(outcome!)) {
      if (item !== undefined) return { kind: 'undeclared', outcome: outcome!, line };
      continue;
    }
    const trimmed = reason?.trim();
    return {
      kind: 'result',
      result: {
        outcome: outcome!,
        reason: trimmed ? trimmed : null,
        ...(item === undefined ? {} : { item: Number(item) }),
        via: 'line',
      },
    };
  }
  return { kind: 'none' };
}

/** A reported result in one line, as the seed writes it: `#31 duplicate: same as #12 (of=12)`. */
export function formatResult(result: RunResult): string {
  const fields = Object.entries(result.fields ?? {});
  return `${result.item === undefined ? '' : `#${result.item} `}${result.outcome}${result.reason ? `: ${result.reason}` : ''}${
    fields.length > 0 ? ` (${fields.map(([k, v]) => `${k}=${v}`).join(', ')})` : ''
  }`;
}

/** A run's inputs in one line: `focus=docs, base=main`. */
export function formatInputs(inputs: Readonly<Record<string, string>>): string {
  return Object.entries(inputs)
    .map(([k, v]) => `${k}=${v}`)
    .join(', ');
}
