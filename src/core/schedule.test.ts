import { parse } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { ConfigError, StateError } from './errors.js';
import {
  classifyLateness,
  type DueOccurrenceInput,
  decideMissed,
  dueOccurrence,
  INVALID_SCHEDULE_MESSAGE,
  isValidTimezone,
  nextFireTimes,
  parseScheduleDate,
  previousFireTime,
  validateCronExpression,
  validateTimezone,
} from './schedule.js';

const NY = 'America/New_York';
const ROME = 'Europe/Rome';

function next(expr: string, timezone: string, after: string, count: number): string[] {
  return nextFireTimes(expr, timezone, new Date(after), count).map((date) => date.toISOString());
}

function previous(expr: string, timezone: string, atOrBefore: string): string | undefined {
  return previousFireTime(expr, timezone, new Date(atOrBefore))?.toISOString();
}

function due(
  input: Omit<DueOccurrenceInput, 'state' | 'now'> & {
    now: string;
    createdAt?: string;
    lastScheduledFor?: string;
    pendingScheduledFor?: string;
  },
): string | undefined {
  return dueOccurrence({
    ...input,
    now: new Date(input.now),
    state: {
      createdAt: input.createdAt ?? '2026-01-01T00:00:00.000Z',
      lastScheduledFor: input.lastScheduledFor ?? null,
      pendingScheduledFor: input.pendingScheduledFor ?? null,
    },
  })?.toISOString();
}

/** Polls like the engine does, claiming each due occurrence; returns every claimed occurrence. */
function pollAndClaim(expr: string, timezone: string, from: string, to: string, stepMs = 30_000): string[] {
  const claimed: string[] = [];
  let lastScheduledFor: string | null = null;
  for (let now = Date.parse(from); now <= Date.parse(to); now += stepMs) {
    const occurrence = dueOccurrence({
      expr,
      timezone,
      state: { createdAt: from, lastScheduledFor, pendingScheduledFor: null },
      now: new Date(now),
    });
    if (!occurrence) continue;
    lastScheduledFor = occurrence.toISOString();
    claimed.push(lastScheduledFor);
  }
  return claimed;
}

describe('validateCronExpression', () => {
  it.each([
    '*/5 * * * *',
    '0 9 * * MON-FRI',
    '30 2 1,15 jan-mar *',
    '0 0 * * 7',
    '0 22 * * fri-sun',
    '5/15 * * * *',
    '0 0-23/6 * * *',
    '  0   9 * * *  ',
    '0 0 29 2 *',
  ])('accepts %j', (expr) => {
    expect(validateCronExpression(expr)).toBeUndefined();
  });

  it.each([
    ['six fields (seconds)', '0 */5 * * * *'],
    ['seven fields', '0 0 9 * * * 2026'],
    ['four fields', '0 9 * *'],
    ['empty', ''],
    ['a nickname', '@daily'],
    ['words', 'every day at nine'],
    ['minute 60', '60 * * * *'],
    ['hour 24', '0 24 * * *'],
    ['day of month 0', '0 0 0 * *'],
    ['day of month 32', '0 0 32 * *'],
    ['month 13', '0 0 * 13 *'],
    ['weekday 8', '0 0 * * 8'],
    ['step 0', '*/0 * * * *'],
    ['a reversed range', '30-10 * * * *'],
    ['a negative number', '-5 * * * *'],
    ['an empty list item', '1,,2 * * * *'],
    ['a full weekday name', '0 9 * * MONDAY'],
    ['a weekday name in the month field', '0 9 * MON *'],
    ['the L extension', '0 0 L * *'],
    ['the # extension', '0 0 * * 5#2'],
    ['the ? extension', '0 0 ? * *'],
    ['a date that never comes', '0 0 30 2 *'],
  ])('rejects %s', (_label, expr) => {
    expect(validateCronExpression(expr)).toBe(INVALID_SCHEDULE_MESSAGE);
  });

  it('uses the message users see in the reference', () => {
    expect(validateCronExpression('0 */5 * * * *')).toBe(
      'schedule must be a valid five-field cron expression',
    );
  });

  it('refuses to compute fire times for an invalid expression', () => {
    expect(() => nextFireTimes('61 * * * *', 'UTC', new Date('2026-01-01T00:00:00Z'), 3)).toThrow(
      ConfigError,
    );
  });
});

