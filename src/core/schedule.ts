/**
 * The pure scheduling math of schedules: validating five-field expressions and timezones,
 * reading start/end dates, enumerating fire times, picking the occurrence that is due, and deciding
 * what to do with one that fired while curupira was not looking. No I/O; time is always passed in.
 *
 * Expressions are matched against wall-clock time in the automation's timezone by a small evaluator
 * of our own rather than croner: croner 10 accepts non-standard syntax we must reject (seconds,
 * `L`, `W`, `#`, `?`, nicknames), its `previousRuns` throws on some valid patterns (`0 0 29 2 *`),
 * and its daylight-saving rules are not the ones below. Day matching follows croniter (the
 * reference): when both day-of-month and day-of-week are restricted, either may match; a field
 * counts as unrestricted only when it covers every value (`*`, `1-31`, `0-6`, `*\/1`...).
 *
 * Daylight-saving time. A schedule names wall-clock times; each is mapped to an instant:
 * - A wall time that exists once fires at that instant.
 * - Spring forward (a wall time that does not exist, e.g. 02:30 on 2026-03-08 in New York): it fires
 *   at the first instant after the gap (03:00 local), as Vixie cron does. Several skipped wall times
 *   (every 5 minutes, or 02:00 and 03:00 of an hourly job) collapse into that single fire, so nothing
 *   fires twice at one instant and only the hour that does not exist is lost.
 * - Fall back (a wall time that happens twice, e.g. 01:30 on 2026-11-01 in New York): it fires at its
 *   first occurrence only, so a daily job runs exactly once that day. Exception: a schedule whose hour
 *   field covers all 24 hours (hourly, every N minutes) also fires at the second occurrences, so it
 *   keeps its rhythm through the repeated hour instead of pausing for an hour.
 * The mapping assumes offset changes of at most 3 hours and no two changes within two days of each
 * other, which holds for every zone in use today.
 */

import { ConfigError, StateError } from './errors.js';

export const INVALID_SCHEDULE_MESSAGE = 'schedule must be a valid five-field cron expression';

/** A fire noticed more than this long after its time is a missed run (seed 004: 180 seconds). */
export const MISSED_THRESHOLD_MS = 180_000;

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
/** The largest offset change we allow for (Antarctica/Troll moves by 2 hours). */
const MAX_OFFSET_CHANGE_MS = 3 * HOUR_MS;
/** No valid schedule goes longer than this between fires (29 February: at most 8 years). */
const MAX_SEARCH_DAYS = 366 * 9;

// ---------------------------------------------------------------------------------------------
// Expressions

interface FieldSpec {
  label: string;
  min: number;
  max: number;
  names?: Readonly<Record<string, number>>;
}

const MONTH_NAMES: Readonly<Record<string, number>> = {
  jan: 1,
  feb: 2,
  mar: 3,
  apr: 4,
  may: 5,
  jun: 6,
  jul: 7,
  aug: 8,
  sep: 9,
  oct: 10,
  nov: 11,
  dec: 12,
};

const WEEKDAY_NAMES: Readonly<Record<string, number>> = {
  sun: 0,
  mon: 1,
  tue: 2,
  wed: 3,
  thu: 4,
  fri: 5,
  sat: 6,
};

const FIELD_SPECS: readonly FieldSpec[] = [
  { label: 'minute', min: 0, max: 59 },
  { label: 'hour', min: 0, max: 23 },
  { label: 'day of month', min: 1, max: 31 },
  { label: 'month', min: 1, max: 12, names: MONTH_NAMES },
  { label: 'day of week', min: 0, max: 7, names: WEEKDAY_NAMES },
];

const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31] as const;

/** A parsed expression: which values each field allows (indexed by value). */
interface CompiledSchedule {
  minutes: readonly boolean[];
  hours: readonly boolean[];
  daysOfMonth: readonly boolean[];
  months: readonly boolean[];
  /** 0 = Sunday; 7 is folded into 0. */
  daysOfWeek: readonly boolean[];
  domRestricted: boolean;
  dowRestricted: boolean;
  /** The hour field covers all 24 hours: the job also fires in a repeated (fall-back) hour. */
  everyHour: boolean;
}

