/**
 * Escalation on GitHub (issue 12, item 4), on top of the local failure budget (budget.ts). Strictly
 * opt-in: nothing here runs unless the automation writes to GitHub.
 *
 * - `escalated_label` (+ `escalate_to`): the run that reaches `max_item_failures` puts the label on
 *   the item and posts one comment mentioning `escalate_to` (markers `escalate run=<id> step=label`
 *   and `escalate run=<id>`, so a retry never posts twice). The automation runs the item no more
 *   while the label is on — on any host: an item polled with the label is held. Once a person
 *   removes it, the next time the item comes up the local escalation is lifted (as `curupira reset`
 *   does) and it runs again.
 * - Failure counts travel in the result comments (`result_comment`): each carries a hidden
 *   `<!-- curupira:failures automation=<id> count=<n> text=<digest> -->`. Before a run, the latest
 *   count in the item's comments written by the token's own account or a trusted author (the
 *   screening trust rules) raises the local count, so a second host continues the first one's. The
 *   latest, not the highest: a success writes 0, and an escalation comment (its label since
 *   removed by a person) starts the count again.
 */

import { resolveScreening } from '../config/screening.js';
import type { ResolvedAutomation, Settings } from '../config/types.js';
import { errorMessage } from '../core/errors.js';
import { isFailure, type RunRecord, type Task } from '../core/types.js';
import type { GitHubClient } from '../github/client.js';
import { getAuthenticatedUser, listIssueComments, listIssueLabels } from '../github/rest.js';
import { declareWriter } from '../github/writers.js';
import type { Logger } from '../log.js';
import { type Actor, isTrusted, type TrustRules } from '../screening/trust.js';
import type { GitHubWrite, ItemFailures, Store } from '../store/types.js';
import { failureBudget, itemTextDigest } from './budget.js';

/** The automation's escalated label: its own, else the settings-wide one; undefined when off. */
export function escalatedLabel(settings: Settings, automation: ResolvedAutomation): string | undefined {
  return automation.config.escalated_label ?? settings.execution.escalated_label;
}

/** Who the escalation comment mentions, as `@login` / `@org/team`. */
export function escalateTo(settings: Settings, automation: ResolvedAutomation): string[] {
  const handles = automation.config.escalate_to ?? settings.execution.escalate_to ?? [];
  return handles.map((h) => `@${h.replace(/^@/, '')}`);
}

export function escalateMarker(runId: string, step?: 'label'): string {
  return step ? `escalate run=${runId} step=${step}` : `escalate run=${runId}`;
}

/** The hidden line a result comment carries with the item's failure count after that run. */
export function failuresMarker(automationId: string, count: number, textDigest: string): string {
  return `<!-- curupira:failures automation=${automationId} count=${count} text=${textDigest} -->`;
}

const FAILURES = /<!-- curupira:failures automation=(\S+) count=(\d+) text=([0-9a-f]+) -->/g;

/** The count an automation's marker gives for this item text in one comment body, else `none`. */
export function failuresIn(body: string, automationId: string, textDigest: string, none = 0): number {
  let found = none;
  for (const m of body.matchAll(FAILURES)) {
    if (m[1] === automationId && m[3] === textDigest) found = Math.max(found, Number(m[2]));
  }
  return found;
}

/**
 * The item's failure count once this run is counted (what countRun will store): 0 after a
 * success, one more after a failed, timed-out or stalled run on the same text, unchanged otherwise.
 */
export async function predictFailures(store: Store, task: Task, run: RunRecord): Promise<number> {
  if (run.status === 'succeeded') return 0;
  const state = await store.getItemFailures(task.key);
  const base = state && state.textDigest === itemTextDigest(task) ? state.failures : 0;
  // The same statuses countRun counts (one vocabulary: FAILED_STATUSES in src/core/types.ts).
  return isFailure(run.status) ? base + 1 : base;
}

