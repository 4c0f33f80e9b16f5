/** The `[pricing]` table and the budget keys' shape (composed into the settings schema). */
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