const compiledCache = new Map<string, CompiledSchedule | undefined>();

function parseFieldValue(token: string, spec: FieldSpec): number | undefined {
  if (/^\d{1,2}$/.test(token)) return Number(token);
  const named = spec.names?.[token.toLowerCase()];
  return named;
}

/** Expands one field into a boolean per value, or undefined when the field is not standard syntax. */
function parseField(text: string, spec: FieldSpec, isWeekday: boolean): boolean[] | undefined {
  const allowed = new Array<boolean>(spec.max + 1).fill(false);
  for (const item of text.split(',')) {
    const match = /^(\*|[0-9a-z]+(?:-[0-9a-z]+)?)(?:\/(\d+))?$/i.exec(item);
    if (!match) return undefined;
    const base = match[1]!;
    const step = match[2] === undefined ? 1 : Number(match[2]);
    if (!Number.isInteger(step) || step < 1) return undefined;
    let low: number;
    let high: number;
    if (base === '*') {
      low = spec.min;
      high = spec.max;
    } else {
      const [first, second] = base.split('-');
      const from = parseFieldValue(first!, spec);
      if (from === undefined) return undefined;
      low = from;
      if (second === undefined) {
        // `5/15` means `5-<max>/15`, as croniter reads it; a plain value stays a single value.
        high = match[2] === undefined ? from : spec.max;
      } else {
        const to = parseFieldValue(second, spec);
        if (to === undefined) return undefined;
        // `FRI-SUN`: Sunday closes a weekday range as 7.
        high = isWeekday && to === 0 ? 7 : to;
      }
    }
    if (low < spec.min || high > spec.max || low > high) return undefined;
    for (let value = low; value <= high; value += step) allowed[value] = true;
  }
  return allowed;
}

function coversAll(values: readonly boolean[], min: number, max: number): boolean {
  for (let value = min; value <= max; value += 1) if (!values[value]) return false;
  return true;
}

function compile(expr: string): CompiledSchedule | undefined {
  if (compiledCache.has(expr)) return compiledCache.get(expr);
  const compiled = compileUncached(expr);
  if (compiledCache.size > 1000) compiledCache.clear();
  compiledCache.set(expr, compiled);
  return compiled;
}

function compileUncached(expr: string): CompiledSchedule | undefined {
  const fields = expr.trim().split(/\s+/);
  if (fields.length !== 5) return undefined;
  const parsed: boolean[][] = [];
  for (let index = 0; index < 5; index += 1) {
    const values = parseField(fields[index]!, FIELD_SPECS[index]!, index === 4);
    if (!values) return undefined;
    parsed.push(values);
  }
  const [minutes, hours, daysOfMonth, months, weekdays] = parsed as [
    boolean[],
    boolean[],
    boolean[],
    boolean[],
    boolean[],
  ];
  const daysOfWeek = weekdays.slice(0, 7);
  if (weekdays[7]) daysOfWeek[0] = true;
  const domRestricted = !coversAll(daysOfMonth, 1, 31);
  const dowRestricted = !coversAll(daysOfWeek, 0, 6);
  const compiled: CompiledSchedule = {
    minutes,
    hours,
    daysOfMonth,
    months,
    daysOfWeek,
    domRestricted,
    dowRestricted,
    everyHour: coversAll(hours, 0, 23),
  };
  // `0 0 30 2 *` is well-formed but never fires: reject it rather than search forever.
  if (domRestricted && !dowRestricted && !canEverMatchDay(compiled)) return undefined;
  return compiled;
}

function canEverMatchDay(schedule: CompiledSchedule): boolean {
  for (let month = 1; month <= 12; month += 1) {
    if (!schedule.months[month]) continue;
    for (let day = 1; day <= DAYS_IN_MONTH[month - 1]!; day += 1) if (schedule.daysOfMonth[day]) return true;
  }
  return false;
}

