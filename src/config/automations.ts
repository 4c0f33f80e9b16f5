/**
 * `[automations.<id>]`: each table is validated by the schema of the trigger it names (or implies),
 * found in the trigger registry, then checked against the rest of the file: its repository and
 * profile exist, its prompt uses only the fields its trigger offers, and chains never loop.
 */
import type { z } from 'zod';
import type { Profile } from '../agents/schemas.js';
import { outcomeSet } from '../core/result-line.js';
import { analyzePrompt, formatPlaceholderList, unknownPlaceholders } from '../prompt/index.js';
import { IDENTIFIER_PATTERN } from '../triggers/common-schema.js';
import {
  acceptedTriggerNames,
  findTriggerDefinition,
  impliedTriggerName,
  triggerDefinitions,
} from '../triggers/registry.js';
import type { TriggerDefinition } from '../triggers/types.js';
import { type Collector, isTable, knownKeys, validate } from './issues.js';
import type { KeyPath } from './toml-locations.js';
import type { AgentDefaults, AnyAutomation, RepositorySettings, ResolvedAutomation } from './types.js';

export const COMMON_PROMPT_FIELDS = [
  'repo',
  'repository',
  'automation_id',
  'task_type',
  'task_number',
  'task_title',
  'task_body',
  'task_url',
] as const;

export interface AutomationContext {
  out: Collector;
  repositories: Record<string, RepositorySettings>;
  /** The aliases written in [repositories], valid or not; undefined when that table itself is broken. */
  repositoryAliases: ReadonlySet<string> | undefined;
  profiles: Record<string, Profile>;
  /** The profile names written in [agents.profiles], valid or not (or the default ones). */
  profileNames: readonly string[];
  defaults: AgentDefaults | undefined;
}

/** The trigger a table names in `trigger_type` (or implies); a problem is recorded when there is none. */
function triggerOf(
  table: Record<string, unknown>,
  path: KeyPath,
  out: Collector,
): TriggerDefinition | undefined {
  const triggerName = table.trigger_type ?? impliedTriggerName(table);
  if (typeof triggerName !== 'string') {
    out.add([...path, 'trigger_type'], 'trigger_type must be a string');
    return undefined;
  }
  const trigger = findTriggerDefinition(triggerName);
  if (!trigger) {
    out.add(
      [...path, 'trigger_type'],
      `unknown trigger type: ${triggerName} (accepted: ${acceptedTriggerNames().join(', ')})`,
    );
  }
  return trigger;
}

/** How a problem names a table of this trigger: `an issue trigger`, `a cron trigger`. */
function describeTrigger(trigger: TriggerDefinition): string {
  return trigger.describedAs ?? `a ${trigger.type} trigger`;
}

/**
 * For a table without `trigger_type` whose unknown placeholders are all another trigger's fields:
 * which trigger the table was taken for, and the line that makes it the other one.
 */
function otherTriggerHint(table: Record<string, unknown>, unknown: readonly string[]): string {
  if (table.trigger_type !== undefined) return '';
  const implied = findTriggerDefinition(impliedTriggerName(table));
  const other = triggerDefinitions().find(
    (d) => d !== implied && unknown.every((field) => d.promptFields.includes(field)),
  );
  if (!implied || !other) return '';
  return `; this table is ${describeTrigger(implied)} (it has no trigger_type); add trigger_type = "${other.type}"`;
}

/**
 * A table without `trigger_type` whose unknown keys are all another trigger's keys (`draft`,
 * `review` of a pull-request table taken for an issue trigger): one problem that says so.
 */
function hintOtherTriggerByKeys(
  table: Record<string, unknown>,
  trigger: TriggerDefinition,
  path: KeyPath,
  out: Collector,
): void {
  if (table.trigger_type !== undefined) return;
  const known = knownKeys(trigger.schema);
  const unknown = Object.keys(table).filter((key) => !known.includes(key));
  if (unknown.length === 0) return;
  const other = triggerDefinitions().find(
    (d) => d !== trigger && unknown.every((key) => knownKeys(d.schema).includes(key)),
  );
  if (!other) return;
  out.add(
    [...path, 'trigger_type'],
    `this table is ${describeTrigger(trigger)} (it has no trigger_type), but ${unknown.map((k) => `'${k}'`).join(', ')} ${unknown.length === 1 ? 'is a key' : 'are keys'} of ${other.type}: add trigger_type = "${other.type}"`,
  );
}

