/** Items become tasks: an identity (who works on what) and a fingerprint (what the item said). */
import { createHash } from 'node:crypto';
import type { ResolvedAutomation } from '../config/types.js';
import { type FieldValue, type Item, identityKey, type Task, type TaskIdentity } from '../core/types.js';

/** The forge identity used for `${repo}` and identities: the trigger's `repo`, else the alias. */
export function automationRepo(automation: ResolvedAutomation): string {
  const repo = (automation.config as { repo?: string }).repo;
  return repo ?? automation.repository.alias;
}

export function fingerprint(identity: TaskIdentity, item: Item): string {
  const pairs = Object.entries(item.fields);
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
  return { identity, key: identityKey(identity), fingerprint: fingerprint(identity, item), item };
}

/** Everything a prompt may read: the common fields, then the trigger's own. */
export function promptContext(automation: ResolvedAutomation, task: Task): Record<string, FieldValue> {
  return {
    repo: task.identity.repo,
    repository: automation.repository.alias,
    automation_id: automation.id,
    task_type: task.identity.taskType,
    task_number: task.item.id,
    task_title: task.item.title,
    task_body: task.item.body,
    task_url: task.item.url,
    ...task.item.fields,
    ...(task.item.volatile ?? {}),
  };
}

/** Hash of what decides whether a saved session can continue: the prompt template and its syntax. */
export function promptTemplateHash(automation: ResolvedAutomation): string {
  return createHash('sha256')
    .update(`${automation.promptSyntax}\u0000${automation.config.prompt}`)
    .digest('hex')
    .slice(0, 16);
}