/**
 * `undefined` when `expr` is a standard five-field cron expression (numbers, ranges, steps, lists,
 * `*`, three-letter month and weekday names, weekday 7 = Sunday) that can fire at least once; else
 * the message to show. Rejected on purpose: seconds or year fields, `@daily`-style nicknames (the
 * reference requires exactly five fields), and the `L`, `W`, `#`, `?` extensions.
 */
export function validateCronExpression(expr: string): string | undefined {
  return compile(expr) ? undefined : INVALID_SCHEDULE_MESSAGE;
}

/** True for an IANA timezone name Node knows (`Europe/Rome`, `UTC`); false for offsets like `+02:00`. */
export function isValidTimezone(timezone: string): boolean {
  // The default needs no check: building a formatter maps about 4.5 MiB of ICU's time-zone and
  // locale data into the process, which every idle daemon would hold for one settings check.
  if (timezone === 'UTC') return true;
  if (timezone.trim() === '' || /^[+\-\u2212]?\d/.test(timezone)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
    return true;
  } catch {
    return false;
  }
}

/** `undefined` when valid, else `unknown timezone: <tz>`. */
export function validateTimezone(timezone: string): string | undefined {
  return isValidTimezone(timezone) ? undefined : `unknown timezone: ${timezone}`;
}

function requireSchedule(expr: string, timezone: string): CompiledSchedule {
  const problem = validateTimezone(timezone);
  if (problem) throw new ConfigError([{ path: '', message: problem }]);
  const compiled = compile(expr);
  if (!compiled) throw new ConfigError([{ path: '', message: `${INVALID_SCHEDULE_MESSAGE}: '${expr}'` }]);
  return compiled;
}

// ---------------------------------------------------------------------------------------------
// Wall-clock time: a wall time is written as milliseconds of a "fake UTC" Date, so that
// `Date.UTC(y, m, d, h, min)` and `getUTC*()` do the calendar arithmetic.

function dayMatches(schedule: CompiledSchedule, dayStart: number): boolean {
  const date = new Date(dayStart);
  if (!schedule.months[date.getUTCMonth() + 1]) return false;
  const dom = schedule.daysOfMonth[date.getUTCDate()] === true;
  const dow = schedule.daysOfWeek[date.getUTCDay()] === true;
  if (schedule.domRestricted && schedule.dowRestricted) return dom || dow;
  if (schedule.domRestricted) return dom;
  if (schedule.dowRestricted) return dow;
  return true;
}

/** First matching minute of a day at or after `fromMinute` (minutes since midnight). */
function firstMinuteFrom(schedule: CompiledSchedule, fromMinute: number): number | undefined {
  for (let hour = Math.floor(fromMinute / 60); hour < 24; hour += 1) {
    if (!schedule.hours[hour]) continue;
    const startMinute = hour === Math.floor(fromMinute / 60) ? fromMinute % 60 : 0;
    for (let minute = startMinute; minute < 60; minute += 1)
      if (schedule.minutes[minute]) return hour * 60 + minute;
  }
  return undefined;
}

/** Last matching minute of a day at or before `toMinute`. */
function lastMinuteUpTo(schedule: CompiledSchedule, toMinute: number): number | undefined {
  for (let hour = Math.floor(toMinute / 60); hour >= 0; hour -= 1) {
    if (!schedule.hours[hour]) continue;
    const endMinute = hour === Math.floor(toMinute / 60) ? toMinute % 60 : 59;
    for (let minute = endMinute; minute >= 0; minute -= 1)
      if (schedule.minutes[minute]) return hour * 60 + minute;
  }
  return undefined;
}