describe('expression semantics', () => {
  it('reads weekday names and ranges (Mon-Fri at 09:00)', () => {
    // 2026-03-06 is a Friday.
    expect(next('0 9 * * mon-fri', 'UTC', '2026-03-06T10:00:00Z', 2)).toEqual([
      '2026-03-09T09:00:00.000Z',
      '2026-03-10T09:00:00.000Z',
    ]);
  });

  it('treats 7 and SUN as Sunday, also at the end of a range', () => {
    expect(next('0 9 * * 7', 'UTC', '2026-03-01T10:00:00Z', 1)).toEqual(['2026-03-08T09:00:00.000Z']);
    expect(next('0 9 * * fri-sun', 'UTC', '2026-03-09T00:00:00Z', 3)).toEqual([
      '2026-03-13T09:00:00.000Z',
      '2026-03-14T09:00:00.000Z',
      '2026-03-15T09:00:00.000Z',
    ]);
  });

  it('fires on day-of-month OR day-of-week when both are restricted (croniter)', () => {
    // The 1st of March 2026 is a Sunday; Mondays are the 2nd and 9th.
    expect(next('0 9 1 * mon', 'UTC', '2026-02-28T00:00:00Z', 3)).toEqual([
      '2026-03-01T09:00:00.000Z',
      '2026-03-02T09:00:00.000Z',
      '2026-03-09T09:00:00.000Z',
    ]);
  });

  it('reads `5/15` as every 15 minutes starting at 5', () => {
    expect(next('5/15 * * * *', 'UTC', '2026-03-01T10:00:00Z', 4)).toEqual([
      '2026-03-01T10:05:00.000Z',
      '2026-03-01T10:20:00.000Z',
      '2026-03-01T10:35:00.000Z',
      '2026-03-01T10:50:00.000Z',
    ]);
  });

  it('finds a 29 February several years away in both directions', () => {
    expect(next('0 0 29 2 *', 'UTC', '2026-06-01T00:00:00Z', 2)).toEqual([
      '2028-02-29T00:00:00.000Z',
      '2032-02-29T00:00:00.000Z',
    ]);
    expect(previous('0 0 29 2 *', 'UTC', '2026-06-01T00:00:00Z')).toBe('2024-02-29T00:00:00.000Z');
  });
});

