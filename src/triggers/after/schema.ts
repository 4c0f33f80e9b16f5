import { z } from 'zod';
import type { AutomationOf } from '../../config/types.js';
import { automationBaseShape, Identifier, RepoSlug, withoutItemKeys } from '../common-schema.js';
import type { ExplainLine, TriggerTable } from '../types.js';

export const AfterAutomation = z
  .strictObject({
    ...automationBaseShape,
    ...withoutItemKeys('a chained automation'),
    after: Identifier.describe('The upstream automation whose finished runs start this one.'),
    on: z
      .enum(['success', 'failure', 'any'])
      .default('success')
      .describe(
        'Which upstream outcomes start a run: `success`, `failure` (failed, timed out or stalled) or `any`.',
      ),
    repo: RepoSlug.optional().describe('`owner/name` exposed as `${repo}`; default the repository alias.'),
  })
  .describe('A chained automation (curupira extension): runs when another automation’s run finishes.');
export type AfterAutomation = z.infer<typeof AfterAutomation>;

export const AFTER_PROMPT_FIELDS = [
  'upstream_automation',
  'upstream_run_id',
  'upstream_status',
  'upstream_item',
  'upstream_item_title',
  'upstream_item_url',
  'upstream_branch',
  'upstream_worktree',
  'upstream_session',
  'upstream_transcript',
  'upstream_summary',
] as const;

export const afterTable: TriggerTable<AfterResolved> = {
  type: 'after',
  aliases: [],
  description: 'When another automation’s run finishes',
  schema: AfterAutomation,
  promptFields: AFTER_PROMPT_FIELDS,
  untrustedFields: ['upstream_item_title', 'upstream_summary', 'task_title'],
  explain(automation: AfterResolved): ExplainLine[] {
    const c = automation.config;
    const outcome = {
      success: 'succeeds',
      failure: 'fails, times out or stalls',
      any: 'finishes (any outcome)',
    }[c.on];
    return [{ label: 'runs when', value: `a run of '${c.after}' ${outcome}` }];
  },
};

/** A resolved automation of this trigger: its type and its validated table together. */
export type AfterResolved = AutomationOf<'after', AfterAutomation>;
