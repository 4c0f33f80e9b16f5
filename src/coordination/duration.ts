/**
 * Durations as people write them in settings (seed 001): `1 hour`, `3 hours`, `30m`, `90 s`,
 * `2d`, `1 week`, or ISO 8601 (`PT1H`, `PT30M`, `P2D`, `P1DT12H`).
 */
import { z } from 'zod';

const UNIT_MS: Record<string, number> = {
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

/** Every spelling of a unit, by its one-letter name. */
const UNITS: Record<string, string> = Object.fromEntries(
  (
    [
      ['s', ['s', 'sec', 'secs', 'second', 'seconds']],
      ['m', ['m', 'min', 'mins', 'minute', 'minutes']],
      ['h', ['h', 'hr', 'hrs', 'hour', 'hours']],
      ['d', ['d', 'day', 'days']],
      ['w', ['w', 'week', 'weeks']],
    ] as const
  ).flatMap(([unit, names]) => names.map((name) => [name, unit])),
);

const ISO = /^P(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$/i;
const HUMAN = /^(\d+(?:\.\d+)?)\s*([a-z]+)$/i;

/** Milliseconds, or undefined when `text` is not a duration this reads. */
export function parseDuration(text: string): number | undefined {
  const trimmed = text.trim();
  const iso = ISO.exec(trimmed);
  if (iso && trimmed.length > 1 && !/T$/i.test(trimmed)) {
    const [w, d, h, m, s] = iso.slice(1).map((v) => Number(v ?? 0)) as [
      number,
      number,
      number,
      number,
      number,
    ];
    const ms = w * UNIT_MS.w! + d * UNIT_MS.d! + h * UNIT_MS.h! + m * UNIT_MS.m! + s * UNIT_MS.s!;
    return ms > 0 ? ms : undefined;
  }
  // `1 hour 30 minutes`, `1h30m`: parts in a row.
  const parts = trimmed.toLowerCase().match(/\d+(?:\.\d+)?\s*[a-z]+/g);
  if (!parts || parts.join('').replace(/\s/g, '') !== trimmed.toLowerCase().replace(/\s/g, ''))
    return undefined;
  let total = 0;
  for (const part of parts) {
    const match = HUMAN.exec(part);
    const unit = match ? UNITS[match[2]!] : undefined;
    if (!match || !unit) return undefined;
    total += Number(match[1]) * UNIT_MS[unit]!;
  }
  return total > 0 ? Math.round(total) : undefined;
}

/** A settings value holding a duration: the text is kept as written, checked here. */
export function durationSetting(min: { ms: number; text: string }) {
  return z.string().superRefine((text, ctx) => {
    const ms = parseDuration(text);
    if (ms === undefined) {
      ctx.addIssue({
        code: 'custom',
        message: `'${text}' is not a duration: write e.g. "1 hour", "3 hours", "30m", "2d" or ISO 8601 "PT1H"`,
      });
    } else if (ms < min.ms) {
      ctx.addIssue({ code: 'custom', message: `'${text}' is shorter than the minimum of ${min.text}` });
    }
  });
}

/** Shorter leases would spend their life renewing. */
export const MIN_LEASE_TTL = { ms: 10_000, text: '10 seconds' };

export const RUNNER_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