describe('timezones', () => {
  it('accepts IANA names and UTC', () => {
    expect(isValidTimezone('Europe/Rome')).toBe(true);
    expect(isValidTimezone('UTC')).toBe(true);
    expect(validateTimezone(NY)).toBeUndefined();
  });

  it('checks the default UTC without building a formatter (ICU data an idle daemon would hold)', () => {
    const original = Intl.DateTimeFormat;
    const built: unknown[] = [];
    Intl.DateTimeFormat = new Proxy(original, {
      construct(target, args) {
        built.push(args[1]);
        return new target(...(args as ConstructorParameters<typeof original>));
      },
    });
    try {
      expect(isValidTimezone('UTC')).toBe(true);
      expect(built).toEqual([]);
      expect(isValidTimezone(ROME)).toBe(true);
      expect(built).toEqual([{ timeZone: ROME }]);
    } finally {
      Intl.DateTimeFormat = original;
    }
  });

  it.each(['Mars/Olympus', '', '+02:00', 'Europe/Nowhere'])('rejects %j', (timezone) => {
    expect(isValidTimezone(timezone)).toBe(false);
    expect(validateTimezone(timezone)).toBe(`unknown timezone: ${timezone}`);
  });

  it('refuses to compute fire times in an unknown timezone', () => {
    expect(() => nextFireTimes('0 9 * * *', 'Mars/Olympus', new Date('2026-01-01T00:00:00Z'), 1)).toThrow(
      'unknown timezone: Mars/Olympus',
    );
  });

  it('fires a 09:00 Rome schedule at 08:00Z in winter and 07:00Z in summer', () => {
    expect(next('0 9 * * *', ROME, '2026-01-10T00:00:00Z', 1)).toEqual(['2026-01-10T08:00:00.000Z']);
    expect(next('0 9 * * *', ROME, '2026-07-10T00:00:00Z', 1)).toEqual(['2026-07-10T07:00:00.000Z']);
  });

  it('gives the next three fire times strictly after the given instant', () => {
    expect(next('0 9 * * *', NY, '2026-01-10T14:00:00Z', 3)).toEqual([
      '2026-01-11T14:00:00.000Z',
      '2026-01-12T14:00:00.000Z',
      '2026-01-13T14:00:00.000Z',
    ]);
  });
});

describe('daylight saving: Europe/Rome', () => {
  // 2026-03-29: 02:00 CET jumps to 03:00 CEST at 01:00Z. 2026-10-25: 03:00 CEST falls back to 02:00 CET at 01:00Z.
  it('spring forward: a daily 02:30 job runs once, at 03:00 local, then at 02:30 again', () => {
    expect(next('30 2 * * *', ROME, '2026-03-28T12:00:00Z', 3)).toEqual([
      '2026-03-29T01:00:00.000Z',
      '2026-03-30T00:30:00.000Z',
      '2026-03-31T00:30:00.000Z',
    ]);
  });

  it('spring forward: an hourly job fires once at 03:00 and loses only the missing hour', () => {
    expect(next('0 * * * *', ROME, '2026-03-28T23:30:00Z', 3)).toEqual([
      '2026-03-29T00:00:00.000Z', // 01:00 CET
      '2026-03-29T01:00:00.000Z', // 03:00 CEST (02:00 does not exist)
      '2026-03-29T02:00:00.000Z', // 04:00 CEST
    ]);
  });

  it('spring forward: times inside the gap collapse into one fire', () => {
    expect(next('*/30 * * * *', ROME, '2026-03-29T00:20:00Z', 3)).toEqual([
      '2026-03-29T00:30:00.000Z', // 01:30 CET
      '2026-03-29T01:00:00.000Z', // 02:00, 02:30 and 03:00 local
      '2026-03-29T01:30:00.000Z', // 03:30 CEST
    ]);
  });

  it('fall back: a daily 02:30 job runs once, at the first 02:30', () => {
    expect(next('30 2 * * *', ROME, '2026-10-24T12:00:00Z', 2)).toEqual([
      '2026-10-25T00:30:00.000Z',
      '2026-10-26T01:30:00.000Z',
    ]);
  });

  it('fall back: an hourly job fires every real hour, the repeated 02:00 included', () => {
    expect(next('0 * * * *', ROME, '2026-10-24T22:30:00Z', 4)).toEqual([
      '2026-10-24T23:00:00.000Z', // 01:00 CEST
      '2026-10-25T00:00:00.000Z', // 02:00 CEST
      '2026-10-25T01:00:00.000Z', // 02:00 CET
      '2026-10-25T02:00:00.000Z', // 03:00 CET
    ]);
  });
});