function nextWallAtOrAfter(schedule: CompiledSchedule, wall: number): number | undefined {
  const start = Math.ceil(wall / MINUTE_MS) * MINUTE_MS;
  const firstDay = Math.floor(start / DAY_MS) * DAY_MS;
  for (let index = 0; index < MAX_SEARCH_DAYS; index += 1) {
    const dayStart = firstDay + index * DAY_MS;
    if (!dayMatches(schedule, dayStart)) continue;
    const minute = firstMinuteFrom(schedule, index === 0 ? (start - firstDay) / MINUTE_MS : 0);
    if (minute !== undefined) return dayStart + minute * MINUTE_MS;
  }
  return undefined;
}

function previousWallAtOrBefore(schedule: CompiledSchedule, wall: number): number | undefined {
  const end = Math.floor(wall / MINUTE_MS) * MINUTE_MS;
  const lastDay = Math.floor(end / DAY_MS) * DAY_MS;
  for (let index = 0; index < MAX_SEARCH_DAYS; index += 1) {
    const dayStart = lastDay - index * DAY_MS;
    if (!dayMatches(schedule, dayStart)) continue;
    const minute = lastMinuteUpTo(schedule, index === 0 ? (end - lastDay) / MINUTE_MS : 24 * 60 - 1);
    if (minute !== undefined) return dayStart + minute * MINUTE_MS;
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Timezones

const formatters = new Map<string, Intl.DateTimeFormat>();
const sampledOffsets = new Map<string, number>();

function formatterFor(timezone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timezone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone,
      hourCycle: 'h23',
      era: 'short',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timezone, formatter);
  }
  return formatter;
}

/** The wall-clock reading of `instant` in `timezone`, as fake-UTC milliseconds. */
function wallOf(instant: number, timezone: string): number {
  const whole = Math.floor(instant / 1000) * 1000;
  const fields: Record<string, number> = {};
  let bc = false;
  for (const part of formatterFor(timezone).formatToParts(whole)) {
    if (part.type === 'era') bc = part.value.startsWith('B');
    else if (part.type !== 'literal') fields[part.type] = Number(part.value);
  }
  const year = bc ? 1 - fields.year! : fields.year!;
  const date = new Date(0);
  date.setUTCFullYear(year, fields.month! - 1, fields.day!);
  date.setUTCHours(fields.hour!, fields.minute!, fields.second!, 0);
  return date.getTime() + (instant - whole);
}

function offsetAt(instant: number, timezone: string): number {
  return wallOf(instant, timezone) - instant;
}

/** Offset at the hour-aligned instant `hourIndex * 1h`, memoised: neighbouring wall times share it. */
function sampledOffset(hourIndex: number, timezone: string): number {
  const key = `${timezone}\u0000${hourIndex}`;
  const known = sampledOffsets.get(key);
  if (known !== undefined) return known;
  const offset = offsetAt(hourIndex * HOUR_MS, timezone);
  if (sampledOffsets.size > 50_000) sampledOffsets.clear();
  sampledOffsets.set(key, offset);
  return offset;
}

/** Where a wall time lands: once, twice (fall back), or nowhere (spring forward). */
type WallPlacement =
  | { kind: 'single'; at: number }
  | { kind: 'repeated'; first: number; second: number }
  | { kind: 'skipped'; gapEnd: number };

function placeWall(wall: number, timezone: string): WallPlacement {
  const before = sampledOffset(Math.floor((wall - DAY_MS) / HOUR_MS), timezone);
  const after = sampledOffset(Math.ceil((wall + DAY_MS) / HOUR_MS), timezone);
  if (before === after) return { kind: 'single', at: wall - before };
  const candidates = [...new Set([wall - before, wall - after])]
    .filter((instant) => offsetAt(instant, timezone) === wall - instant)
    .sort((a, b) => a - b);
  if (candidates.length === 2) return { kind: 'repeated', first: candidates[0]!, second: candidates[1]! };
  if (candidates.length === 1) return { kind: 'single', at: candidates[0]! };
  // Skipped: the clock jumped from `before` to `after` somewhere in [wall - after, wall - before].
  let low = Math.min(wall - before, wall - after);
  let high = Math.max(wall - before, wall - after);
  while (high - low > 1000) {
    const middle = low + Math.floor((high - low) / 2000) * 1000;
    if (offsetAt(middle, timezone) === after) high = middle;
    else low = middle;
  }
  return { kind: 'skipped', gapEnd: high };
}