/** The prompt's syntax and placeholders; unknown placeholders and syntax errors are problems. */
function checkPrompt(
  id: string,
  table: Record<string, unknown>,
  promptFields: readonly string[],
  path: KeyPath,
  out: Collector,
): { promptSyntax: 'template' | 'jinja'; placeholders: string[] } {
  let promptSyntax: 'template' | 'jinja' = 'template';
  let placeholders: string[] = [];
  if (typeof table.prompt === 'string') {
    const setting =
      table.prompt_syntax === 'jinja' || table.prompt_syntax === 'template' ? table.prompt_syntax : 'auto';
    try {
      const analysis = analyzePrompt(table.prompt, setting);
      promptSyntax = analysis.syntax;
      placeholders = analysis.placeholders;
      const allowed = new Set<string>([...COMMON_PROMPT_FIELDS, ...promptFields, ...inputNames(table)]);
      const unknown = unknownPlaceholders(analysis, allowed);
      if (unknown.length > 0) {
        out.add(
          [...path, 'prompt'],
          `unsupported prompt placeholders for '${id}': ${formatPlaceholderList(unknown)}${otherTriggerHint(table, unknown)}`,
        );
      }
    } catch (error) {
      out.add([...path, 'prompt'], error instanceof Error ? error.message : String(error));
    }
  }
  return { promptSyntax, placeholders };
}

/** The input names a table declares (`inputs = { focus = "" }`), valid or not. */
function inputNames(table: Record<string, unknown>): string[] {
  return isTable(table.inputs) ? Object.keys(table.inputs) : [];
}

/**
 * The pipeline keys together (issue 32): handoffs name outcomes of the set, which needs `outcomes`;
 * an input never shadows a field the trigger or every automation gives the prompt.
 */
function checkPipeline(
  config: ResolvedAutomation['config'],
  promptFields: readonly string[],
  path: KeyPath,
  out: Collector,
): void {
  const handoffs = Object.keys(config.handoffs ?? {});
  if (handoffs.length > 0 && config.outcomes === undefined) {
    out.add(
      [...path, 'handoffs'],
      'handoffs act on the outcome the agent reports, which needs outcomes = [...] (the closed set it reports from)',
    );
  } else if (config.outcomes !== undefined) {
    const set = outcomeSet(config.outcomes);
    for (const outcome of handoffs)
      if (!set.includes(outcome))
        out.add(
          [...path, 'handoffs', outcome],
          `'${outcome}' is not an outcome of this automation (${set.join(', ')})`,
        );
  }
  const fields = new Set<string>([...COMMON_PROMPT_FIELDS, ...promptFields]);
  for (const name of Object.keys(config.inputs ?? {}))
    if (fields.has(name))
      out.add(
        [...path, 'inputs', name],
        `input '${name}' has the name of a prompt field: choose another name`,
      );
}

/** The repository and profile a table names, checked against the ones the file writes. */
function referencesOf(id: string, table: Record<string, unknown>, path: KeyPath, ctx: AutomationContext) {
  const { out } = ctx;
  const alias = table.repository;
  let repository: RepositorySettings | undefined;
  if (typeof alias === 'string' && IDENTIFIER_PATTERN.test(alias)) {
    repository = ctx.repositories[alias];
    // An alias whose table exists is not missing, even when its table or [settings] had errors.
    if (ctx.repositoryAliases && !ctx.repositoryAliases.has(alias)) {
      out.add([...path, 'repository'], `repository '${alias}' for automation '${id}' does not exist`);
    }
  }
  const additional = additionalRepositoriesOf(id, table, path, ctx);
  const profileName = typeof table.profile === 'string' ? table.profile : ctx.defaults?.profile;
  if (typeof table.profile === 'string' && !ctx.profileNames.includes(table.profile)) {
    out.add([...path, 'profile'], `profile '${table.profile}' for automation '${id}' does not exist`);
  }
  return { repository, additional, profileName };
}

/**
 * `repositories` (a multi-repository automation): every alias exists and is named once; the
 * primary `repository` may be among them. Returns the others, in the order written.
 */
