/**
 * Every trigger, by canonical type. Adding a trigger: a folder whose `index.ts` exports its
 * `TriggerDefinition<AutomationOf<'type', Table>>`, and one line in `BUILT_IN_TRIGGERS`; the
 * `TriggerType` names and the `ResolvedAutomation` union are read from this object's type.
 */
import type { ResolvedAutomation } from '../config/types.js';
import type { RunRecord, Task } from '../core/types.js';
import { afterTrigger } from './after/index.js';
import { cronTrigger } from './cron/index.js';
import { githubCommitsTrigger } from './github-commits/index.js';
import { githubIssuesTrigger } from './github-issues/index.js';
import { githubProjectItemsTrigger } from './github-project-items/index.js';
import { githubPullRequestsTrigger } from './github-pull-requests/index.js';
import { jiraTrigger } from './jira/index.js';
import { linearTrigger } from './linear/index.js';
import { reviewWatchTrigger } from './review-watch/index.js';
import type { ItemRef, TriggerDefinition } from './types.js';

export const BUILT_IN_TRIGGERS = {
  'github-issues': githubIssuesTrigger,
  'github-pull-requests': githubPullRequestsTrigger,
  'github-project-items': githubProjectItemsTrigger,
  'github-commits': githubCommitsTrigger,
  cron: cronTrigger,
  after: afterTrigger,
  linear: linearTrigger,
  jira: jiraTrigger,
  'review-watch': reviewWatchTrigger,
} as const;

/** The canonical type of a built-in trigger. */
export type TriggerType = keyof typeof BUILT_IN_TRIGGERS;

/** What every definition must provide; `registerTrigger` refuses one that lacks any. */
const REQUIRED = {
  functions: ['explain', 'createFeed', 'upstreamRunId', 'resolveTimezone'],
  lists: ['aliases', 'promptFields', 'untrustedFields'],
} as const;

/** The hooks and fields `definition` lacks (its doctor hook counts as `doctor.check`). */
export function missingHooks(definition: Partial<Record<keyof TriggerDefinition, unknown>>): string[] {
  const missing: string[] = [];
  if (typeof definition.type !== 'string' || definition.type === '') missing.push('type');
  if (typeof definition.description !== 'string') missing.push('description');
  if (typeof definition.schema !== 'object' || definition.schema === null) missing.push('schema');
  if (typeof definition.serialRuns !== 'boolean') missing.push('serialRuns');
  for (const name of REQUIRED.functions) if (typeof definition[name] !== 'function') missing.push(name);
  for (const name of REQUIRED.lists) if (!Array.isArray(definition[name])) missing.push(name);
  const doctor = definition.doctor as Partial<TriggerDefinition['doctor']> | undefined;
  if (typeof doctor?.check !== 'function') missing.push('doctor.check');
  if (!['github', 'clock', 'service', 'state'].includes(String(doctor?.needs))) missing.push('doctor.needs');
  return missing;
}

/** Triggers registered at run time (tests), after the built-in ones. */
const registered = new Map<string, TriggerDefinition>();

/** Every trigger definition: the built-in ones, then any registered. */
export function triggerDefinitions(): TriggerDefinition[] {
  return [...Object.values(BUILT_IN_TRIGGERS), ...registered.values()];
}

/**
 * Adds a trigger type from outside `src/triggers` (a test's folder); returns the function that
 * removes it again. Its automations are loaded, explained, checked and run like the built-in ones.
 * The generated schema and docs list the built-in triggers only.
 */
export function registerTrigger(definition: TriggerDefinition): () => void {
  const missing = missingHooks(definition);
  if (missing.length > 0)
    throw new Error(`trigger type ${String(definition.type)} lacks ${missing.join(', ')}`);
  if (findTriggerDefinition(definition.type))
    throw new Error(`trigger type ${definition.type} is already registered`);
  registered.set(definition.type, definition);
  return () => {
    registered.delete(definition.type);
  };
}

