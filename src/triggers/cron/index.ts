/** The cron trigger's definition: a schedule the engine checks against its clock. */

import { isValidTimezone, nextFireTimes, parseScheduleDate } from '../../core/schedule.js';
import { noUpstreamRun } from '../hooks.js';
import type { TriggerDefinition } from '../types.js';
import { scheduleOf } from './item.js';
import { type CronResolved, cronTable, formatInZone } from './schema.js';

function tryDate(
  value: string | Date | undefined,
  timezone: string,
  edge: 'start' | 'end',
  report: (message: string) => void,
): Date | undefined {
  if (value === undefined) return undefined;
  try {
    return parseScheduleDate(value, timezone, edge);
  } catch (error) {
    report(error instanceof Error ? error.message : String(error));
    return undefined;
  }
}

export const cronTrigger: TriggerDefinition<CronResolved> = {
  ...cronTable,
  impliedBy: 'schedule',
  // Occurrences of one schedule run one after the other.
  serialRuns: true,
  // A nightly run opens no second pull request while the last one is open.
  firesAreOccasions: true,
  createFeed(automation, context) {
    return context.feeds.schedule(automation, scheduleOf(automation));
  },
  doctor: {
    needs: 'clock',
    async check(automation, context) {
      const now = new Date(context.clock.now());
      const next = nextFireTimes(automation.config.schedule, automation.timezone, now, 1)[0];
      return { ok: true, detail: `next fire ${next ? formatInZone(next, automation.timezone) : 'never'}` };
    },
  },
  screening: { unscreened: 'a schedule carries no third-party text' },
  itemName(run, automation) {
    const at =
      run.scheduledFor ??
      (/^\d+$/.test(run.itemId) ? new Date(Number(run.itemId) * 1000).toISOString() : null);
    const when = at
      ? automation
        ? formatInZone(new Date(at), automation.timezone).replace(/ \(.*\)$/, '')
        : `${at.slice(0, 16).replace('T', ' ')} UTC`
      : undefined;
    return `schedule${automation ? ` ${automation.config.schedule}` : ''}${when ? ` fired ${when}` : ''}`;
  },
  nextFire: (automation, now) => nextFireTimes(automation.config.schedule, automation.timezone, now, 1)[0],
  upstreamRunId: noUpstreamRun,
  resolveTimezone(config, context) {
    let timezone = context.defaultTimezone;
    if (config.timezone !== undefined) {
      if (!isValidTimezone(config.timezone))
        context.problem('timezone', `unknown timezone: ${config.timezone}`);
      else timezone = config.timezone;
    }
    if (isValidTimezone(timezone)) {
      const start = tryDate(config.start_date, timezone, 'start', (m) => context.problem('start_date', m));
      const end = tryDate(config.end_date, timezone, 'end', (m) => context.problem('end_date', m));
      if (start && end && end.getTime() < start.getTime()) {
        context.problem('end_date', `end_date must be greater than or equal to start_date: ${context.id}`);
      }
    }
    return timezone;
  },
};