function additionalRepositoriesOf(
  id: string,
  table: Record<string, unknown>,
  path: KeyPath,
  ctx: AutomationContext,
): RepositorySettings[] | undefined {
  const list = table.repositories;
  if (!Array.isArray(list)) return undefined;
  const { out } = ctx;
  const seen = new Set<string>();
  const found: RepositorySettings[] = [];
  list.forEach((alias, i) => {
    if (typeof alias !== 'string' || !IDENTIFIER_PATTERN.test(alias)) return;
    if (seen.has(alias)) {
      out.add([...path, 'repositories', i], `repository '${alias}' is named twice in repositories`);
      return;
    }
    seen.add(alias);
    if (ctx.repositoryAliases && !ctx.repositoryAliases.has(alias)) {
      out.add(
        [...path, 'repositories', i],
        `repository '${alias}' in repositories of automation '${id}' does not exist`,
      );
      return;
    }
    const settings = ctx.repositories[alias];
    if (settings && alias !== table.repository) found.push(settings);
  });
  return found;
}

/**
 * Keys that validate one by one but cannot work together: each pair is an error that says why,
 * never a setting that silently does nothing (issue 25).
 */
function checkDelivery(
  config: ResolvedAutomation['config'],
  trigger: TriggerDefinition,
  path: KeyPath,
  out: Collector,
): void {
  const fromHead = config.worktree_from === 'head';
  if (config.checkout === 'main' && config.deliver) {
    out.add(
      [...path, 'deliver'],
      `deliver = "${config.deliver}" pushes the run's own branch, but checkout = "main" works in the shared checkout on no branch of its own, so nothing would be delivered: remove deliver, or use checkout = "worktree"`,
    );
  }
  if (config.checkout === 'main' && fromHead) {
    out.add(
      [...path, 'worktree_from'],
      'worktree_from = "head" makes a worktree at the pull request\'s head, but checkout = "main" uses the shared checkout as it is: remove one of them',
    );
  }
  if (config.deliver === 'head' && trigger.githubItem !== 'pull-request') {
    const knowing = triggerDefinitions().filter((d) => d.githubItem === 'pull-request');
    out.add(
      [...path, 'deliver'],
      `deliver = "head" pushes back to a pull request's own branch: only ${knowing.map((d) => d.type).join(', ')} automations know that branch`,
    );
  } else if (config.deliver === 'head' && !fromHead) {
    out.add(
      [...path, 'deliver'],
      'deliver = "head" pushes back to the pull request\'s own branch, which needs worktree_from = "head" (a worktree at that branch\'s head)',
    );
  }
  if (config.deliver === 'head' && config.pr_base_branch !== undefined) {
    out.add(
      [...path, 'pr_base_branch'],
      'pr_base_branch is for deliver = "pr"; deliver = "head" opens no pull request',
    );
  }
}

/** What a multi-repository automation cannot combine with (each an error that says why). */
function checkRepositories(
  config: ResolvedAutomation['config'],
  additional: readonly RepositorySettings[],
  path: KeyPath,
  out: Collector,
): void {
  if (additional.length === 0) return;
  if (config.checkout === 'main')
    out.add(
      [...path, 'repositories'],
      'repositories gives each repository a worktree of the run, but checkout = "main" works in the shared checkout: remove one of them',
    );
  if (config.deliver === 'head')
    out.add(
      [...path, 'repositories'],
      'deliver = "head" pushes back to one pull request\'s branch; a multi-repository automation delivers with "pr" or "branch"',
    );
  if (config.deliver === 'pr')
    for (const repository of additional)
      if (repository.repo === undefined)
        out.add(
          [...path, 'repositories'],
          `deliver = "pr" opens a pull request in each repository: [repositories.${repository.alias}] needs repo = "owner/name"`,
        );
}