function earliestInstant(placement: WallPlacement): number {
  if (placement.kind === 'single') return placement.at;
  if (placement.kind === 'repeated') return placement.first;
  return placement.gapEnd;
}

/** The instants at which a matching wall time fires (see the DST rules at the top of this file). */
function fireInstants(placement: WallPlacement, schedule: CompiledSchedule): number[] {
  if (placement.kind === 'repeated') {
    return schedule.everyHour ? [placement.first, placement.second] : [placement.first];
  }
  return [earliestInstant(placement)];
}

/** A wall time as an instant: its first occurrence, or the end of the gap when it does not exist. */
function wallToInstant(wall: number, timezone: string): number {
  return earliestInstant(placeWall(wall, timezone));
}

// ---------------------------------------------------------------------------------------------
// Fire times

function nextInstants(schedule: CompiledSchedule, timezone: string, after: number, count: number): number[] {
  const found: number[] = [];
  if (count <= 0) return found;
  // Start a little earlier: a wall time before `after`'s may still have a second occurrence after it.
  let wall = nextWallAtOrAfter(schedule, wallOf(after, timezone) - MAX_OFFSET_CHANGE_MS);
  while (wall !== undefined) {
    const placement = placeWall(wall, timezone);
    // Fire instants never decrease with the wall time's earliest instant: stop once past the last wanted.
    if (found.length >= count && earliestInstant(placement) >= found[count - 1]!) break;
    for (const instant of fireInstants(placement, schedule)) {
      if (instant > after && !found.includes(instant)) found.push(instant);
    }
    found.sort((a, b) => a - b);
    wall = nextWallAtOrAfter(schedule, wall + MINUTE_MS);
  }
  return found.slice(0, count);
}

function previousInstant(
  schedule: CompiledSchedule,
  timezone: string,
  atOrBefore: number,
): number | undefined {
  // A second occurrence lies at most one offset change after the first.
  const reach = schedule.everyHour ? MAX_OFFSET_CHANGE_MS : 0;
  let best: number | undefined;
  let wall = previousWallAtOrBefore(schedule, wallOf(atOrBefore, timezone) + MAX_OFFSET_CHANGE_MS);
  while (wall !== undefined) {
    const placement = placeWall(wall, timezone);
    if (best !== undefined && earliestInstant(placement) + reach <= best) break;
    for (const instant of fireInstants(placement, schedule)) {
      if (instant <= atOrBefore && (best === undefined || instant > best)) best = instant;
    }
    wall = previousWallAtOrBefore(schedule, wall - MINUTE_MS);
  }
  return best;
}

/** The next `count` fire times strictly after `after` (for `validate --explain` and the board). */
/** The instant the calendar day holding `instant` began in `timezone` (local midnight). */
export function startOfDay(instant: Date, timezone: string): Date {
  const wall = wallOf(instant.getTime(), timezone);
  const midnight = Math.floor(wall / DAY_MS) * DAY_MS;
  return new Date(wallToInstant(midnight, timezone));
}

export function nextFireTimes(expr: string, timezone: string, after: Date, count: number): Date[] {
  const schedule = requireSchedule(expr, timezone);
  return nextInstants(schedule, timezone, after.getTime(), count).map((instant) => new Date(instant));
}

/** The latest fire time at or before `atOrBefore`, or undefined when there is none. */
export function previousFireTime(expr: string, timezone: string, atOrBefore: Date): Date | undefined {
  const schedule = requireSchedule(expr, timezone);
  const instant = previousInstant(schedule, timezone, atOrBefore.getTime());
  return instant === undefined ? undefined : new Date(instant);
}

