/**
 * Opt-in write-back to Jira (docs/jira.md): with `result_comment = true`, one comment on the issue
 * after each run; with `result_state`, the issue moved to that status (by the transition leading
 * there) after a run that succeeded. Both go through the write queue (src/github/write-queue.ts):
 * queued durably before any request, retried on failure, and each idempotent:
 *
 * - the comment carries an entity property (`curupira`, holding the write's marker); before
 *   posting, the issue's newest comments are read with their properties for it, so a comment Jira
 *   took before an error or a kill is found, not posted again;
 * - the move reads the issue's status first and sends nothing when the issue is there already.
 *
 * With `merged_state`, the follower queues one more move when every pull request of the run's
 * delivery merged (`merged`), under a marker of the run: seen merged again, it queues nothing new.
 *
 * Without either key nothing here runs and no write request reaches Jira.
 */
import { redact } from '../../security/redact.js';
import type { ServiceWrite } from '../../store/types.js';
import { type ServiceKit, trackerWritesWanted } from '../service.js';
import type { WriteBackHook } from '../types.js';
import { markdownToAdf } from './adf.js';
import { createJiraClient } from './client.js';
import type { JiraResolved } from './schema.js';

/** Comments read before posting, newest first: a just-posted one is among them. */
const CHECKED_COMMENTS = 100;
/** The entity property a write-back comment carries. */
export const JIRA_COMMENT_PROPERTY = 'curupira';

interface CommentsPage {
  comments: { properties?: { key: string; value: unknown }[] }[];
}

interface TransitionsAnswer {
  transitions?: { id?: string; to?: { name?: string } }[];
}

function queueItem(key: string): { repo: string; number: number } {
  const match = /^(.+)-(\d+)$/.exec(key);
  return match ? { repo: `jira:${match[1]}`, number: Number(match[2]) } : { repo: `jira:${key}`, number: 0 };
}

export const jiraWriteBack: WriteBackHook<JiraResolved> = {
  wanted: (automation) => trackerWritesWanted(automation.config),

  merged(automation, run) {
    const state = automation.config.merged_state;
    if (state === undefined) return [];
    const write = { kind: 'service', service: 'jira', automation: automation.id, item: run.itemId } as const;
    return [
      {
        ...queueItem(run.itemId),
        runId: run.id,
        marker: `jira-merged run=${run.id}`,
        write: { ...write, action: 'move', state },
      },
    ];
  },

  writes(automation, task, run, result) {
    const { config } = automation;
    const key = task.item.id;
    const base = { ...queueItem(key), runId: run.id };
    const write = { kind: 'service', service: 'jira', automation: automation.id, item: key } as const;
    const out = [];
    if (config.result_comment === true)
      out.push({
        ...base,
        marker: `jira-result run=${run.id}`,
        write: { ...write, action: 'comment', body: result } as const,
      });
    if (config.result_state !== undefined && run.status === 'succeeded')
      out.push({
        ...base,
        marker: `jira-state run=${run.id}`,
        write: { ...write, action: 'move', state: config.result_state } as const,
      });
    return out;
  },

  async send(write: ServiceWrite, marker, automation, service: ServiceKit, signal) {
    const client = createJiraClient(automation.config, service);
    const issue = `/rest/api/3/issue/${encodeURIComponent(write.item)}`;
    if (write.action === 'comment') {
      const page = await client.get<CommentsPage>(
        `${issue}/comment?orderBy=-created&maxResults=${CHECKED_COMMENTS}&expand=properties`,
        signal,
      );
      const posted = page.comments.some((c) =>
        (c.properties ?? []).some(
          (p) => p.key === JIRA_COMMENT_PROPERTY && (p.value as { marker?: unknown })?.marker === marker,
        ),
      );
      if (posted) return;
      await client.post(
        `${issue}/comment`,
        {
          body: markdownToAdf(redact(write.body ?? '')),
          properties: [{ key: JIRA_COMMENT_PROPERTY, value: { marker } }],
        },
        signal,
      );
      return;
    }
    const name = write.state ?? '';
    const current = await client.get<{ fields?: { status?: { name?: string } } }>(
      `${issue}?fields=status`,
      signal,
    );
    if (current.fields?.status?.name === name) return;
    const answer = await client.get<TransitionsAnswer>(`${issue}/transitions`, signal);
    const transition = (answer.transitions ?? []).find((t) => t.to?.name === name);
    if (!transition?.id)
      throw new Error(`Jira issue ${write.item} has no transition to the status ${JSON.stringify(name)}`);
    await client.post(`${issue}/transitions`, { transition: { id: transition.id } }, signal);
  },
};
