/** Items become tasks: an identity (who works on what) and a fingerprint (what the item said). */
import { createHash } from 'node:crypto';
import type { ResolvedAutomation } from '../config/types.js';
import { automationRepo, rawPromptContext, recordSkippedRun, runInit } from '../core/task-fields.js';
import { type FieldValue, type Item, identityKey, type Task, type TaskIdentity } from '../core/types.js';
import { createFence, type Fence } from '../prompt/fence.js';
import { flattenValue } from '../prompt/fields.js';
import { guardUntrusted } from '../prompt/untrusted.js';
import { taskItemName } from '../triggers/registry.js';

export { automationRepo, rawPromptContext, recordSkippedRun, runInit };

/**
 * What the item said, as a digest: a change dispatches the item again. Labels in `ignoredLabels`
 * are left out: curupira's own state labels (`status_label`, `failed_label`, `blocked_label`) are
 * its writes, not the item changing, and must not start another run.
 */
export function fingerprint(identity: TaskIdentity, item: Item, ignoredLabels?: ReadonlySet<string>): string {
  const pairs = Object.entries(item.fields).map(([key, value]): [string, FieldValue] =>
    ignoredLabels && ignoredLabels.size > 0 && key.endsWith('_labels') && Array.isArray(value)
      ? [key, (value as string[]).filter((label) => !ignoredLabels.has(label.toLowerCase()))]
      : [key, value],
  );
  return createHash('sha256')
    .update(JSON.stringify([identity.automationId, identity.repo, identity.taskType, pairs]))
    .digest('hex');
}

export function taskFromItem(automation: ResolvedAutomation, item: Item): Task {
  const identity: TaskIdentity = {
    automationId: automation.id,
    repo: item.repo ?? automationRepo(automation),
    taskType: automation.triggerType,
    id: item.id,
  };
  return {
    identity,
    key: identityKey(identity),
    fingerprint: fingerprint(identity, item, ownStateLabels(automation)),
    item,
  };
}

/**
 * The labels an automation writes on its items as it works (lower-cased): its state labels, its
 * `trusted_label`, and every label its handoffs put on or take off (a review's `agent:approved` must
 * not make the pull request it reviewed a new task). The escalated label is not one: a person
 * removing it is the reset, and must offer the item again.
 */
export function ownStateLabels(automation: ResolvedAutomation): ReadonlySet<string> {
  const { status_label, failed_label, blocked_label, trusted_label, handoffs } = automation.config;
  const handoffLabels = Object.values(handoffs ?? {}).flatMap((h) => [...h.add_labels, ...h.remove_labels]);
  return new Set(
    [status_label, failed_label, blocked_label, trusted_label, ...handoffLabels]
      .filter((label): label is string => typeof label === 'string')
      .map((label) => label.toLowerCase()),
  );
}

function describeSource(automation: ResolvedAutomation, task: Task, field: string): string {
  const described = automation.trigger.describeField?.(task, field);
  if (described !== undefined) return described;
  const authorField = automation.trigger.authorField;
  const author = authorField === undefined ? undefined : task.item.fields[authorField];
  const item = taskItemName(automation, task);
  if (field === 'comments') return `comments on ${item} by trusted actors (each headed by its author)`;
  const what = field.replace(/_/g, ' ');
  // Labels are applied by whoever can label, not necessarily by the item's author.
  const by =
    typeof author === 'string' && author !== '' && !field.endsWith('_labels')
      ? ` (written by @${author})`
      : '';
  return `${what} of ${item}${by}`;
}

/**
 * Everything a prompt may read: the common fields, then the trigger's own. Every field the trigger
 * declares untrusted is capped and fenced (unless `untrusted_text = "raw"`) with `fence`, one per
 * run: its nonce is drawn at random, so the item's text cannot close or forge a fence.
 */
export function promptContext(
  automation: ResolvedAutomation,
  task: Task,
  fence: Fence = createFence(),
): Record<string, FieldValue> {
  return guardUntrusted(rawPromptContext(automation, task), {
    fields: automation.trigger.untrustedFields,
    syntax: automation.promptSyntax,
    mode: automation.config.untrusted_text,
    fence,
    describe: (field) => describeSource(automation, task, field),
  });
}

/** Hash of what decides whether a saved session can continue: the prompt template and its syntax. */
export function promptTemplateHash(automation: ResolvedAutomation): string {
  return createHash('sha256')
    .update(`${automation.promptSyntax}\u0000${automation.config.prompt}`)
    .digest('hex')
    .slice(0, 16);
}

const COMMON_ITEM_PLACEHOLDERS = ['task_number', 'task_title', 'task_body'];

/**
 * Whether the automation's prompt gets its item appended: its trigger has an item and the prompt
 * reads none of the fields naming it (`TriggerDefinition.itemPlaceholders`, `task_number`,
 * `task_title`, `task_body`).
 */
export function appendsItem(automation: ResolvedAutomation): boolean {
  const own = automation.trigger.itemPlaceholders;
  if (own === undefined) return false;
  const naming = new Set([...own, ...COMMON_ITEM_PLACEHOLDERS]);
  return !automation.placeholders.some((name) => naming.has(name));
}

/**
 * What a prompt that names no item ends with (see `appendsItem`): the item's number, title and
 * body, read from `context` as `promptContext` made it, so the title and body are fenced as every
 * untrusted field is (unless `untrusted_text = "raw"`). Empty when nothing is appended.
 */
export function itemAppendix(
  automation: ResolvedAutomation,
  context: Readonly<Record<string, FieldValue>>,
): string {
  if (!appendsItem(automation)) return '';
  const text = (name: string): string => {
    const value = context[name];
    return value === undefined || value === null ? '' : flattenValue(value);
  };
  const body = text('task_body');
  return [
    '',
    '',
    'The item this task is about:',
    `Number: ${text('task_number')}`,
    `Title: ${text('task_title')}`,
    `Body:\n${body.trim() === '' ? '(empty)' : body}`,
  ].join('\n');
}
