/**
 * Opt-in write-back to Linear (docs/linear.md): with `result_comment = true`, one comment on the
 * issue after each run; with `result_state`, the issue moved to that workflow state after a run
 * that succeeded. Both go through the write queue (src/github/write-queue.ts): queued durably
 * before any request, retried on failure, and each idempotent, so a retry or a restart never
 * writes twice:
 *
 * - the comment is created with an id derived from its marker (Linear takes a client-chosen UUID),
 *   and the issue's newest comments are read for that id first;
 * - the move reads the issue's state first and sends nothing when it is there already (setting a
 *   state twice would be harmless, but a request that changes nothing is not sent).
 *
 * With `merged_state`, the follower queues one more move when every pull request of the run's
 * delivery merged (`merged`), under a marker of the run: seen merged again after a restart, it
 * queues nothing new.
 *
 * Without either key nothing here runs and no write request reaches Linear.
 */
import { createHash } from 'node:crypto';
import { redact } from '../../security/redact.js';
import type { ServiceWrite } from '../../store/types.js';
import { type ServiceKit, trackerWritesWanted } from '../service.js';
import type { WriteBackHook } from '../types.js';
import { createLinearClient } from './client.js';
import {
  LINEAR_COMMENT,
  LINEAR_COMMENT_IDS,
  LINEAR_MOVE,
  LINEAR_STATES,
  type LinearCommentIds,
  type LinearStatesAnswer,
} from './queries.js';
import type { LinearResolved } from './schema.js';

/** Comments read before posting (Linear's largest page): the newest ones hold a just-posted one. */
const CHECKED_COMMENTS = 250;

/** A UUID (version 4 layout) derived from the write's marker: the same write, the same comment id. */
export function commentId(automation: string, marker: string): string {
  const hex = createHash('sha256').update(`curupira\0${automation}\0${marker}`).digest('hex');
  const variant = ((Number.parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-${variant}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

export function linearResultMarker(runId: string): string {
  return `linear-result run=${runId}`;
}

export function linearStateMarker(runId: string): string {
  return `linear-state run=${runId}`;
}

/** `ENG-7` → the queue's item (`linear:ENG`, 7): one issue's writes keep their order. */
function queueItem(identifier: string): { repo: string; number: number } {
  const match = /^(.+)-(\d+)$/.exec(identifier);
  return match
    ? { repo: `linear:${match[1]}`, number: Number(match[2]) }
    : { repo: `linear:${identifier}`, number: 0 };
}

export function linearMergedMarker(runId: string): string {
  return `linear-merged run=${runId}`;
}

export const linearWriteBack: WriteBackHook<LinearResolved> = {
  wanted: (automation) => trackerWritesWanted(automation.config),

  merged(automation, run) {
    const state = automation.config.merged_state;
    if (state === undefined) return [];
    const write = {
      kind: 'service',
      service: 'linear',
      automation: automation.id,
      item: run.itemId,
    } as const;
    return [
      {
        ...queueItem(run.itemId),
        runId: run.id,
        marker: linearMergedMarker(run.id),
        write: { ...write, action: 'move', state },
      },
    ];
  },

  writes(automation, task, run, result) {
    const { config } = automation;
    const issue = task.item.id;
    const item = queueItem(issue);
    const base = { service: 'linear', automation: automation.id, item: issue } as const;
    const out = [];
    if (config.result_comment === true)
      out.push({
        ...item,
        runId: run.id,
        marker: linearResultMarker(run.id),
        write: { kind: 'service', ...base, action: 'comment', body: result } as const,
      });
    if (config.result_state !== undefined && run.status === 'succeeded')
      out.push({
        ...item,
        runId: run.id,
        marker: linearStateMarker(run.id),
        write: { kind: 'service', ...base, action: 'move', state: config.result_state } as const,
      });
    return out;
  },

  async send(write: ServiceWrite, marker, automation, service: ServiceKit, signal) {
    const client = createLinearClient(automation.config, service);
    const current = await client.request<LinearCommentIds>(
      LINEAR_COMMENT_IDS,
      { id: write.item, first: CHECKED_COMMENTS },
      signal,
    );
    if (write.action === 'comment') {
      const id = commentId(automation.id, marker);
      if (current.issue.comments.nodes.some((c) => c.id === id)) return;
      await client.request(
        LINEAR_COMMENT,
        { input: { id, issueId: write.item, body: redact(write.body ?? '') } },
        signal,
      );
      return;
    }
    const name = write.state ?? '';
    if (current.issue.state.name === name) return;
    const team = queueItem(write.item).repo.slice('linear:'.length);
    const states = await client.request<LinearStatesAnswer>(
      LINEAR_STATES,
      { filter: { name: { eq: name }, team: { key: { eq: team } } } },
      signal,
    );
    const state = states.workflowStates.nodes[0];
    if (!state) throw new Error(`Linear team ${team} has no workflow state named ${JSON.stringify(name)}`);
    await client.request(LINEAR_MOVE, { id: write.item, input: { stateId: state.id } }, signal);
  },
};
