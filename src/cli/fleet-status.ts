/**
 * The fleet block of `curupira status` (issue 17): one line per host (health, load/capacity, role,
 * heartbeat age, whether it polls, its version) and what the dispatches stand at. Host names and
 * versions come from database rows: control characters are made visible, never sent to a terminal.
 */
import type { Settings } from '../config/types.js';
import type {
  DispatchRecord,
  DispatchState,
  FleetHost,
  FleetView,
  HostHealth,
  WaitingTask,
} from '../fleet/types.js';
import { makeVisible } from '../screening/text.js';
import { formatDuration } from './status-line.js';

/** A fleet view the CLI opened, and how to let go of it. */
export interface FleetAccess {
  view: FleetView;
  close(): Promise<void>;
}

/** Opens the fleet of these settings, or resolves to undefined when there is none (the embedded store). */
export type OpenFleet = (settings: Settings) => Promise<FleetAccess | undefined>;

/** The embedded, one-process store has no fleet. */
export const noFleet: OpenFleet = async () => undefined;

/** `3s ago`, `2m05s ago`, or `unknown` for a time that does not parse. */
export function heartbeatAge(heartbeatAt: string, now: number): string {
  const at = Date.parse(heartbeatAt);
  return Number.isFinite(at) ? `${formatDuration(now - at)} ago` : 'unknown';
}

/** `2/4`, or `-` for a host that runs no agents (a poller). */
export function loadText(host: Pick<FleetHost, 'load' | 'capacity'>): string {
  return host.capacity === 0 && host.load === 0 ? '-' : `${host.load}/${host.capacity}`;
}

/** `2 healthy, 1 late`: how many of each value, in the order given, those present only. */
function count<T extends string>(values: readonly T[], order: readonly T[]): string {
  const known = order.filter((value) => values.includes(value));
  const others = [...new Set(values.filter((value) => !order.includes(value)))];
  return [...known, ...others]
    .map((value) => `${values.filter((v) => v === value).length} ${makeVisible(value).replace('_', ' ')}`)
    .join(', ');
}

const HEALTH_ORDER: readonly HostHealth[] = ['healthy', 'late', 'gone', 'stopped'];
const STATE_ORDER: readonly DispatchState[] = ['queued', 'running', 'done', 'taken_back'];

function byName(a: FleetHost, b: FleetHost): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/**
 * The fleet block: a heading line, then one line per host (sorted by name), then, when given, one
 * line counting the dispatches not yet settled by state, then one line per task that no live
 * worker can run, with why.
 */
export function fleetStatusLines(
  hosts: readonly FleetHost[],
  now: number,
  dispatches?: readonly DispatchRecord[],
  waiting: readonly WaitingTask[] = [],
): string[] {
  if (hosts.length === 0) return ['fleet: no host has a heartbeat row yet'];
  const working = hosts.filter((h) => h.health !== 'stopped' && h.health !== 'gone');
  const busy = working.reduce((sum, h) => sum + h.load, 0);
  const slots = working.reduce((sum, h) => sum + h.capacity, 0);
  const lines = [
    `fleet: ${hosts.length} host${hosts.length === 1 ? '' : 's'} (${count(
      hosts.map((h) => h.health),
      HEALTH_ORDER,
    )}) · ${busy}/${slots} slots taken on live hosts`,
  ];
  const sorted = [...hosts].sort(byName);
  const names = sorted.map((h) => makeVisible(h.name));
  const width = Math.max(...names.map((n) => n.length));
  sorted.forEach((host, i) => {
    const notes = [
      `heartbeat ${heartbeatAge(host.heartbeatAt, now)}`,
      ...(host.polling ? ['polling'] : []),
      ...(host.stoppedAt ? [`stopped ${makeVisible(host.stoppedAt)}`] : []),
      `v${makeVisible(host.version)}`,
    ];
    lines.push(
      `  ${names[i]!.padEnd(width)}  ${makeVisible(host.health).padEnd(7)}  ${loadText(host).padStart(5)}  ${makeVisible(host.role).padEnd(6)}  ${notes.join(' · ')}`,
    );
  });
  if (dispatches !== undefined)
    lines.push(
      dispatches.length === 0
        ? '  dispatches: none waiting to be settled'
        : `  dispatches: ${count(
            dispatches.map((d) => d.state),
            STATE_ORDER,
          )} (not yet settled)`,
    );
  for (const task of waiting)
    lines.push(
      `  waiting: ${makeVisible(task.taskKey)} for ${heartbeatAge(task.since, now).replace(/ ago$/, '')}: ${makeVisible(task.reason)}`,
    );
  return lines;
}
