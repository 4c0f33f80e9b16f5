/**
 * What tokens cost: a built-in list-price table for the common models of each vendor, overridable
 * per `<provider>/<model>` under `[pricing]`. A model this table does not know has an unknown cost
 * (null), never a guessed one.
 *
 * Prices are USD per million tokens, as published by the vendors, checked on 2026-12-01:
 * - Anthropic: https://platform.claude.com/docs/en/about-claude/pricing ("cache hits" = cached).
 * - OpenAI: https://developers.openai.com/api/docs/pricing (cached input).
 * - Google: https://ai.google.dev/gemini-api/docs/pricing (prompts up to 200k tokens; context caching).
 * List prices change: `[pricing."<provider>/<model>"]` replaces a row without a new release.
 */
import type { Usage } from '../core/types.js';

/** USD per million tokens. `cached` prices the cached part of the input (cache reads). */
export interface ModelPrice {
  readonly input: number;
  readonly output: number;
  readonly cached: number;
}

function price(input: number, output: number, cached: number): ModelPrice {
  return { input, output, cached };
}

/**
 * Built-in rows: a model name pattern (after `normalizeModel`) and its price. The first match wins,
 * so specific names come before their family. Claude Code's aliases (`opus`, `sonnet`, `haiku`)
 * price as the family's current generation.
 */
const BUILT_IN: readonly (readonly [RegExp, ModelPrice])[] = [
  // Anthropic
  [/^claude-opus-4(?:-[01])?$|^claude-3-opus$/, price(15, 75, 1.5)],
  [/^(?:claude-)?opus(?:-[45](?:-\d+)?)?$/, price(5, 25, 0.5)],
  [/^claude-haiku-3-5$|^claude-3-5-haiku$/, price(0.8, 4, 0.08)],
  [/^(?:claude-)?haiku(?:-4(?:-5)?)?$/, price(1, 5, 0.1)],
  [/^(?:claude-)?sonnet(?:-4(?:-\d+)?)?$|^claude-3-7-sonnet$/, price(3, 15, 0.3)],
  // OpenAI (Codex CLI, and OpenAI models through OpenCode, Kilo, pi, Copilot, Cursor)
  [/^gpt-5(?:\.1)?(?:-codex)?(?:-max)?$/, price(1.25, 10, 0.125)],
  [/^gpt-5(?:\.1)?(?:-codex)?-mini$/, price(0.25, 2, 0.025)],
  [/^gpt-5-nano$/, price(0.05, 0.4, 0.005)],
  [/^gpt-5\.4(?:-codex)?$/, price(2.5, 15, 0.25)],
  [/^gpt-5\.4-mini$/, price(0.75, 4.5, 0.075)],
  [/^gpt-5\.4-nano$/, price(0.2, 1.25, 0.02)],
  [/^gpt-5\.5(?:-codex)?$/, price(5, 30, 0.5)],
  [/^gpt-4\.1$/, price(2, 8, 0.5)],
  [/^o3$/, price(2, 8, 0.5)],
  [/^o4-mini$/, price(1.1, 4.4, 0.275)],
  [/^o3-mini$/, price(1.1, 4.4, 0.55)],
  // Google
  [/^gemini-2\.5-pro$/, price(1.25, 10, 0.125)],
  [/^gemini-2\.5-flash$/, price(0.3, 2.5, 0.03)],
  [/^gemini-2\.5-flash-lite$/, price(0.1, 0.4, 0.01)],
];

/**
 * The model's name as the table knows it: lower case, without a vendor prefix (`anthropic/…`,
 * `openai/…`, `models/…`), a date or `latest` suffix, a `[1m]` context tag or an `@version`.
 */
export function normalizeModel(model: string): string {
  const name = model
    .trim()
    .toLowerCase()
    .replace(/^.*\//, '')
    .replace(/\[[^\]]*\]$/, '')
    .replace(/@.*$/, '')
    .replace(/-(?:\d{8}|latest|preview(?:-[\d-]+)?)$/, '');
  // Anthropic names use dashes (claude-sonnet-4-5) where people often write dots (4.5).
  return /^(?:claude|opus|sonnet|haiku)/.test(name) ? name.replaceAll('.', '-') : name;
}

/** `[pricing]` keys: `<provider>/<model>` exactly as the profile names them. */
export type PriceOverrides = Readonly<Record<string, ModelPrice>>;

/** The price of one model run by one provider's CLI: an override, else the built-in row, else null. */
export function priceFor(
  provider: string,
  model: string | null | undefined,
  overrides: PriceOverrides = {},
): ModelPrice | null {
  if (!model) return null;
  const override = overrides[`${provider}/${model}`];
  if (override) return override;
  const name = normalizeModel(model);
  for (const [pattern, row] of BUILT_IN) if (pattern.test(name)) return row;
  return null;
}

/**
 * USD for a run's usage at a price. `inputTokens` counts every prompt token, cached ones included
 * (the driver contract), so the uncached part is priced at `input` and the rest at `cached`.
 */
export function costOf(usage: Usage, rate: ModelPrice): number {
  const cached = Math.min(usage.cachedInputTokens, usage.inputTokens);
  const fresh = usage.inputTokens - cached;
  return (fresh * rate.input + cached * rate.cached + usage.outputTokens * rate.output) / 1_000_000;
}

/**
 * A run's cost: priced from the table when the model is known, else what the agent itself reported
 * (Claude Code prints one), else null (unknown).
 */
export function runCost(
  usage: Usage | null,
  provider: string,
  model: string | null | undefined,
  overrides?: PriceOverrides,
): number | null {
  if (!usage) return null;
  const rate = priceFor(provider, model, overrides);
  if (rate) return costOf(usage, rate);
  return usage.costUsd ?? null;
}

/** `$0.0123`, `$1.24`, or `–` when unknown. */
export function formatCost(cost: number | null | undefined): string {
  if (cost === null || cost === undefined) return '–';
  if (cost === 0) return '$0.00';
  if (cost < 0.1) return `$${cost.toFixed(4)}`;
  return `$${cost.toFixed(2)}`;
}
