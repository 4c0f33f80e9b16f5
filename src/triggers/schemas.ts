/**
 * Every trigger's definition, by canonical type. Adding a trigger: a folder with `schema.ts` and
 * `index.ts`, one line here and one line in `registry.ts`.
 */
import { afterDefinition } from './after/schema.js';
import { cronDefinition } from './cron/schema.js';
import { githubIssuesDefinition } from './github-issues/schema.js';
import { githubProjectItemsDefinition } from './github-project-items/schema.js';
import { githubPullRequestsDefinition } from './github-pull-requests/schema.js';
import type { TriggerDefinition, TriggerType } from './types.js';

export const TRIGGER_DEFINITIONS: Readonly<Record<TriggerType, TriggerDefinition>> = {
  'github-issues': githubIssuesDefinition,
  'github-pull-requests': githubPullRequestsDefinition,
  'github-project-items': githubProjectItemsDefinition,
  cron: cronDefinition,
  after: afterDefinition,
};

/** Resolves a `trigger_type` as written (`plugins-py/github-issues`, `github-issues`, `cron`). */
export function findTriggerDefinition(name: string): TriggerDefinition | undefined {
  for (const definition of Object.values(TRIGGER_DEFINITIONS)) {
    if (definition.type === name || definition.aliases.includes(name)) return definition;
  }
  return undefined;
}

/** Every spelling `trigger_type` accepts. */
export function acceptedTriggerNames(): string[] {
  return Object.values(TRIGGER_DEFINITIONS).flatMap((d) => [...d.aliases, d.type]);
}