// ---------------------------------------------------------------------------------------------
// Start and end dates

/** What smol-toml returns for TOML dates and times: a Date that remembers how it was written. */
interface TomlDateLike extends Date {
  isDate(): boolean;
  isTime(): boolean;
  isLocal(): boolean;
}

function isTomlDate(value: Date): value is TomlDateLike {
  const candidate = value as Partial<TomlDateLike>;
  return (
    typeof candidate.isDate === 'function' &&
    typeof candidate.isTime === 'function' &&
    typeof candidate.isLocal === 'function'
  );
}

/** Which end of a date-only value: a start date means its first instant, an end date its last. */
export type DateEdge = 'start' | 'end';

const DATE_FORMAT_HINT = 'use YYYY-MM-DD, YYYY-MM-DDTHH:MM[:SS], or a datetime with an offset (…Z, …+02:00)';

function dateError(value: string, reason: string): ConfigError {
  return new ConfigError([{ path: '', message: `invalid date '${value}': ${reason}` }]);
}

/**
 * Reads a `start_date` / `end_date`. Accepts a TOML date (smol-toml `TomlDate`), a plain Date (an
 * absolute instant), or a string: `YYYY-MM-DD`, `YYYY-MM-DDTHH:MM[:SS[.fff]]` (a space may replace
 * the `T`), either read as wall-clock time in `timezone`, or the same with `Z` / `±HH:MM` (absolute).
 * A date alone means the start of that day for `edge = 'start'` and the last millisecond of that day
 * for `edge = 'end'` (end dates are inclusive). A naive time in a spring-forward gap means the end of
 * the gap; one that happens twice means its first occurrence. Throws a ConfigError otherwise.
 */
export function parseScheduleDate(value: string | Date, timezone: string, edge: DateEdge = 'start'): Date {
  const problem = validateTimezone(timezone);
  if (problem) throw new ConfigError([{ path: '', message: problem }]);
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) throw dateError(String(value), 'not a valid date');
    if (!isTomlDate(value)) return new Date(value.getTime());
    if (value.isTime()) {
      throw dateError(value.toISOString(), 'a time of day without a date cannot start or end a schedule');
    }
    if (!value.isLocal()) return new Date(value.getTime());
    return parseDateText(value.toISOString(), timezone, edge);
  }
  if (typeof value !== 'string') throw dateError(String(value), DATE_FORMAT_HINT);
  return parseDateText(value, timezone, edge);
}

function parseDateText(text: string, timezone: string, edge: DateEdge): Date {
  const match =
    /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|z|[+-]\d{2}:\d{2})?)?$/.exec(
      text.trim(),
    );
  if (!match) throw dateError(text, DATE_FORMAT_HINT);
  const [, yearText, monthText, dayText, hourText, minuteText, secondText, fraction, offsetText] = match;
  const year = Number(yearText);
  const month = Number(monthText);
  const day = Number(dayText);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) {
    throw dateError(text, 'no such day');
  }
  if (hourText === undefined) {
    const midnight = Date.UTC(year, month - 1, day);
    if (edge === 'start') return new Date(wallToInstant(midnight, timezone));
    return new Date(wallToInstant(midnight + DAY_MS, timezone) - 1);
  }
  const hour = Number(hourText);
  const minute = Number(minuteText);
  const second = secondText === undefined ? 0 : Number(secondText);
  if (hour > 23 || minute > 59 || second > 59) throw dateError(text, 'no such time of day');
  const millisecond = fraction === undefined ? 0 : Number(fraction.slice(0, 3).padEnd(3, '0'));
  const wall = Date.UTC(year, month - 1, day, hour, minute, second, millisecond);
  if (offsetText === undefined) return new Date(wallToInstant(wall, timezone));
  if (offsetText === 'Z' || offsetText === 'z') return new Date(wall);
  const sign = offsetText.startsWith('-') ? -1 : 1;
  const offsetHours = Number(offsetText.slice(1, 3));
  const offsetMinutes = Number(offsetText.slice(4, 6));
  if (offsetHours > 23 || offsetMinutes > 59) throw dateError(text, 'no such offset');
  return new Date(wall - sign * (offsetHours * HOUR_MS + offsetMinutes * MINUTE_MS));
}

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

