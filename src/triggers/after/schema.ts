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
      .union([
        z.enum(['success', 'failure', 'any']),
        z
          .string()
          .regex(
            /^[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*$/,
            'on is `success`, `failure`, `any` or an outcome the upstream automation declares',
          ),
      ])
      .default('success')
      .describe(
        'Which upstream outcomes start a run: `success`, `failure` (failed, timed out or stalled), `any`, or one outcome the upstream automation reports (`on = "ready-for-agent"`, or `noop`/`skipped`; its `outcomes`, docs/pipeline.md). A run that reported `noop` or `skipped` is neither a success nor a failure.',
      ),
    on_no_changes: z
      .enum(['fire', 'skip'])
      .optional()
      .describe(
        'Whether an upstream run that succeeded without changing anything (its reason says `no changes`) starts this chain: `fire` or `skip`. Default: `skip` when the upstream automation delivers (`deliver` is set: there is nothing to review), else `fire`.',
      ),
    repo: RepoSlug.optional().describe('`owner/name` exposed as `${repo}`; default the repository alias.'),
  })
  .describe('A chained automation (curupira extension): runs when another automation’s run finishes.');
export type AfterAutomation = z.infer<typeof AfterAutomation>;

export const AFTER_PROMPT_FIELDS = [
  'upstream_automation',
  'upstream_run_id',
  'upstream_status',
  'upstream_outcome',
  'upstream_item',
  'upstream_item_title',
  'upstream_item_url',
  'upstream_branch',
  'upstream_commit',
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
  untrustedFields: ['upstream_item_title', 'upstream_summary', 'upstream_outcome', 'task_title'],
  explain(automation: AfterResolved): ExplainLine[] {
    const c = automation.config;
    const outcome = (
      {
        success: 'succeeds',
        failure: 'fails, times out or stalls',
        any: 'finishes (any outcome)',
      } as Record<string, string | undefined>
    )[c.on];
    if (outcome === undefined)
      return [{ label: 'runs when', value: `a run of '${c.after}' reports the outcome ${c.on}` }];
    if (c.on === 'failure') return [{ label: 'runs when', value: `a run of '${c.after}' ${outcome}` }];
    const noChanges = {
      fire: 'a run that changed nothing too',
      skip: 'not a run that changed nothing',
      default: `a run that changed nothing only when '${c.after}' does not deliver`,
    }[c.on_no_changes ?? 'default'];
    return [{ label: 'runs when', value: `a run of '${c.after}' ${outcome} (${noChanges})` }];
  },
};

/** A resolved automation of this trigger: its type and its validated table together. */
export type AfterResolved = AutomationOf<'after', AfterAutomation>;
