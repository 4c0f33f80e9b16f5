/** A schedule's fire as an item, and the schedule a `cron` table describes for the engine's schedule feed. */
import type { Item } from '../../core/types.js';
import type { ScheduleSpec } from '../types.js';
import type { CronResolved } from './schema.js';

export function cronItem(automation: CronResolved, occurrence: Date, missed: boolean): Item {
  const c = automation.config;
  const epoch = String(Math.floor(occurrence.getTime() / 1000));
  return {
    id: epoch,
    title: automation.id,
    url: `cron://${automation.id}`,
    body: '',
    itemKey: `cron:${epoch}`,
    scheduledFor: occurrence.toISOString(),
    missed,
    fields: {
      cron_schedule: c.schedule,
      cron_timezone: automation.timezone,
      cron_scheduled_for: occurrence.toISOString(),
      cron_missed: missed,
    },
  };
}

export function scheduleOf(automation: CronResolved): ScheduleSpec {
  const c = automation.config;
  return {
    expr: c.schedule,
    timezone: automation.timezone,
    startDate: c.start_date,
    endDate: c.end_date,
    missed: c.missed,
    item: (occurrence, missed) => cronItem(automation, occurrence, missed),
  };
}
