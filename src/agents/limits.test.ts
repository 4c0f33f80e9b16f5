/** Each provider's real usage-limit messages (as users reported them) are recognised, with their reset. */
import { describe, expect, it } from 'vitest';
import {
  API_LIMITS,
  CLAUDE_LIMITS,
  CODEX_LIMITS,
  COPILOT_LIMITS,
  CURSOR_LIMITS,
  detectLimit,
  GEMINI_LIMITS,
  nextWallClock,
  parseDuration,
  QWEN_LIMITS,
} from './limits.js';

const NOW = Date.UTC(2026, 11, 1, 12, 0, 0);
const H = 3_600_000;

describe('usage and rate limits', () => {
  it('Claude Code: the epoch form, the clock forms with a time zone, and the API 429', () => {
    expect(detectLimit(CLAUDE_LIMITS, ['Claude AI usage limit reached|1796140800'], NOW)).toEqual({
      kind: 'usage',
      resetAt: 1796140800_000,
      message: 'Claude AI usage limit reached|1796140800',
    });
    expect(detectLimit(CLAUDE_LIMITS, ['5-hour limit reached ∙ resets 3pm (UTC)'], NOW)?.resetAt).toBe(
      NOW + 3 * H,
    );
    expect(
      detectLimit(CLAUDE_LIMITS, ["You've hit your limit · resets 4:50am (Europe/Rome)"], NOW)?.resetAt,
    ).toBe(Date.UTC(2026, 11, 2, 3, 50));
    expect(
      detectLimit(
        CLAUDE_LIMITS,
        ['Claude usage limit reached. Your limit will reset at 9am (America/Chicago).'],
        NOW,
      )?.resetAt,
    ).toBe(Date.UTC(2026, 11, 1, 15, 0));
    expect(
      detectLimit(CLAUDE_LIMITS, ["You've hit your session limit · resets 3:50pm (Asia/Tokyo)"], NOW)
        ?.resetAt,
    ).toBe(Date.UTC(2026, 11, 2, 6, 50));
    const api = detectLimit(
      CLAUDE_LIMITS,
      [
        'Error: 429 {"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed your account\'s rate limit. Please try again later."}}',
      ],
      NOW,
    );
    expect(api).toMatchObject({ kind: 'rate' });
    expect(api?.resetAt).toBeUndefined();
  });

  it('Codex: "try again in" a duration or "at" a date', () => {
    const text =
      "■ You've hit your usage limit. Upgrade to Pro (https://openai.com/chatgpt/pricing) or try again in 2 days 17 hours 14 minutes.";
    expect(detectLimit(CODEX_LIMITS, [text], NOW)?.resetAt).toBe(NOW + (2 * 24 + 17) * H + 14 * 60_000);
    const at = detectLimit(
      CODEX_LIMITS,
      [
        "You've hit your usage limit. Upgrade to Plus to continue using Codex (https://chatgpt.com/explore/plus), or try again at Dec 5th, 2026 8:19 PM.",
      ],
      NOW,
    );
    expect(at?.resetAt).toBe(Date.parse('Dec 5, 2026 8:19 PM'));
  });

  it('Gemini CLI: capacity exhausted with "reset after", and RESOURCE_EXHAUSTED 429s', () => {
    expect(
      detectLimit(
        GEMINI_LIMITS,
        ['You have exhausted your capacity on this model. Your quota will reset after 2h30m5s.'],
        NOW,
      )?.resetAt,
    ).toBe(NOW + 2.5 * H + 5000);
    expect(
      detectLimit(
        GEMINI_LIMITS,
        [
          '[API Error: {"error":{"code":429,"message":"Resource has been exhausted (e.g. check quota).","status":"RESOURCE_EXHAUSTED"}}]',
        ],
        NOW,
      ),
    ).toMatchObject({ kind: 'rate' });
    expect(
      detectLimit(
        GEMINI_LIMITS,
        ['Quota exceeded for quota metric generate_requests_per_model_per_day'],
        NOW,
      ),
    ).toMatchObject({
      kind: 'usage',
    });
  });

  it('Copilot CLI: the rate limit "in 2 hours" and the weekly limit with its date', () => {
    expect(
      detectLimit(
        COPILOT_LIMITS,
        [
          "✗ Sorry, you've hit a rate limit that restricts the number of Copilot model requests you can make within a specific time period. Please try again in 2 hours. Please review our Terms of Service",
        ],
        NOW,
      ),
    ).toMatchObject({ kind: 'rate', resetAt: NOW + 2 * H });
    expect(
      detectLimit(
        COPILOT_LIMITS,
        [
          "You've reached your weekly rate limit. Please wait for your limit to reset on December 20, 2026 at 2:00 AM or switch to auto model to continue.",
        ],
        NOW,
      )?.resetAt,
    ).toBe(Date.parse('December 20, 2026 2:00 AM'));
  });

  it('Cursor, Qwen Code and the multi-provider CLIs', () => {
    expect(
      detectLimit(
        CURSOR_LIMITS,
        [
          "Error: You've hit your usage limit\n  chatMessage: *You've hit your free requests limit. Your usage limits will reset when your monthly cycle ends on 12/17/2026.*",
        ],
        NOW,
      )?.resetAt,
    ).toBe(Date.parse('12/17/2026'));
    expect(detectLimit(QWEN_LIMITS, ['429 Free allocated quota exceeded.'], NOW)).toMatchObject({
      kind: 'usage',
    });
    expect(
      detectLimit(QWEN_LIMITS, ['Internal error: Qwen OAuth free tier quota exceeded.'], NOW),
    ).toMatchObject({
      kind: 'usage',
    });
    expect(
      detectLimit(
        API_LIMITS,
        [
          '{"error":{"type":"usage_limit_reached","message":"The usage limit has been reached","resets_in_seconds":600}}',
        ],
        NOW,
      ),
    ).toMatchObject({ kind: 'usage', resetAt: NOW + 600_000 });
  });

  it('other failures are not limits; a reset in the past is dropped', () => {
    expect(
      detectLimit(CLAUDE_LIMITS, ['error: simulated failure requested by the prompt', undefined], NOW),
    ).toBeUndefined();
    expect(detectLimit(CODEX_LIMITS, ['fatal: not a git repository'], NOW)).toBeUndefined();
    const past = detectLimit(CLAUDE_LIMITS, ['Claude AI usage limit reached|1700000000'], NOW);
    expect(past).toMatchObject({ kind: 'usage' });
    expect(past?.resetAt).toBeUndefined();
  });

  it('durations and wall clocks', () => {
    expect(parseDuration('5 days 22 hours 11 minutes')).toBe((5 * 24 + 22) * H + 11 * 60_000);
    expect(parseDuration('0s')).toBe(0);
    expect(parseDuration('soon')).toBeUndefined();
    expect(nextWallClock(NOW, 11, 0)).toBe(Date.UTC(2026, 11, 2, 11, 0));
    expect(nextWallClock(NOW, 13, 30, 'Not/AZone')).toBe(Date.UTC(2026, 11, 1, 13, 30));
  });
});
