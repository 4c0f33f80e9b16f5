/** Hook bodies several triggers share. */

import type { Task } from '../core/types.js';
import type { GitHubClient } from '../github/client.js';
import { SEARCH_COUNT } from '../github/operations.js';
import { probeIssueChanges } from '../github/rest.js';
import type { TriggerSource } from './source.js';
import type { DoctorContext, ItemRef, ResolveContext, TriggerCheck, WebhookPayload } from './types.js';

/** `upstreamRunId` of a trigger whose tasks follow no other run. */
export function noUpstreamRun(): undefined {
  return undefined;
}

/** A prompt field that should be text: the text, or null when it is empty or not a string. */
export function stringField(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : null;
}

/** `resolveTimezone` of a trigger with no timezone of its own and nothing more to check. */
export function defaultTimezone(_config: unknown, context: ResolveContext): string {
  return context.defaultTimezone;
}

/** The keys whose writes go to a run's issue or pull request (leases, state labels, result comments). */
const ITEM_WRITE_KEYS = [
  'lease_ttl',
  'status_label',
  'failed_label',
  'blocked_label',
  'result_comment',
] as const;

/**
 * A problem for each key of `config` that writes to a run's issue or pull request, for a trigger
 * whose runs have none to write to (`why` says so): such a key would validate and write nothing.
 */
export function refuseItemWrites(
  config: Partial<Record<(typeof ITEM_WRITE_KEYS)[number], unknown>>,
  context: ResolveContext,
  why: string,
): void {
  for (const key of ITEM_WRITE_KEYS) {
    const value = config[key];
    if (value === undefined || value === false) continue;
    context.problem(key, `${why}: ${key} would write nothing; remove it`);
  }
}

/** Doctor's line for a GitHub search: how many items match now. */
export async function searchCountCheck(
  query: string,
  postFiltered: boolean,
  context: DoctorContext,
): Promise<TriggerCheck> {
  const { data } = await context
    .github()
    .graphql<{ search: { issueCount: number } }>(SEARCH_COUNT, { query });
  const count = data.search.issueCount;
  return {
    ok: true,
    detail: `${count} match${count === 1 ? '' : 'es'}${postFiltered ? ' before post-filters' : ''} for ${query}`,
  };
}

/**
 * The change probe of one repository (src/engine/idle-gate.ts): its most recently updated issue or
 * pull request, which changes whenever any of them changes. A 304 to its ETag costs nothing.
 */
export function repositoryChanges(
  repo: string,
  github: () => GitHubClient,
): NonNullable<TriggerSource['probe']> {
  return (etag) => probeIssueChanges(github(), repo, etag);
}

function sameLogin(a: string | undefined, b: string | undefined): boolean {
  return a !== undefined && b !== undefined && a.toLowerCase() === b.toLowerCase();
}

/** A webhook delivery concerns an automation of one repository when it comes from that repository. */
export function sameRepository(repo: string | undefined, payload: WebhookPayload): boolean {
  return repo === undefined || sameLogin(repo, payload.repository?.full_name);
}

/** A webhook delivery concerns a project's automation when it comes from the project's owner (or names none). */
export function sameOwner(owner: string, payload: WebhookPayload): boolean {
  const login = payload.organization?.login;
  return login === undefined || sameLogin(owner, login);
}

/** A comment on a pull request arrives as `issue_comment` with `issue.pull_request` set. */
export function commentOnPullRequest(event: string, payload: WebhookPayload): boolean {
  return event === 'issue_comment' && Boolean(payload.issue?.pull_request);
}

/**
 * The hooks a tracker outside GitHub (Linear, Jira) shares: how its item is named, described and
 * closed by a pull request, and the check that a delivery names its GitHub repository.
 */
export function trackerHooks(service: string, prefix: string, authorField: string) {
  return {
    authorField,
    // The tracker links a pull request whose body says `Fixes ENG-7` (and whose branch names `eng-7`).
    closingReference: (task: Task) => `Fixes ${task.item.id}`,
    describeField(task: Task, field: string): string {
      const what = `${service} issue ${task.item.id}`;
      if (field === 'comments') return `comments on ${what} by trusted actors (each headed by its author)`;
      const author = stringField(task.item.fields[authorField]);
      const by = author && !field.endsWith('_labels') ? ` (written by ${author})` : '';
      return `${field.replace(new RegExp(`^(${prefix}|task)_`), '').replace(/_/g, ' ')} of ${what}${by}`;
    },
    itemName: (run: ItemRef) => `${service} ${run.itemId}`,
    upstreamRunId: noUpstreamRun,
    resolveTimezone(
      config: { deliver?: unknown; repo?: unknown; merged_state?: unknown },
      context: ResolveContext,
    ): string {
      if (config.deliver === 'pr' && config.repo === undefined)
        context.problem(
          'repo',
          'deliver = "pr" opens the pull request on GitHub: name the repository with repo = "owner/name"',
        );
      if (config.merged_state !== undefined && config.deliver !== 'pr')
        context.problem(
          'merged_state',
          'merged_state moves the issue when its pull requests merge: it needs deliver = "pr"',
        );
      return context.defaultTimezone;
    },
  };
}