describe('daylight saving: America/New_York', () => {
  // 2026-03-08: 02:00 EST jumps to 03:00 EDT at 07:00Z. 2026-11-01: 02:00 EDT falls back to 01:00 EST at 06:00Z.
  it('spring forward: a daily 02:30 job runs once, at 03:00 local', () => {
    expect(next('30 2 * * *', NY, '2026-03-07T12:00:00Z', 2)).toEqual([
      '2026-03-08T07:00:00.000Z',
      '2026-03-09T06:30:00.000Z',
    ]);
  });

  it('spring forward: an hourly job has no duplicate and loses only 02:00', () => {
    expect(next('0 * * * *', NY, '2026-03-08T05:30:00Z', 3)).toEqual([
      '2026-03-08T06:00:00.000Z', // 01:00 EST
      '2026-03-08T07:00:00.000Z', // 03:00 EDT
      '2026-03-08T08:00:00.000Z', // 04:00 EDT
    ]);
  });

  it('fall back: a daily 01:30 job runs once, at the first 01:30 (EDT)', () => {
    expect(next('30 1 * * *', NY, '2026-10-31T12:00:00Z', 2)).toEqual([
      '2026-11-01T05:30:00.000Z',
      '2026-11-02T06:30:00.000Z',
    ]);
  });

  it('fall back: an hourly job fires at both 01:00s and never twice at one instant', () => {
    expect(next('0 * * * *', NY, '2026-11-01T03:30:00Z', 4)).toEqual([
      '2026-11-01T04:00:00.000Z', // 00:00 EDT
      '2026-11-01T05:00:00.000Z', // 01:00 EDT
      '2026-11-01T06:00:00.000Z', // 01:00 EST
      '2026-11-01T07:00:00.000Z', // 02:00 EST
    ]);
  });

  it('fall back: a job at named hours fires each wall time once', () => {
    expect(next('0 0-3 * * *', NY, '2026-11-01T03:30:00Z', 4)).toEqual([
      '2026-11-01T04:00:00.000Z', // 00:00 EDT
      '2026-11-01T05:00:00.000Z', // 01:00 EDT only
      '2026-11-01T07:00:00.000Z', // 02:00 EST
      '2026-11-01T08:00:00.000Z', // 03:00 EST
    ]);
  });

  it('previousFireTime agrees with nextFireTimes across both transitions', () => {
    for (const [expr, from] of [
      ['0 * * * *', '2026-03-07T22:00:00Z'],
      ['*/20 * * * *', '2026-03-08T04:00:00Z'],
      ['30 2 * * *', '2026-03-06T00:00:00Z'],
      ['0 * * * *', '2026-10-31T22:00:00Z'],
      ['*/20 * * * *', '2026-11-01T03:00:00Z'],
      ['30 1 * * *', '2026-10-30T00:00:00Z'],
    ] as const) {
      const fires = nextFireTimes(expr, NY, new Date(from), 12);
      for (let index = 1; index < fires.length; index += 1) {
        const fire = fires[index]!;
        expect(previousFireTime(expr, NY, fire)).toEqual(fire);
        expect(previousFireTime(expr, NY, new Date(fire.getTime() - 1))).toEqual(fires[index - 1]);
      }
    }
  });

  it('polling through the fall-back night claims the daily job once and the hourly job every real hour', () => {
    const from = '2026-11-01T03:30:00.000Z';
    const to = '2026-11-01T09:00:00.000Z';
    expect(pollAndClaim('30 1 * * *', NY, from, to)).toEqual(['2026-11-01T05:30:00.000Z']);
    expect(pollAndClaim('0 * * * *', NY, from, to)).toEqual([
      '2026-11-01T04:00:00.000Z',
      '2026-11-01T05:00:00.000Z',
      '2026-11-01T06:00:00.000Z',
      '2026-11-01T07:00:00.000Z',
      '2026-11-01T08:00:00.000Z',
      '2026-11-01T09:00:00.000Z',
    ]);
  });

  it('polling through the spring-forward night claims the daily 02:30 job once', () => {
    expect(pollAndClaim('30 2 * * *', NY, '2026-03-08T04:00:00.000Z', '2026-03-08T12:00:00.000Z')).toEqual([
      '2026-03-08T07:00:00.000Z',
    ]);
  });
});