/** One automation table (`table` is already known to be a table with a valid id). */
export function loadAutomation(
  id: string,
  table: Record<string, unknown>,
  ctx: AutomationContext,
): ResolvedAutomation | undefined {
  const { out } = ctx;
  const path = ['automations', id];
  const trigger = triggerOf(table, path, out);
  if (!trigger) return undefined;
  // The trigger's schema is the table's type: this is where the two are joined (`trigger.schema`
  // is typed as any schema, since the registry holds every trigger's).
  const config = validate(trigger.schema as z.ZodType<ResolvedAutomation['config']>, table, path, out);
  if (!config) hintOtherTriggerByKeys(table, trigger, path, out);
  // Cross-checks that only need the raw table run even when other fields are invalid.
  const { repository, additional, profileName } = referencesOf(id, table, path, ctx);
  const { promptSyntax, placeholders } = checkPrompt(id, table, trigger.promptFields, path, out);
  const defaultTimezone = ctx.defaults?.timezone ?? 'UTC';
  const timezone = config
    ? trigger.resolveTimezone(config, {
        id,
        defaultTimezone,
        problem: (key, message) => out.add([...path, key], message),
      })
    : defaultTimezone;

  if (config) checkDelivery(config, trigger, path, out);
  if (config && additional) checkRepositories(config, additional, path, out);
  if (config) checkPipeline(config, trigger.promptFields, path, out);
  if (!config || !repository || !profileName) return undefined;
  const profile = ctx.profiles[profileName];
  if (!profile) return undefined;
  const automation: AnyAutomation = {
    id,
    triggerType: trigger.type,
    trigger,
    config,
    repository,
    ...(additional && additional.length > 0 ? { additionalRepositories: additional } : {}),
    profileName,
    profile,
    timezone,
    promptSyntax,
    placeholders,
  };
  // Where a trigger's type and its validated table are joined: `config` passed `trigger.schema`.
  return automation as ResolvedAutomation;
}

const CHAIN_ON = ['success', 'failure', 'any'];

/** `on = "<outcome>"` names an outcome its upstream declares (or `noop`, `skipped`). */
function checkChainOutcome(id: string, table: unknown, upstream: unknown, out: Collector): void {
  if (!isTable(table) || typeof table.on !== 'string' || CHAIN_ON.includes(table.on)) return;
  const declared =
    isTable(upstream) && Array.isArray(upstream.outcomes)
      ? upstream.outcomes.filter((o): o is string => typeof o === 'string')
      : undefined;
  const upstreamId = String(table.after);
  if (declared === undefined) {
    out.add(
      ['automations', id, 'on'],
      `on = "${table.on}" fires on an outcome '${upstreamId}' reports, but '${upstreamId}' declares no outcomes: add outcomes = [...] to it, or use on = "success", "failure" or "any"`,
    );
    return;
  }
  const set = outcomeSet(declared).filter((o) => o !== 'failed');
  if (!set.includes(table.on))
    out.add(
      ['automations', id, 'on'],
      `'${table.on}' is not an outcome of '${upstreamId}': use one of ${[...CHAIN_ON, ...set].join(', ')}`,
    );
}

/** A chain must name another automation, and following chain links must never come back. */
export function checkChains(tables: Record<string, unknown>, out: Collector): void {
  const upstreamOf = new Map<string, { upstream: string; key: string }>();
  for (const [id, table] of Object.entries(tables)) {
    if (!isTable(table)) continue;
    const name = table.trigger_type ?? impliedTriggerName(table);
    const key = typeof name === 'string' ? findTriggerDefinition(name)?.upstreamKey : undefined;
    const upstream = key === undefined ? undefined : table[key];
    if (key !== undefined && typeof upstream === 'string') upstreamOf.set(id, { upstream, key });
  }
  const reported = new Set<string>();
  for (const [id, { upstream, key }] of upstreamOf) {
    const path = ['automations', id, key];
    if (upstream === id) {
      out.add(path, `automation '${id}' cannot run after itself`);
      continue;
    }
    if (!(upstream in tables)) {
      out.add(path, `automation '${upstream}' (named by '${key}') does not exist`);
      continue;
    }
    const chain = [id];
    let current = upstream;
    while (upstreamOf.has(current) && !chain.includes(current)) {
      chain.push(current);
      current = upstreamOf.get(current)!.upstream;
    }
    checkChainOutcome(id, tables[id], tables[upstream], out);
    if (current === id) {
      const loop = [...chain, id];
      const members = [...loop].slice(0, -1).sort().join(',');
      if (reported.has(members)) continue;
      reported.add(members);
      out.add(path, `chained automations loop: ${loop.join(' → ')}`);
    }
  }
}
