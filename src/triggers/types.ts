/**
 * The contract of a trigger: a schema for its automation table, the prompt fields it provides, how
 * `validate --explain` describes it, and (in `index.ts` of each folder) how it discovers items.
 */
import type { z } from 'zod';
import type { ResolvedAutomation } from '../config/types.js';

export const TRIGGER_TYPES = [
  'github-issues',
  'github-pull-requests',
  'github-project-items',
  'cron',
  'after',
] as const;
export type TriggerType = (typeof TRIGGER_TYPES)[number];

export interface ExplainLine {
  label: string;
  value: string;
}

export interface TriggerDefinition {
  /** Canonical type, also the task type in identities and worktree names. */
  readonly type: TriggerType;
  /** Other spellings accepted in `trigger_type` (the seed's `plugins-py/…`). */
  readonly aliases: readonly string[];
  readonly description: string;
  /** The automation table's strict schema (shared fields included). */
  readonly schema: z.ZodType;
  /** Prompt fields this trigger adds to the common ones, in the order items list them. */
  readonly promptFields: readonly string[];
  /** Prompt fields that carry text written by strangers. */
  readonly untrustedFields: readonly string[];
  /** Lines describing what the automation will do, for `validate --explain`. */
  explain(automation: ResolvedAutomation, now: Date): ExplainLine[];
}
