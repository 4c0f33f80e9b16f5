/**
 * Usage and rate limits of the agents' providers (issue 15). A driver lists the messages its CLI
 * prints when the account hit a usage limit (a 5-hour or weekly window, a monthly quota) or a rate
 * limit (HTTP 429), each with how to read the reset time when the message gives one. The executor
 * checks a failed run's reported error and stderr tail against its driver's patterns: a match
 * parks the run (status `parked`) until the reset, or for a backoff when none is printed, and the
 * engine starts no run of that provider until then; other providers keep running.
 *
 * The messages are the real ones, as users reported them in each CLI's issue tracker (anthropics/
 * claude-code #9046, #9236, #28698, #86272; openai/codex #3124, #3899, #26668; google-gemini/
 * gemini-cli #1088, #1848, #22107; github/copilot-cli #2144, #2828; cursor/cursor #3703;
 * QwenLM/qwen-code #1742, #3296); the fake agents print the same text (`[[fake:limit]]`).
 */

export interface UsageLimit {
  /** `usage`: an account quota or usage window; `rate`: requests too fast (HTTP 429). */
  kind: 'usage' | 'rate';
  /** Epoch ms the provider says the limit lifts, when its message says. */
  resetAt?: number;
  /** The line that matched, for the run's reason. */
  message: string;
}

export interface LimitPattern {
  kind: UsageLimit['kind'];
  pattern: RegExp;
  /** Reads the reset time (epoch ms) from the text, given the time now; undefined when it cannot. */
  reset?(text: string, now: number): number | undefined;
}

/** How long a provider is parked when its message gives no reset time. */
export const DEFAULT_PARK_MS = 15 * 60_000;

const UNITS: Record<string, number> = {
  d: 86_400_000,
  day: 86_400_000,
  h: 3_600_000,
  hour: 3_600_000,
  m: 60_000,
  min: 60_000,
  minute: 60_000,
  s: 1000,
  sec: 1000,
  second: 1000,
};

/** `2 days 17 hours 14 minutes`, `2h30m5s`, `5s`, `2 hours` → ms (undefined when none). */
export function parseDuration(text: string): number | undefined {
  let total = 0;
  let found = false;
  for (const match of text.matchAll(
    /(\d+(?:\.\d+)?)\s*(days?|d|hours?|h|minutes?|mins?|m|seconds?|secs?|s)(?![a-z])/gi,
  )) {
    const unit = match[2]!.toLowerCase();
    const ms = UNITS[unit] ?? UNITS[unit.replace(/s$/, '')];
    if (ms === undefined) continue;
    total += Number(match[1]) * ms;
    found = true;
  }
  return found ? Math.round(total) : undefined;
}

/** The offset (ms) of `timeZone` from UTC at `at`. */
function zoneOffset(at: number, timeZone: string): number {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    hourCycle: 'h23',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
  }).formatToParts(new Date(at));
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? 0);
  const local = Date.UTC(
    get('year'),
    get('month') - 1,
    get('day'),
    get('hour'),
    get('minute'),
    get('second'),
  );
  return local - Math.floor(at / 1000) * 1000;
}

/**
 * The next instant after `now` whose wall clock in `timeZone` (UTC when unknown) reads `hour:minute`
 * (Claude Code's `resets 3pm (Europe/Rome)`, `reset at 9:30 AM`).
 */
export function nextWallClock(now: number, hour: number, minute: number, timeZone = 'UTC'): number {
  let zone = timeZone;
  try {
    zoneOffset(now, zone);
  } catch {
    zone = 'UTC';
  }
  const offset = zoneOffset(now, zone);
  const localNow = new Date(now + offset);
  let candidate =
    Date.UTC(localNow.getUTCFullYear(), localNow.getUTCMonth(), localNow.getUTCDate(), hour, minute) - offset;
  if (candidate <= now) candidate += 86_400_000;
  // A daylight-saving change between now and then moves the offset: read it at the candidate.
  return candidate + offset - zoneOffset(candidate, zone);
}

/** `3pm`, `4:50am`, `9:30 AM`, `15:00`, optionally followed by `(Area/City)`. */
const WALL_CLOCK = /\b(\d{1,2})(?::(\d{2}))?\s*(am|pm)?\s*(?:\(([A-Za-z_]+(?:\/[A-Za-z_+\-0-9]+)*)\))?/i;

function wallClockReset(after: RegExp) {
  return (text: string, now: number): number | undefined => {
    const tail = after.exec(text);
    if (!tail) return undefined;
    const clock = WALL_CLOCK.exec(text.slice(tail.index + tail[0].length));
    if (!clock) return undefined;
    let hour = Number(clock[1]);
    const minute = Number(clock[2] ?? 0);
    const meridiem = clock[3]?.toLowerCase();
    if (meridiem === 'pm' && hour < 12) hour += 12;
    if (meridiem === 'am' && hour === 12) hour = 0;
    if (hour > 23 || minute > 59) return undefined;
    return nextWallClock(now, hour, minute, clock[4]);
  };
}