// ---------------------------------------------------------------------------------------------
// The due occurrence

export interface DueOccurrenceInput {
  expr: string;
  timezone: string;
  /** Parsed `start_date` (edge 'start'); when absent the window starts at `state.createdAt`. */
  startDate?: Date | undefined;
  /** Parsed `end_date` (edge 'end'), inclusive. */
  endDate?: Date | undefined;
  /** The schedule's marks, as the store keeps them (ISO instants). */
  state: { createdAt: string; lastScheduledFor: string | null; pendingScheduledFor: string | null };
  now: Date;
}

function storedInstant(text: string, field: string): number {
  const instant = Date.parse(text);
  if (Number.isNaN(instant)) throw new StateError(`cron state has an unreadable ${field}: '${text}'`);
  return instant;
}

/**
 * The occurrence to run now, or undefined. A claimed but unfinished occurrence (`pendingScheduledFor`)
 * comes first. Otherwise: the window starts at `startDate` (else when the automation was first seen)
 * and ends at `min(now, endDate)`; the latest fire in that window is due unless it was already
 * scheduled. Older overdue fires are coalesced into it: after a long sleep only the latest one runs.
 */
export function dueOccurrence(input: DueOccurrenceInput): Date | undefined {
  const { state } = input;
  if (state.pendingScheduledFor)
    return new Date(storedInstant(state.pendingScheduledFor, 'pendingScheduledFor'));
  const start = input.startDate ? input.startDate.getTime() : storedInstant(state.createdAt, 'createdAt');
  const now = input.now.getTime();
  const ceiling = input.endDate ? Math.min(now, input.endDate.getTime()) : now;
  if (ceiling < start) return undefined;
  const latest = previousInstant(requireSchedule(input.expr, input.timezone), input.timezone, ceiling);
  if (latest === undefined || latest < start) return undefined;
  if (state.lastScheduledFor && latest <= storedInstant(state.lastScheduledFor, 'lastScheduledFor')) {
    return undefined;
  }
  return new Date(latest);
}

// ---------------------------------------------------------------------------------------------
// Missed fires

export type Lateness = 'on_time' | 'missed';

/** A fire noticed more than `thresholdMs` after its time (machine asleep, curupira stopped) is missed. */
export function classifyLateness(occurrence: Date, now: Date, thresholdMs = MISSED_THRESHOLD_MS): Lateness {
  return now.getTime() - occurrence.getTime() > thresholdMs ? 'missed' : 'on_time';
}

/** `missed = "skip"` (default) or `"run"`. */
export type MissedPolicy = 'skip' | 'run';

export interface OccurrenceDecision {
  /** `run`: start the agent. `skip`: record a run that did not start. */
  action: 'run' | 'skip';
  /** True when the fire was missed: the run record must say so, whichever the action. */
  missed: boolean;
  /** How late the occurrence was noticed, in milliseconds (never negative). */
  lateMs: number;
}

/**
 * What to do with a due occurrence. On time: run it. Missed: `skip` records it as missed and skipped,
 * `run` runs it once now; either way the caller writes a run record marked missed.
 */
export function decideMissed(
  policy: MissedPolicy,
  occurrence: Date,
  now: Date,
  thresholdMs = MISSED_THRESHOLD_MS,
): OccurrenceDecision {
  const lateMs = Math.max(0, now.getTime() - occurrence.getTime());
  if (classifyLateness(occurrence, now, thresholdMs) === 'on_time')
    return { action: 'run', missed: false, lateMs };
  return { action: policy === 'run' ? 'run' : 'skip', missed: true, lateMs };
}