/** The label and the comment of an escalation (the queue adds the hidden markers). */
export function escalationWrites(
  settings: Settings,
  automation: ResolvedAutomation,
  state: ItemFailures,
  run: RunRecord,
): { marker: string; write: GitHubWrite }[] {
  const label = escalatedLabel(settings, automation);
  if (!label) return [];
  const limit = failureBudget(settings, automation);
  const handles = escalateTo(settings, automation);
  const reason = (run.reason ?? run.status).replace(/`/g, "'").replace(/[\r\n]+/g, ' ');
  const body = [
    `**curupira** escalation: automation \`${automation.id}\` failed on this item ${state.failures} times (max_item_failures = ${limit}) and will not run it again until someone removes the \`${label}\` label.`,
    '',
    ...(handles.length > 0 ? [`${handles.join(' ')}: please take a look.`, ''] : []),
    `- Last run: \`${run.id}\` (\`curupira runs show ${run.id}\`)`,
    `- Last outcome: \`${reason}\``,
  ].join('\n');
  return [
    {
      marker: escalateMarker(run.id, 'label'),
      write: {
        kind: 'add-labels',
        labels: [
          {
            name: label,
            description: 'curupira: failed too often; remove this label to let curupira run it again',
          },
        ],
      },
    },
    { marker: escalateMarker(run.id), write: { kind: 'comment', body } },
  ];
}

/** `escalated_label` (or its `[settings]` default): the label and comment of an escalated item. */
export const ESCALATION_WRITER = declareWriter({
  feature: 'escalation',
  keys: ['escalated_label'],
  settingsWide: ['escalated_label'],
});

interface RestLabel {
  name: string;
}

interface RestComment {
  body?: string;
  user: { login: string; type?: string } | null;
  author_association?: string;
}

/** The task's item on GitHub, when it is an issue or pull request of an `owner/name` repository. */
function itemOf(task: Task): { repo: string; number: string } | undefined {
  if (!/^\d+$/.test(task.identity.id)) return undefined;
  const [owner, name] = task.identity.repo.split('/');
  if (!owner || !name) return undefined;
  return { repo: task.identity.repo, number: task.identity.id };
}

/** The labels the item carried when it was polled. */
function polledLabels(task: Task): string[] {
  const fields = ['issue_labels', 'pull_request_labels', 'item_labels'] as const;
  return fields.flatMap((f) => {
    const value = task.item.fields[f];
    return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
  });
}

const hasLabel = (labels: readonly string[], label: string): boolean =>
  labels.some((l) => l.toLowerCase() === label.toLowerCase());

export interface EscalationDeps {
  store: Store;
  /** The settings as they are now (a reload changes them). */
  settings: () => Settings;
  github: () => GitHubClient;
  log: Logger;
}

export type EscalationGate = 'run' | 'held';

/**
 * Escalation checks before a run (the engine calls this only when GitHub writes are configured;
 * budget.ts then decides as usual). Never throws: a read that fails leaves the local budget in charge.
 */
export class Escalation {
  #viewer: string | undefined;

  constructor(private readonly deps: EscalationDeps) {}

  /** `resumed`: the task comes from a saved session, so its labels are as old as the session. */
  async gate(automation: ResolvedAutomation, task: Task, resumed = false): Promise<EscalationGate> {
    try {
      return await this.#gate(automation, task, resumed);
    } catch (error) {
      this.deps.log.warn(
        { automation: automation.id, id: task.item.id, error: errorMessage(error) },
        'Could not read the item for its escalation; the local failure budget decides',
      );
      return 'run';
    }
  }