function durationReset(after: RegExp) {
  return (text: string, now: number): number | undefined => {
    const match = after.exec(text);
    if (!match) return undefined;
    const rest = text.slice(match.index + match[0].length).split(/[.\n(]/)[0] ?? '';
    const ms = parseDuration(rest);
    return ms === undefined ? undefined : now + ms;
  };
}

/** A date the message spells out (`Jul 5th, 2026 8:19 PM`, `April 20, 2026 at 2:00 AM`, `11/17/2025`). */
function dateReset(after: RegExp) {
  return (text: string, now: number): number | undefined => {
    const match = after.exec(text);
    if (!match) return undefined;
    const words = (text.slice(match.index + match[0].length).split(/\.(?:\s|$)|\n|\*/)[0] ?? '')
      .replace(/(\d)(st|nd|rd|th)\b/g, '$1')
      .replace(/\bat\b/g, ' ')
      .trim()
      .split(/\s+/);
    // The longest run of leading words that reads as a date (`… 2:00 AM or switch to …`).
    for (let n = Math.min(words.length, 8); n > 0; n -= 1) {
      const at = Date.parse(words.slice(0, n).join(' '));
      if (Number.isFinite(at)) return at > now ? at : undefined;
    }
    return undefined;
  };
}

/** `"resets_at":1775317531` or `"resets_in_seconds":602705` in a provider's JSON error body. */
function jsonReset(text: string, now: number): number | undefined {
  const at = /"resets?_at"\s*:\s*(\d{9,11})/.exec(text);
  if (at) return Number(at[1]) * 1000;
  const inSeconds = /"resets?_in_seconds"\s*:\s*(\d+)/.exec(text);
  return inSeconds ? now + Number(inSeconds[1]) * 1000 : undefined;
}

/** What any provider's HTTP API says on a 429, as the multi-provider CLIs pass it on. */
export const API_LIMITS: readonly LimitPattern[] = [
  { kind: 'usage', pattern: /usage_limit_reached|The usage limit has been reached/i, reset: jsonReset },
  { kind: 'usage', pattern: /insufficient_quota|You exceeded your current quota/i, reset: jsonReset },
  { kind: 'rate', pattern: /rate_limit_error|would exceed your account's rate limit/i, reset: jsonReset },
  { kind: 'rate', pattern: /RESOURCE_EXHAUSTED|Resource has been exhausted/i },
  {
    kind: 'rate',
    pattern: /\b429\b[^\n]*(?:Too Many Requests|rate.?limit)|rate limit exceeded/i,
    reset: jsonReset,
  },
];

export const CLAUDE_LIMITS: readonly LimitPattern[] = [
  {
    kind: 'usage',
    pattern: /Claude AI usage limit reached\|(\d{9,11})/,
    reset: (text) => Number(/usage limit reached\|(\d{9,11})/.exec(text)?.[1]) * 1000 || undefined,
  },
  {
    kind: 'usage',
    pattern:
      /(?:Claude usage limit reached|You[’']ve hit your (?:session |weekly |usage )?limit|\d+-hour limit reached|limit reached\s*[∙·•]\s*resets)/i,
    reset: wallClockReset(/\bresets?(?:\s+at)?\b/i),
  },
  ...API_LIMITS,
];

export const CODEX_LIMITS: readonly LimitPattern[] = [
  {
    kind: 'usage',
    pattern: /You[’']ve hit your usage limit/i,
    reset: (text, now) => durationReset(/try again in/i)(text, now) ?? dateReset(/try again at/i)(text, now),
  },
  ...API_LIMITS,
];

export const GEMINI_LIMITS: readonly LimitPattern[] = [
  {
    kind: 'usage',
    pattern: /exhausted your capacity on this model|reached your daily .*quota limit|Quota exceeded/i,
    reset: durationReset(/quota will reset after/i),
  },
  ...API_LIMITS,
];

export const COPILOT_LIMITS: readonly LimitPattern[] = [
  {
    kind: 'rate',
    pattern: /you[’']ve hit a rate limit|you have been rate-limited/i,
    reset: durationReset(/try again in/i),
  },
  {
    kind: 'usage',
    pattern:
      /You[’']ve reached your (?:weekly|monthly|daily) (?:rate )?limit|exceeded your Copilot token usage/i,
    reset: dateReset(/reset on/i),
  },
  ...API_LIMITS,
];

export const CURSOR_LIMITS: readonly LimitPattern[] = [
  {
    kind: 'usage',
    pattern: /You[’']ve hit your (?:usage|free requests) limit/i,
    reset: dateReset(/monthly cycle ends on/i),
  },
  ...API_LIMITS,
];

export const QWEN_LIMITS: readonly LimitPattern[] = [
  { kind: 'usage', pattern: /Free allocated quota exceeded|Qwen OAuth (?:free tier )?quota exceeded/i },
  ...API_LIMITS,
];

/**
 * The first pattern that matches one of `texts`, with its reset time (later than `now`, else
 * none). Texts are checked in order: the agent's reported error first, then its stderr.
 */
export function detectLimit(
  patterns: readonly LimitPattern[],
  texts: readonly (string | undefined)[],
  now: number,
): UsageLimit | undefined {
  for (const text of texts) {
    if (!text) continue;
    for (const limit of patterns) {
      const match = limit.pattern.exec(text);
      if (!match) continue;
      const resetAt = limit.reset?.(text, now);
      const line = text.split('\n').find((l) => limit.pattern.test(l)) ?? match[0];
      return {
        kind: limit.kind,
        message: line.trim().slice(0, 300),
        ...(resetAt !== undefined && Number.isFinite(resetAt) && resetAt > now ? { resetAt } : {}),
      };
    }
  }
  return undefined;
}