describe('parseScheduleDate', () => {
  it('reads a date as the start of that day in the timezone', () => {
    expect(parseScheduleDate('2026-03-01', ROME).toISOString()).toBe('2026-02-28T23:00:00.000Z');
    expect(parseScheduleDate('2026-07-01', ROME, 'start').toISOString()).toBe('2026-06-30T22:00:00.000Z');
  });

  it('reads an end date as the last millisecond of that day (inclusive)', () => {
    expect(parseScheduleDate('2026-03-01', ROME, 'end').toISOString()).toBe('2026-03-01T22:59:59.999Z');
    expect(parseScheduleDate('2026-03-29', ROME, 'end').toISOString()).toBe('2026-03-29T21:59:59.999Z');
  });

  it('reads a naive datetime as wall-clock time in the timezone', () => {
    expect(parseScheduleDate('2026-07-01T09:00', ROME).toISOString()).toBe('2026-07-01T07:00:00.000Z');
    expect(parseScheduleDate('2026-07-01 09:00:30', ROME).toISOString()).toBe('2026-07-01T07:00:30.000Z');
    expect(parseScheduleDate('2026-01-15T09:00:00', NY, 'end').toISOString()).toBe(
      '2026-01-15T14:00:00.000Z',
    );
  });

  it('reads datetimes with Z or an offset as absolute instants', () => {
    expect(parseScheduleDate('2026-07-01T09:00:00Z', ROME).toISOString()).toBe('2026-07-01T09:00:00.000Z');
    expect(parseScheduleDate('2026-07-01T09:00:00-05:00', ROME).toISOString()).toBe(
      '2026-07-01T14:00:00.000Z',
    );
  });

  it('maps a naive time in the spring gap to the end of the gap, a repeated one to its first occurrence', () => {
    expect(parseScheduleDate('2026-03-29T02:30', ROME).toISOString()).toBe('2026-03-29T01:00:00.000Z');
    expect(parseScheduleDate('2026-10-25T02:30', ROME).toISOString()).toBe('2026-10-25T00:30:00.000Z');
  });

  it('reads TOML dates as smol-toml returns them', () => {
    const toml = parse(
      'day = 2026-03-01\nlocal = 2026-03-01T09:00:00\noffset = 2026-03-01T09:00:00+01:00\nutc = 2026-03-01T09:00:00Z\n',
    ) as Record<string, Date>;
    expect(parseScheduleDate(toml.day!, NY).toISOString()).toBe('2026-03-01T05:00:00.000Z');
    expect(parseScheduleDate(toml.day!, NY, 'end').toISOString()).toBe('2026-03-02T04:59:59.999Z');
    expect(parseScheduleDate(toml.local!, NY).toISOString()).toBe('2026-03-01T14:00:00.000Z');
    expect(parseScheduleDate(toml.offset!, NY).toISOString()).toBe('2026-03-01T08:00:00.000Z');
    expect(parseScheduleDate(toml.utc!, NY).toISOString()).toBe('2026-03-01T09:00:00.000Z');
  });

  it('takes a plain Date as an instant', () => {
    expect(parseScheduleDate(new Date('2026-03-01T09:00:00Z'), ROME).toISOString()).toBe(
      '2026-03-01T09:00:00.000Z',
    );
  });

  it.each([
    ['03/01/2026', 'use YYYY-MM-DD'],
    ['tomorrow', 'use YYYY-MM-DD'],
    ['2026-02-30', 'no such day'],
    ['2026-13-01', 'no such day'],
    ['2026-03-01T25:00', 'no such time of day'],
    ['2026-03-01T09:00+25:00', 'no such offset'],
  ])('rejects %j with a message naming the value', (value, reason) => {
    expect(() => parseScheduleDate(value, ROME)).toThrow(ConfigError);
    expect(() => parseScheduleDate(value, ROME)).toThrow(`invalid date '${value}'`);
    expect(() => parseScheduleDate(value, ROME)).toThrow(reason);
  });

  it('rejects a TOML time of day and an invalid Date', () => {
    const toml = parse('time = 09:00:00\n') as Record<string, Date>;
    expect(() => parseScheduleDate(toml.time!, ROME)).toThrow('a time of day without a date');
    expect(() => parseScheduleDate(new Date(Number.NaN), ROME)).toThrow(ConfigError);
  });

  it('rejects an unknown timezone', () => {
    expect(() => parseScheduleDate('2026-03-01', 'Mars/Olympus')).toThrow('unknown timezone: Mars/Olympus');
  });
});

