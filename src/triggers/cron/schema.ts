import { z } from 'zod';
import type { AutomationOf } from '../../config/types.js';
import { nextFireTimes, parseScheduleDate, validateCronExpression } from '../../core/schedule.js';
import { automationBaseShape, RepoSlug, withoutItemKeys } from '../common-schema.js';
import type { ExplainLine, TriggerTable } from '../types.js';

/** A TOML date or datetime (smol-toml gives a Date subclass), or the same written as a string. */
const ScheduleDate = z
  .union([
    z.date(),
    z
      .string()
      .regex(
        /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})?)?$/i,
        'must be a date (YYYY-MM-DD) or a datetime (YYYY-MM-DDTHH:MM[:SS][Z|±HH:MM])',
      ),
  ])
  .optional();

export const CronAutomation = z
  .strictObject({
    ...automationBaseShape,
    ...withoutItemKeys('a schedule'),
    schedule: z
      .string()
      .superRefine((value, ctx) => {
        const problem = validateCronExpression(value);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      })
      .describe('Five-field cron expression: minute hour day-of-month month day-of-week.'),
    timezone: z
      .string()
      .optional()
      .describe('IANA timezone of the schedule; default `[agents.defaults] timezone`.'),
    start_date: ScheduleDate.describe(
      'First day (inclusive) the schedule may fire; naive values are in the timezone.',
    ),
    end_date: ScheduleDate.describe(
      'Last day (inclusive) the schedule may fire; naive values are in the timezone.',
    ),
    missed: z
      .enum(['skip', 'run'])
      .optional()
      .describe(
        'A fire more than 180 s late (machine asleep, curupira stopped): `run` runs it once, `skip` records it as missed and skipped. Unset: run it, as the reference does. It applies only to fires after the schedule was first seen (kept in the state): a daily `0 3 * * *` added at 08:08 first fires the next day, while a fire still on time when the schedule is first seen (less than 180 s before) runs at once, so `*/5 * * * *` added at 10:01 runs the 10:00 fire then; `start_date` opens the window earlier (curupira extension).',
      ),
    repo: RepoSlug.optional().describe('`owner/name` exposed as `${repo}`; default the repository alias.'),
  })
  .describe('A local schedule; overdue ticks coalesce into one pending occurrence.');
export type CronAutomation = z.infer<typeof CronAutomation>;

export const CRON_PROMPT_FIELDS = [
  'cron_schedule',
  'cron_timezone',
  'cron_scheduled_for',
  'cron_missed',
] as const;

export const cronTable: TriggerTable<CronResolved> = {
  type: 'cron',
  aliases: [],
  description: 'A local schedule',
  schema: CronAutomation,
  promptFields: CRON_PROMPT_FIELDS,
  untrustedFields: [],
  explain(automation: CronResolved, now: Date): ExplainLine[] {
    const c = automation.config;
    const start =
      c.start_date === undefined ? undefined : parseScheduleDate(c.start_date, automation.timezone, 'start');
    const end =
      c.end_date === undefined ? undefined : parseScheduleDate(c.end_date, automation.timezone, 'end');
    const from = start && start.getTime() > now.getTime() ? new Date(start.getTime() - 1) : now;
    const next = nextFireTimes(c.schedule, automation.timezone, from, 3).filter(
      (d) => !end || d.getTime() <= end.getTime(),
    );
    const lines: ExplainLine[] = [
      { label: 'schedule', value: c.schedule },
      { label: 'timezone', value: automation.timezone },
      {
        label: 'next fires',
        value: next.length > 0 ? next.map((d) => formatInZone(d, automation.timezone)).join(', ') : 'none',
      },
      {
        label: 'missed fires',
        value: c.missed === 'skip' ? 'skipped (recorded as missed)' : 'run once when noticed',
      },
    ];
    if (c.start_date !== undefined || c.end_date !== undefined) {
      lines.push({
        label: 'window',
        value: `${c.start_date === undefined ? 'open' : String(c.start_date)} .. ${c.end_date === undefined ? 'open' : String(c.end_date)}`,
      });
    }
    return lines;
  },
};

/** `2026-03-02 09:00 Europe/Rome (08:00Z)`. */
export function formatInZone(date: Date, timezone: string): string {
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone: timezone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(date);
  const get = (type: string): string => parts.find((p) => p.type === type)?.value ?? '';
  return `${get('year')}-${get('month')}-${get('day')} ${get('hour')}:${get('minute')} ${timezone} (${date.toISOString().slice(0, 16)}Z)`;
}

/** A resolved automation of this trigger: its type and its validated table together. */
export type CronResolved = AutomationOf<'cron', CronAutomation>;
