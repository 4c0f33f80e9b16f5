/**
 * The pipeline keys of every automation (issue 32, seed 001): the outcomes its agent may report,
 * the label handoffs each outcome makes on the item, and the inputs a run may be given. Composed
 * into the automation schema by src/triggers/common-schema.ts; a leaf module (zod only).
 */
import { z } from 'zod';
import { STEP_NAMES } from './steps.js';

const OUTCOME = /^[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*$/;
const Outcome = z
  .string()
  .regex(OUTCOME, 'an outcome is lowercase words joined by `-` or `_` (e.g. `ready-for-agent`)');

const Label = z.string().refine((v) => v.trim().length > 0, 'must not be empty');

export const Handoff = z
  .strictObject({
    add_labels: z.array(Label).default([]).describe('Labels put on the item (created when missing).'),
    remove_labels: z.array(Label).default([]).describe('Labels taken off the item (absent ones are fine).'),
    review: z
      .enum(['APPROVE', 'REQUEST_CHANGES', 'COMMENT'])
      .optional()
      .describe(
        'On a pull request: a review with this event, its body the reported result (GitHub refuses APPROVE and REQUEST_CHANGES on a pull request of the token’s own account: use COMMENT there).',
      ),
  })
  .describe('What one outcome does to the item’s labels.');
export type Handoff = z.infer<typeof Handoff>;

/** An input name: what `--set name=value` and `${name}` in the prompt use. */
export const INPUT_NAME = /^[a-z][a-z0-9_]*$/;

export const pipelineAutomationShape = {
  step: z
    .enum(STEP_NAMES)
    .optional()
    .describe(
      'A step of seed 001’s issue-to-merge pipeline (curupira extension, docs/pipeline.md): `explore`, `triage`, `implement`, `shepherd` or `review` fills in that step’s trigger and filters, `outcomes`, `handoffs`, `lease_ttl` and a prompt with the step’s rules and its closed result set, under every key this table sets itself (`validate --explain` shows the result).',
    ),
  outcomes: z
    .array(Outcome)
    .optional()
    .describe(
      'The outcomes this automation’s agent reports, one per run (curupira extension, docs/pipeline.md): a closed set such as `["ready-for-agent", "needs-info", "duplicate"]`, to which `noop`, `skipped` and `failed` always belong. Set it and every run must end with a result (the result line `#N <outcome>` or `noop: <reason>` in the final message, or the result tool): a run without one, or with one outside the set, fails. `noop` and `skipped` become run statuses of their own: neither a success for chains nor a failure for the failure budget. Unset: results are not read.',
    ),
  handoffs: z
    .record(Outcome, Handoff)
    .optional()
    .describe(
      'Write to GitHub (opt-in): per reported outcome, the labels put on and taken off the issue or pull request when the run ends (`[automations.triage.handoffs.ready-for-agent] add_labels = ["agent:ready"]`), through the write queue (retried, paced, once per run). Each key is one of `outcomes` or `noop`, `skipped`, `failed`.',
    ),
  inputs: z
    .record(z.string().regex(INPUT_NAME, 'an input name is lowercase letters, digits and `_`'), z.string())
    .optional()
    .describe(
      'Inputs a run may be given, each with its default (`inputs = { focus = "", base = "main" }`): `curupira run --set focus=docs` (also `trigger --set` and the API’s `inputs`) overrides one for that run; the prompt reads each as `${name}`; the run record keeps them. A key not declared here is rejected with the declared list.',
    ),
} as const;

/** The `validate --explain` rows of the pipeline keys: the outcome set, each handoff, the inputs. */
export function pipelineExplainRows(config: {
  step?: string | undefined;
  outcomes?: readonly string[] | undefined;
  handoffs?: Readonly<Record<string, Handoff>> | undefined;
  inputs?: Readonly<Record<string, string>> | undefined;
}): [string, string][] {
  const rows: [string, string][] = [];
  if (config.step !== undefined)
    rows.push([
      'step',
      `${config.step} (seed 001's preset: the keys this table leaves unset, shown here, come from it)`,
    ]);
  if (config.outcomes !== undefined) {
    const set = [...new Set([...config.outcomes, 'noop', 'skipped', 'failed'])];
    rows.push([
      'outcomes',
      `${set.join(', ')} (the agent ends with one result line, \`#N <outcome>\` or \`<outcome>: <reason>\`, or calls the result tool; none, or one outside the set, fails the run; noop and skipped are neither successes nor failures)`,
    ]);
  }
  for (const [outcome, handoff] of Object.entries(config.handoffs ?? {})) {
    const parts = [
      ...(handoff.remove_labels.length > 0 ? [`takes off ${handoff.remove_labels.join(', ')}`] : []),
      ...(handoff.add_labels.length > 0 ? [`puts on ${handoff.add_labels.join(', ')}`] : []),
      ...(handoff.review ? [`posts a review (${handoff.review}) on a pull request`] : []),
    ];
    rows.push([
      `on ${outcome}`,
      parts.length > 0 ? `${parts.join(', then ')} (write queue)` : 'no label change',
    ]);
  }
  const inputs = Object.entries(config.inputs ?? {});
  if (inputs.length > 0)
    rows.push([
      'inputs',
      `${inputs.map(([k, v]) => `${k} (default ${JSON.stringify(v)})`).join(', ')}; set per run with --set key=value`,
    ]);
  return rows;
}