/** The trigger of a table that names none and has no key implying one (the reference's default). */
const DEFAULT_TRIGGER: TriggerType = 'github-issues';

/** The trigger of a table that names none and implies none. */
export function defaultTrigger(): TriggerDefinition {
  return BUILT_IN_TRIGGERS[DEFAULT_TRIGGER];
}

/** The trigger of a table without `trigger_type`: the first whose `impliedBy` key it has, else issues. */
export function impliedTriggerName(table: Readonly<Record<string, unknown>>): string {
  const implied = triggerDefinitions().find((d) => d.impliedBy !== undefined && d.impliedBy in table);
  return implied?.type ?? DEFAULT_TRIGGER;
}

/** Resolves a `trigger_type` as written (`plugins-py/github-issues`, `github-issues`, `cron`). */
export function findTriggerDefinition(name: string): TriggerDefinition | undefined {
  for (const definition of triggerDefinitions()) {
    if (definition.type === name || definition.aliases.includes(name)) return definition;
  }
  return undefined;
}

/** Every spelling `trigger_type` accepts. */
export function acceptedTriggerNames(): string[] {
  return triggerDefinitions().flatMap((d) => [...d.aliases, d.type]);
}

/**
 * How a run's item reads to a person: `acme/api#12`, or its trigger's own name for it (a
 * schedule's fire, a chain's upstream run). `automations`: the settings', to find the run's.
 */
export function runItemName(run: RunRecord, automations: readonly ResolvedAutomation[] = []): string {
  const definition = findTriggerDefinition(run.taskType);
  const automation = automations.find((a) => a.id === run.automationId && a.trigger === definition);
  return definition?.itemName?.(run, automation) ?? `${run.repo}#${run.itemId}`;
}

/** The run's automation, when the settings still have it (as the run's trigger defines it). */
export function runAutomation(
  run: Pick<RunRecord, 'taskType' | 'automationId'>,
  automations: readonly ResolvedAutomation[],
): ResolvedAutomation | undefined {
  const definition = findTriggerDefinition(run.taskType);
  return automations.find((a) => a.id === run.automationId && a.trigger === definition);
}

/** Where a run's item comes from, for a source outside GitHub (`sourceSummary`); else undefined. */
export function runSource(
  run: Pick<RunRecord, 'taskType' | 'automationId'>,
  automations: readonly ResolvedAutomation[],
): string | undefined {
  const automation = runAutomation(run, automations);
  return automation?.trigger.sourceSummary?.(automation);
}

/** How a task's item reads to a person before any run (`run --dry-run`): as its run will read. */
export function taskItemName(automation: ResolvedAutomation, task: Task): string {
  const item: ItemRef = {
    repo: task.identity.repo,
    itemId: task.item.id,
    scheduledFor: task.item.scheduledFor ?? null,
    itemUrl: task.item.url,
  };
  return automation.trigger.itemName?.(item, automation) ?? `${item.repo}#${item.itemId}`;
}

/**
 * The issue or pull request a task's (or run's) item is, when its trigger numbers its items in the
 * repository (`githubItem` is `issue` or `pull-request`): where comments, labels and leases go.
 */
export function numberedItem(
  taskType: string,
  repo: string,
  id: string,
): { repo: string; number: number } | undefined {
  const kind = findTriggerDefinition(taskType)?.githubItem;
  return (kind === 'issue' || kind === 'pull-request') && /^\d+$/.test(id)
    ? { repo, number: Number(id) }
    : undefined;
}

/** True when the task's item is a pull request (where reviews and reviewers go). */
export function isPullRequestItem(taskType: string): boolean {
  return findTriggerDefinition(taskType)?.githubItem === 'pull-request';
}

/** The run's item link, when a browser can open it (a schedule's `cron://` is no link). */
export function runItemLink(run: Pick<RunRecord, 'itemUrl'>): string | undefined {
  return /^https?:\/\//i.test(run.itemUrl) ? run.itemUrl : undefined;
}
