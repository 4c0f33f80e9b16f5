/**
 * What a task and its automation give everything downstream: the repository it names, the fields a
 * prompt reads, the ledger fields its runs start with. Pure, so the engine and features share it.
 */
import type { ResolvedAutomation } from '../config/types.js';
import type { RunInit, Store } from '../store/types.js';
import type { FieldValue, RunRecord, RunStatus, Task } from './types.js';

/** The forge identity used for `${repo}` and identities: the trigger's `repo`, else the alias. */
export function automationRepo(automation: ResolvedAutomation): string {
  return automation.config.repo ?? automation.repository.alias;
}

/** NUL bytes cannot be passed to a process and mean nothing in a prompt: item text loses them. */
function withoutNul(value: FieldValue): FieldValue {
  if (typeof value === 'string') return value.includes('\u0000') ? value.replaceAll('\u0000', '') : value;
  if (Array.isArray(value)) return value.map(withoutNul);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withoutNul(v as FieldValue)]));
  }
  return value;
}

/** The prompt fields as the item has them, unfenced (for text curupira itself writes, like a pull request). */
export function rawPromptContext(automation: ResolvedAutomation, task: Task): Record<string, FieldValue> {
  const context = rawFields(automation, task);
  for (const [key, value] of Object.entries(context)) context[key] = withoutNul(value);
  return context;
}

function rawFields(automation: ResolvedAutomation, task: Task): Record<string, FieldValue> {
  return {
    repo: task.identity.repo,
    repository: automation.repository.alias,
    automation_id: automation.id,
    task_type: task.identity.taskType,
    task_number: task.item.id,
    task_title: task.item.title,
    task_body: task.item.body,
    task_url: task.item.url,
    // Filled at dispatch by screening (trusted comments only); empty until then (previews).
    ...(automation.trigger.promptFields.includes('comments') ? { comments: '' } : {}),
    ...task.item.fields,
    ...(task.item.volatile ?? {}),
  };
}

/** The ledger fields every run of `task` starts with. */
export function runInit(automation: ResolvedAutomation, task: Task, status: RunStatus): RunInit {
  return {
    automationId: automation.id,
    taskKey: task.key,
    repo: task.identity.repo,
    taskType: task.identity.taskType,
    itemId: task.item.id,
    itemKey: task.item.itemKey,
    itemTitle: task.item.title,
    itemUrl: task.item.url,
    status,
    profile: automation.profileName,
    provider: automation.profile.provider,
    scheduledFor: task.item.scheduledFor ?? null,
  };
}

/** A run that never starts (a skipped backlog item, a missed schedule fire): recorded, with its reason. */
export async function recordSkippedRun(
  store: Store,
  automation: ResolvedAutomation,
  task: Task,
  reason: string,
  at: string,
): Promise<string> {
  const run = await store.createRun({ ...runInit(automation, task, 'skipped'), reason });
  await store.updateRun(run.id, { finishedAt: at });
  return run.id;
}

/** Enough of a task from its run record: its identity and key (a remediation, a completion after a restart). */
export function taskOfRun(run: RunRecord): Task {
  return {
    key: run.taskKey,
    fingerprint: '',
    identity: { automationId: run.automationId, repo: run.repo, taskType: run.taskType, id: run.itemId },
    item: {
      id: run.itemId,
      title: run.itemTitle,
      url: run.itemUrl,
      body: '',
      fields: {},
      itemKey: run.itemKey,
    },
  };
}