describe('dueOccurrence', () => {
  const daily = { expr: '0 9 * * *', timezone: 'UTC' };

  it('does not fire a tick from before the automation was first seen', () => {
    expect(due({ ...daily, createdAt: '2026-03-10T09:30:00Z', now: '2026-03-10T12:00:00Z' })).toBeUndefined();
    expect(due({ ...daily, createdAt: '2026-03-10T09:30:00Z', now: '2026-03-11T09:00:20Z' })).toBe(
      '2026-03-11T09:00:00.000Z',
    );
  });

  it('fires a tick at the very instant the automation was first seen', () => {
    expect(due({ ...daily, createdAt: '2026-03-10T09:00:00Z', now: '2026-03-10T09:00:10Z' })).toBe(
      '2026-03-10T09:00:00.000Z',
    );
  });

  it('lets start_date open the window instead of the first-seen time', () => {
    const startDate = parseScheduleDate('2026-03-10', 'UTC');
    expect(due({ ...daily, startDate, createdAt: '2026-03-10T09:30:00Z', now: '2026-03-10T12:00:00Z' })).toBe(
      '2026-03-10T09:00:00.000Z',
    );
  });

  it('fires nothing before a future start_date, then its first tick', () => {
    const startDate = parseScheduleDate('2026-04-01', ROME);
    const input = { expr: '0 9 * * *', timezone: ROME, startDate };
    expect(due({ ...input, now: '2026-03-31T12:00:00Z' })).toBeUndefined();
    expect(due({ ...input, now: '2026-04-01T07:00:30Z' })).toBe('2026-04-01T07:00:00.000Z');
  });

  it('includes the whole end date and nothing after it', () => {
    const endDate = parseScheduleDate('2026-03-15', 'UTC', 'end');
    const input = { expr: '0 23 * * *', timezone: 'UTC', endDate };
    expect(due({ ...input, lastScheduledFor: '2026-03-14T23:00:00.000Z', now: '2026-03-16T10:00:00Z' })).toBe(
      '2026-03-15T23:00:00.000Z',
    );
    expect(
      due({ ...input, lastScheduledFor: '2026-03-15T23:00:00.000Z', now: '2026-04-20T23:00:00Z' }),
    ).toBeUndefined();
  });

  it('includes a naive end datetime that falls exactly on a fire', () => {
    const endDate = parseScheduleDate('2026-03-15T09:00', ROME, 'end');
    expect(
      due({
        expr: '0 9 * * *',
        timezone: ROME,
        endDate,
        lastScheduledFor: '2026-03-14T08:00:00.000Z',
        now: '2026-05-01T00:00:00Z',
      }),
    ).toBe('2026-03-15T08:00:00.000Z');
  });

  it('coalesces three hours of sleep into exactly one occurrence, the latest', () => {
    const input = { expr: '*/5 * * * *', timezone: 'UTC', createdAt: '2026-03-10T00:00:00Z' };
    const first = due({
      ...input,
      lastScheduledFor: '2026-03-10T01:00:00.000Z',
      now: '2026-03-10T04:02:10Z',
    });
    expect(first).toBe('2026-03-10T04:00:00.000Z');
    // Once it is claimed, none of the 35 ticks slept through comes back.
    expect(due({ ...input, lastScheduledFor: first, now: '2026-03-10T04:04:59Z' })).toBeUndefined();
    expect(due({ ...input, lastScheduledFor: first, now: '2026-03-10T04:05:00Z' })).toBe(
      '2026-03-10T04:05:00.000Z',
    );
  });

  it('never returns an occurrence that was already scheduled', () => {
    expect(
      due({ ...daily, lastScheduledFor: '2026-03-10T09:00:00.000Z', now: '2026-03-10T09:00:40Z' }),
    ).toBeUndefined();
  });

  it('returns a claimed, unfinished occurrence first', () => {
    expect(
      due({
        ...daily,
        lastScheduledFor: '2026-03-09T09:00:00.000Z',
        pendingScheduledFor: '2026-03-09T09:00:00.000Z',
        now: '2026-03-10T09:00:30Z',
      }),
    ).toBe('2026-03-09T09:00:00.000Z');
  });

  it('schedules in the automation timezone', () => {
    expect(
      due({
        expr: '0 9 * * *',
        timezone: NY,
        createdAt: '2026-07-01T00:00:00Z',
        now: '2026-07-01T13:00:30Z',
      }),
    ).toBe('2026-07-01T13:00:00.000Z');
    expect(
      due({
        expr: '0 9 * * *',
        timezone: NY,
        createdAt: '2026-07-01T00:00:00Z',
        now: '2026-07-01T12:59:59Z',
      }),
    ).toBeUndefined();
  });

  it('reports an unreadable stored timestamp as a state error', () => {
    expect(() => due({ ...daily, lastScheduledFor: 'yesterday', now: '2026-03-10T09:00:30Z' })).toThrow(
      StateError,
    );
  });
});

