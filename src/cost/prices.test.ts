import { describe, expect, it } from 'vitest';
import { loadSettingsFromText } from '../config/load.js';
import { costOf, formatCost, normalizeModel, priceFor, runCost } from './prices.js';

const USAGE = { inputTokens: 1_000_000, cachedInputTokens: 400_000, outputTokens: 100_000 };

describe('the price table', () => {
  it('prices usage with the built-in list price: uncached input, cached input and output', () => {
    // claude-sonnet-4-5: $3 input, $0.30 cached, $15 output per million.
    expect(runCost(USAGE, 'claude', 'claude-sonnet-4-5-20250929')).toBeCloseTo(
      0.6 * 3 + 0.4 * 0.3 + 0.1 * 15,
      9,
    );
    expect(costOf(USAGE, { input: 1, output: 2, cached: 0.5 })).toBeCloseTo(0.6 + 0.2 + 0.2, 9);
  });

  it('knows the common models of each vendor under the names CLIs use', () => {
    expect(priceFor('claude', 'opus')).toEqual({ input: 5, output: 25, cached: 0.5 });
    expect(priceFor('claude', 'claude-opus-4-1')).toEqual({ input: 15, output: 75, cached: 1.5 });
    expect(priceFor('claude', 'haiku')).toEqual({ input: 1, output: 5, cached: 0.1 });
    expect(priceFor('codex', 'gpt-5-codex')).toEqual({ input: 1.25, output: 10, cached: 0.125 });
    expect(priceFor('codex', 'o4-mini')).toEqual({ input: 1.1, output: 4.4, cached: 0.275 });
    expect(priceFor('gemini', 'gemini-2.5-pro')).toEqual({ input: 1.25, output: 10, cached: 0.125 });
    expect(priceFor('gemini', 'gemini-2.5-flash')).toEqual({ input: 0.3, output: 2.5, cached: 0.03 });
    expect(priceFor('opencode', 'anthropic/claude-sonnet-4.5')).toEqual({
      input: 3,
      output: 15,
      cached: 0.3,
    });
    expect(normalizeModel('Anthropic/Claude-Opus-4.5[1m]')).toBe('claude-opus-4-5');
  });

  it('an unknown model, or none, has an unknown cost (shown as –), unless the agent reported one', () => {
    expect(priceFor('codex', 'my-local-llama')).toBeNull();
    expect(runCost(USAGE, 'codex', 'my-local-llama')).toBeNull();
    expect(runCost(USAGE, 'claude', undefined)).toBeNull();
    expect(runCost({ ...USAGE, costUsd: 0.42 }, 'claude', undefined)).toBe(0.42);
    expect(runCost(null, 'claude', 'opus')).toBeNull();
    expect(formatCost(null)).toBe('–');
    expect(formatCost(2.5)).toBe('$2.50');
    expect(formatCost(0.0123)).toBe('$0.0123');
  });

  it('[pricing."<provider>/<model>"] overrides a built-in row and prices an unknown model', () => {
    const { settings } = loadSettingsFromText(
      `[repositories.api]
remote = "https://example.com/acme/api.git"
[agents.profiles.main]
provider = "codex"
[agents.defaults]
profile = "main"
[pricing."codex/gpt-5-codex"]
input = 2
output = 20
[pricing."codex/my-local-llama"]
input = 0.1
output = 0.2
cached = 0
[automations.nightly]
repository = "api"
schedule = "0 3 * * *"
prompt = "Tidy up"
`,
      '/tmp/curupira-prices/settings.toml',
    );
    expect(settings.pricing).toEqual({
      'codex/gpt-5-codex': { input: 2, output: 20, cached: 2 },
      'codex/my-local-llama': { input: 0.1, output: 0.2, cached: 0 },
    });
    expect(runCost(USAGE, 'codex', 'gpt-5-codex', settings.pricing)).toBeCloseTo(2 + 2, 9);
    expect(runCost(USAGE, 'codex', 'my-local-llama', settings.pricing)).toBeCloseTo(0.06 + 0.02, 9);
    // Another provider running the same model keeps the built-in price.
    expect(runCost(USAGE, 'opencode', 'gpt-5-codex', settings.pricing)).toBeCloseTo(0.75 + 0.05 + 1, 9);
  });

  it('rejects a pricing key that is not "<provider>/<model>" and a negative price', () => {
    expect(() =>
      loadSettingsFromText(
        `[repositories.api]
remote = "https://example.com/acme/api.git"
[agents.profiles.main]
provider = "codex"
[agents.defaults]
profile = "main"
[pricing.opus]
input = -1
output = 1
[automations.nightly]
repository = "api"
schedule = "0 3 * * *"
prompt = "Tidy up"
`,
        '/tmp/curupira-prices/settings.toml',
      ),
    ).toThrow(/pricing/);
  });
});