  async #gate(automation: ResolvedAutomation, task: Task, resumed: boolean): Promise<EscalationGate> {
    const { store, log } = this.deps;
    const settings = this.deps.settings();
    const item = itemOf(task);
    if (!item) return 'run';
    const label = escalatedLabel(settings, automation);
    const state = await store.getItemFailures(task.key);
    const fields = { automation: automation.id, id: task.item.id };
    if (label && state?.escalatedAt) {
      // Lifted once its label went out and a person took it off (read now: a resumed task's labels are old).
      const [sent] = await store.listWrites({ marker: escalateMarker(state.lastRunId, 'label') });
      if (sent?.status !== 'sent') return 'run';
      if (!hasLabel(await this.#labelsNow(item), label)) {
        await store.clearItemFailures(task.key);
        log.info({ ...fields, label }, 'The escalated label was removed: the escalation is lifted');
      }
      return 'run';
    }
    const labels = label && resumed ? await this.#labelsNow(item) : polledLabels(task);
    if (label && hasLabel(labels, label)) {
      log.info({ ...fields, label }, 'Escalated on GitHub: not run until a person removes the label');
      return 'held';
    }
    if (automation.config.result_comment === true) await this.#raiseFromMarkers(automation, task, item);
    return 'run';
  }

  async #labelsNow(item: { repo: string; number: string }): Promise<string[]> {
    const labels: RestLabel[] = await listIssueLabels(this.deps.github(), item.repo, item.number);
    return labels.map((l) => l.name);
  }

  /** Raises the local count to the highest one trusted result markers on the item give. */
  async #raiseFromMarkers(
    automation: ResolvedAutomation,
    task: Task,
    item: { repo: string; number: string },
  ): Promise<void> {
    const { store } = this.deps;
    const digest = itemTextDigest(task);
    const rules = this.#rules(automation);
    const viewer = await this.#viewerLogin();
    let remote = 0;
    for (let page = 1; ; page += 1) {
      const comments: RestComment[] = await listIssueComments(
        this.deps.github(),
        item.repo,
        item.number,
        page,
      );
      for (const c of comments) {
        if (!c.user || !c.body?.includes('<!-- curupira:')) continue;
        const own = c.user.login.toLowerCase() === viewer;
        const actor: Actor = {
          login: c.user.login,
          bot: c.user.type === 'Bot',
          ...(c.author_association ? { association: c.author_association } : {}),
        };
        if (!own && !isTrusted(actor, rules)) continue;
        // The latest count is the item's (a success says 0); an escalation, whose label a person
        // then removed (else the item is held before this), starts the count again.
        if (c.body.includes(`<!-- curupira:${escalateMarker('')}`)) remote = 0;
        const count = failuresIn(c.body, automation.id, digest, -1);
        if (count >= 0) remote = count;
      }
      if (comments.length < 100) break;
    }
    const state = await store.getItemFailures(task.key);
    const local = state && state.textDigest === digest ? state.failures : 0;
    if (remote <= local) return;
    await store.raiseItemFailures({
      taskKey: task.key,
      automationId: automation.id,
      itemKey: task.item.itemKey,
      runId: state?.lastRunId ?? '',
      textDigest: digest,
      failures: remote,
    });
    this.deps.log.info(
      { automation: automation.id, id: task.item.id, failures: remote },
      'Took the failure count from another runner’s result comment',
    );
  }

  /** Trusted authors and the association floor of the automation's screening settings (teams not resolved). */
  #rules(automation: ResolvedAutomation): TrustRules {
    const settings = this.deps.settings();
    const screening = resolveScreening(
      settings.execution.screening,
      automation.config.screening,
      settings.dir,
    );
    return {
      trustedAuthors: screening.trustedAuthors,
      minAuthorAssociation: screening.minAuthorAssociation,
      teams: new Map(),
    };
  }

  async #viewerLogin(): Promise<string> {
    this.#viewer ??= (await getAuthenticatedUser(this.deps.github())).login.toLowerCase();
    return this.#viewer;
  }

  /**
   * After a run was counted: when this run escalated the item, the label and the comment. Returns
   * the writes to queue (none when the run did not escalate or no label is set).
   */
  async writesAfter(automation: ResolvedAutomation, task: Task, run: RunRecord) {
    const state = await this.deps.store.getItemFailures(task.key);
    if (!state?.escalatedAt || state.lastRunId !== run.id || state.escalatedAt !== state.updatedAt) return [];
    return escalationWrites(this.deps.settings(), automation, state, run);
  }
}
