/** Test helpers for the scanners (imported by *.test.ts only). */
import { viewOf } from './text.js';
import type { Scanner, Severity } from './types.js';

/** `rule:severity` for every hit of `scanner` on `text`, in offset order. */
export function hitsOf(scanner: Scanner, text: string): string[] {
  return scanner
    .scan(viewOf(text))
    .sort((a, b) => a.offset - b.offset)
    .map((hit) => `${hit.rule}:${hit.severity}`);
}

const BLOCKING: readonly Severity[] = ['high', 'critical'];

/** True when any hit would block under the default policy (high or critical). */
export function blocks(scanner: Scanner, text: string): boolean {
  return scanner.scan(viewOf(text)).some((hit) => BLOCKING.includes(hit.severity));
}