describe('missed fires', () => {
  const occurrence = new Date('2026-03-10T09:00:00Z');
  const noticed = (seconds: number): Date => new Date(occurrence.getTime() + seconds * 1000);

  it('counts a fire noticed within 180 s as on time and later as missed', () => {
    expect(classifyLateness(occurrence, noticed(179))).toBe('on_time');
    expect(classifyLateness(occurrence, noticed(180))).toBe('on_time');
    expect(classifyLateness(occurrence, noticed(181))).toBe('missed');
  });

  it('honours a custom threshold', () => {
    expect(classifyLateness(occurrence, noticed(61), 60_000)).toBe('missed');
  });

  it('runs an on-time fire whatever the policy', () => {
    expect(decideMissed('skip', occurrence, noticed(179))).toEqual({
      action: 'run',
      missed: false,
      lateMs: 179_000,
    });
    expect(decideMissed('run', occurrence, noticed(10))).toEqual({
      action: 'run',
      missed: false,
      lateMs: 10_000,
    });
  });

  it('skips a missed fire under `skip`, still marking it missed', () => {
    expect(decideMissed('skip', occurrence, noticed(181))).toEqual({
      action: 'skip',
      missed: true,
      lateMs: 181_000,
    });
  });

  it('runs a missed fire once under `run`, marking it missed', () => {
    expect(decideMissed('run', occurrence, noticed(181))).toEqual({
      action: 'run',
      missed: true,
      lateMs: 181_000,
    });
  });

  it('after a night asleep, the daily job due on waking is missed', () => {
    const found = dueOccurrence({
      expr: '0 9 * * *',
      timezone: ROME,
      state: {
        createdAt: '2026-03-01T00:00:00Z',
        lastScheduledFor: '2026-03-09T08:00:00.000Z',
        pendingScheduledFor: null,
      },
      now: new Date('2026-03-12T13:00:00Z'),
    });
    expect(found?.toISOString()).toBe('2026-03-12T08:00:00.000Z');
    expect(decideMissed('skip', found!, new Date('2026-03-12T13:00:00Z')).action).toBe('skip');
  });
});
