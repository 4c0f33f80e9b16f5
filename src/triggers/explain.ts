import type { ExplainLine } from './types.js';

/**
 * The `item memory` and `backlog` rows of `validate --explain` for a trigger that polls items:
 * what a restart does with an item that already ran, and what happens to the first poll's items.
 */
export function memoryLines(
  memory: string,
  ignoreBacklog: boolean | undefined,
  items: string,
): ExplainLine[] {
  const lines: ExplainLine[] = [{ label: 'item memory', value: memory }];
  if (ignoreBacklog)
    lines.push({ label: 'backlog', value: `ignored: ${items} at the first poll are recorded as skipped` });
  return lines;
}
