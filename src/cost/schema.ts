/**
 * The cost feature's settings: the `[pricing]` table and its budget keys, of `[settings]` and of
 * every automation (composed into the settings schema by src/config/schema.ts and
 * src/triggers/common-schema.ts).
 */
import { z } from 'zod';

const PerMillion = z.number().min(0, 'must be 0 or more').refine(Number.isFinite, 'must be a finite number');

export const PriceTable = z
  .strictObject({
    input: PerMillion.describe('USD per million input tokens (the part not read from a cache).'),
    output: PerMillion.describe('USD per million output tokens (reasoning tokens included).'),
    cached: PerMillion.optional().describe(
      'USD per million cached input tokens (cache reads); default the `input` price.',
    ),
  })
  .describe('The price of one model.');
export type PriceTable = z.infer<typeof PriceTable>;

export const PricingTable = z
  .record(
    z.string().regex(/^[a-z]+\/\S+$/, 'a pricing key is "<provider>/<model>", e.g. "claude/opus"'),
    PriceTable,
  )
  .describe(
    'Token prices by `"<provider>/<model>"` (the profile’s provider and `model`, e.g. `[pricing."codex/gpt-5-codex"]`), replacing the built-in list prices (docs/cost.md) (curupira extension).',
  );

/** A budget in USD: a positive number. */
export const BudgetUsd = z
  .number()
  .positive('must be greater than 0')
  .refine(Number.isFinite, 'must be a finite number');

/** The cost feature's keys of `[settings]`. */
export const costSettingsShape = {
  max_cost_per_run: BudgetUsd.optional().describe(
    'Default USD budget of one run (an automation can set its own): at 80 % a warning, at 100 % the agent is stopped (its session kept, the run `cancelled` with `budget reached`) and the automation parks until the next UTC day. Costs come from `[pricing]` and the built-in list prices (docs/cost.md); a run of unknown cost never counts (curupira extension).',
  ),
  max_cost_per_automation_per_day: BudgetUsd.optional().describe(
    'Default USD budget of each automation per UTC day (an automation sets its own with `max_cost_per_day`): at 80 % a warning, at 100 % its running agents are stopped (sessions kept) and it parks until the next UTC day (curupira extension).',
  ),
  max_cost_per_day: BudgetUsd.optional().describe(
    'USD budget of all automations together per UTC day: at 80 % a warning, at 100 % every running agent is stopped (sessions kept) and every automation parks until the next UTC day (curupira extension).',
  ),
};

/** The cost feature's keys of every automation table. */
export const costAutomationShape = {
  max_cost_per_run: BudgetUsd.optional().describe(
    'This automation’s USD budget per run; default `[settings] max_cost_per_run` (docs/cost.md) (curupira extension).',
  ),
  max_cost_per_day: BudgetUsd.optional().describe(
    'This automation’s USD budget per UTC day; default `[settings] max_cost_per_automation_per_day` (docs/cost.md) (curupira extension).',
  ),
};
