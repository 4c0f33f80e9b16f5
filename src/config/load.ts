/**
 * The configuration pipeline: read → parse TOML → the `SettingsFile` schema, table by table →
 * defaults → cross-checks → `{ settings, warnings }`, or a `ConfigError` listing every problem with
 * its line and column. Reads one file; creates and writes nothing; environment variables never
 * override the file.
 *
 * Keys, their checks and defaults come from `SettingsFile` (src/config/schema.ts): a key or a
 * sub-table added there is validated, defaulted and documented with no change here. This module
 * adds only what a schema cannot say: messages for the record tables (`[repositories.<alias>]`…),
 * checks across tables, and resolved paths.
 */

import { readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { parse as parseToml, TomlError } from 'smol-toml';
import type { z } from 'zod';
import { isProvider, PROVIDERS, type Profile } from '../agents/schemas.js';
import { ConfigError } from '../core/errors.js';
import { isValidTimezone } from '../core/schedule.js';
import type { PriceOverrides } from '../cost/prices.js';
import type { PriceTable } from '../cost/schema.js';
import { withStepPresets } from '../pipeline/steps.js';
import { type AutomationContext, checkChains, loadAutomation } from './automations.js';
import {
  automationsFileOf,
  checkAgentWrittenTable,
  checkAutomationsFileKeys,
  readAutomationsFile,
} from './automations-file.js';
import {
  type Collector,
  checkKnownKeys,
  collector,
  describeType,
  isTable,
  sortIssues,
  validate,
} from './issues.js';
import { resolvePath } from './paths.js';
import { SettingsFile } from './schema.js';
import { screeningWarningsFor } from './screening.js';
import { type KeyPath, locateKeys, type TomlLocations } from './toml-locations.js';
import type {
  AgentDefaults,
  ExecutionSettings,
  LoadedSettings,
  RepositorySettings,
  ResolvedAutomation,
  Settings,
} from './types.js';

export { COMMON_PROMPT_FIELDS } from './automations.js';
export { formatPath } from './issues.js';
export { defaultConfigPath, expandHome, resolvePath } from './paths.js';

/** The file's tables, as the settings schema declares them. */
const FILE = SettingsFile.shape;
const AGENTS = FILE.agents.unwrap().shape;
const AUTO_MODEL_PROVIDERS = new Set(['cursor', 'gemini']);

/** Loads and validates a settings file. Throws `ConfigError` (every problem at once). */
export function loadSettings(file: string): LoadedSettings {
  const absolute = resolve(file);
  let text: string;
  try {
    if (statSync(absolute).isDirectory()) {
      throw new ConfigError(
        [{ path: '', message: `configuration file is a directory: ${absolute}` }],
        'config_file_not_found',
      );
    }
    text = readFileSync(absolute, 'utf8');
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    const message =
      code === 'ENOENT'
        ? `configuration file not found: ${absolute}`
        : `cannot read configuration file ${absolute}: ${code ?? String(error)}`;
    throw new ConfigError([{ path: '', message }], 'config_file_not_found');
  }
  const automationsFile = automationsFileOf(absolute);
  let extraText: string | undefined;
  try {
    extraText = readAutomationsFile(automationsFile);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ConfigError([
      {
        path: '',
        message: `cannot read the automations file ${automationsFile}: ${code ?? String(error)}`,
        file: automationsFile,
      },
    ]);
  }
  return loadSettingsFromText(
    text,
    absolute,
    extraText === undefined ? undefined : { text: extraText, file: automationsFile },
  );
}

/** The automations file's text (see config/automations-file.ts), when there is one. */
export interface AutomationsText {
  text: string;
  file: string;
}

/**
 * Loads settings from TOML text; `file` names the source in messages and anchors relative paths.
 * `extra` is the automations file beside it: its `[automations.<id>]` tables join the settings
 * file's, validated by the same pipeline, its problems located in it.
 */
export function loadSettingsFromText(text: string, file: string, extra?: AutomationsText): LoadedSettings {
  const absolute = resolve(file);
  const dir = dirname(absolute);
  const raw = parseSettingsToml(text, absolute);
  // `step = "triage"` fills in that step's keys under the table's own (src/pipeline/steps.ts).
  if (isTable(raw.automations)) raw.automations = withStepPresets(raw.automations);
  const locations = locateKeys(text);
  const out = collector(absolute, locations);
  const extraFile = extra ? resolve(extra.file) : undefined;
  const extraRaw = extra && extraFile ? parseSettingsToml(extra.text, extraFile) : undefined;
  const extraOut = extra && extraFile ? collector(extraFile, locateKeys(extra.text)) : undefined;

  checkKnownKeys(SettingsFile, raw, [], out);
  const execution = loadExecution(raw.settings, dir, out);
  const repositories = loadRepositories(raw.repositories, execution?.workspace_dir, dir, out);
  const { defaults, profiles, profileNames } = loadAgents(raw.agents, out);
  const assistant = loadAssistant(raw.assistant, out);
  const pricing = loadPricing(raw.pricing, out);
  const automations = loadAutomations(raw.automations, locations, {
    out,
    repositories,
    repositoryAliases: isTable(raw.repositories) ? new Set(Object.keys(raw.repositories)) : undefined,
    profiles,
    profileNames,
    defaults,
  });
  const extraTables = extraRaw && extraOut ? agentTables(extraRaw, raw.automations, extraOut) : {};
  if (extraOut && extraFile) {
    const extraLocations = locateKeys(extra!.text);
    const line = (id: string) => extraLocations.exact(['automations', id])?.line ?? 0;
    for (const id of Object.keys(extraTables).sort((a, b) => line(a) - line(b))) {
      const table = extraTables[id]!;
      checkAgentWrittenTable(id, table, extraOut);
      const resolved = loadAutomation(id, table, {
        out: extraOut,
        repositories,
        repositoryAliases: isTable(raw.repositories) ? new Set(Object.keys(raw.repositories)) : undefined,
        profiles,
        profileNames,
        defaults,
      });
      if (resolved) automations.push({ ...resolved, automationsFile: extraFile });
    }
  }
  // Cross-checks: chained automations name an existing automation and never loop (across both files).
  if (isTable(raw.automations)) {
    const both = { ...raw.automations, ...extraTables };
    const routed: Collector = {
      issues: out.issues,
      add: (path, message) =>
        (extraOut && typeof path[1] === 'string' && path[1] in extraTables ? extraOut : out).add(
          path,
          message,
        ),
    };
    checkChains(both, routed);
  }
  checkSharedPaths(repositories, out);
  const notifications = loadNotifications(raw.notifications, raw.automations, out);

  const issues = [...sortIssues(out.issues), ...sortIssues(extraOut?.issues ?? [])];
  if (issues.length > 0) throw new ConfigError(issues);
  if (!execution || !defaults)
    throw new ConfigError([{ path: '', message: 'invalid configuration', file: absolute }]);

  const settings: Settings = {
    file: absolute,
    dir,
    execution,
    repositories,
    agents: { defaults, profiles },
    automations,
    ...(assistant ? { assistant } : {}),
    notifications,
    ...(pricing ? { pricing: pricesOf(pricing) } : {}),
    ...(extraFile ? { automationsFile: extraFile } : { automationsFile: automationsFileOf(absolute) }),
  };
  return { settings, warnings: [...loadWarnings(settings), ...screeningWarningsFor(settings)] };
}

/**
 * The automations file's tables that may join the settings: its own key problems recorded, and an
 * id the settings file already uses refused (the settings file's table wins).
 */
function agentTables(
  raw: Record<string, unknown>,
  mainTables: unknown,
  out: Collector,
): Record<string, Record<string, unknown>> {
  checkAutomationsFileKeys(raw, out);
  const tables: Record<string, Record<string, unknown>> = {};
  if (!isTable(raw.automations)) return tables;
  const record = FILE.automations as unknown as z.ZodRecord<z.ZodType<string>, z.ZodType>;
  for (const [id, table] of Object.entries(raw.automations)) {
    const path = ['automations', id];
    if (!record.keyType.safeParse(id).success)
      out.add(path, 'automation id must contain only letters, digits, `_` and `-`');
    else if (!isTable(table)) out.add(path, `expected a table, got ${describeType(table)}`);
    else if (isTable(mainTables) && id in mainTables)
      out.add(path, `automation '${id}' is already defined in the settings file; choose another id`);
    else tables[id] = table;
  }
  return tables;
}

/** `[pricing]`: optional; each `"<provider>/<model>"` row checked by the schema. */
function loadPricing(table: unknown, out: Collector): Record<string, PriceTable> | undefined {
  if (table === undefined) return undefined;
  if (!isTable(table)) {
    out.add(['pricing'], `expected a table, got ${describeType(table)}`);
    return undefined;
  }
  return validate(FILE.pricing, table, ['pricing'], out);
}

/** `[pricing]` rows with the cached price defaulted to the input price. */
function pricesOf(table: Record<string, PriceTable>): PriceOverrides {
  return Object.fromEntries(
    Object.entries(table).map(([key, row]) => [
      key,
      { input: row.input, output: row.output, cached: row.cached ?? row.input },
    ]),
  );
}

function parseSettingsToml(text: string, absolute: string): Record<string, unknown> {
  try {
    return parseToml(text) as Record<string, unknown>;
  } catch (error) {
    if (error instanceof TomlError) {
      const firstLine = error.message.split('\n')[0]!.replace(/^Invalid TOML document: /, '');
      throw new ConfigError([
        {
          path: '',
          message: `invalid TOML: ${firstLine}`,
          file: absolute,
          line: error.line,
          column: error.column,
        },
      ]);
    }
    throw new ConfigError([{ path: '', message: `invalid TOML: ${String(error)}`, file: absolute }]);
  }
}

/** What a record table (`[repositories.<alias>]`…) says of itself, beyond its entries' schema. */
interface RecordRules {
  /** Said when the table is missing (and has no default) or empty. */
  required: string;
  /** Said of a key the record's key schema refuses. */
  badKey: string;
  /** An entry that is not a table is reported as such, before its schema sees it. */
  tablesOnly?: boolean;
  /** The order entries are visited in (default: as JavaScript lists the keys). */
  order?: (keys: string[]) => string[];
}

/**
 * Calls `each` for every entry of the record table `value` whose key `schema` (a `z.record`)
 * accepts; the record's own problems are recorded. Returns false when `value` is not a table.
 */
function forEachEntry(
  schema: z.ZodType,
  value: unknown,
  path: KeyPath,
  out: Collector,
  rules: RecordRules,
  each: (key: string, entry: unknown, path: KeyPath) => void,
): boolean {
  const record = schema as unknown as z.ZodRecord<z.ZodType<string>, z.ZodType>;
  if (value === undefined) out.add(path, rules.required);
  else if (!isTable(value)) out.add(path, `expected a table, got ${describeType(value)}`);
  if (!isTable(value)) return false;
  if (Object.keys(value).length === 0) out.add(path, rules.required);
  const keys = Object.keys(value);
  for (const key of rules.order ? rules.order(keys) : keys) {
    const entry = value[key];
    const entryPath = [...path, key];
    if (!record.keyType.safeParse(key).success) out.add(entryPath, rules.badKey);
    else if (rules.tablesOnly && !isTable(entry))
      out.add(entryPath, `expected a table, got ${describeType(entry)}`);
    else each(key, entry, entryPath);
  }
  return true;
}

/** `[settings]`: the schema's keys and defaults, a token never sent in clear, absolute paths. */
function loadExecution(table: unknown, dir: string, out: Collector): ExecutionSettings | undefined {
  const execution = validate(FILE.settings, table, ['settings'], out);
  if (!execution) return undefined;
  const problem = cleartextApiUrl(execution.github.api_url);
  if (problem) out.add(['settings', 'github', 'api_url'], problem);
  return {
    ...execution,
    workspace_dir: resolvePath(execution.workspace_dir, dir),
    state_db_path: resolvePath(execution.state_db_path, dir),
  };
}

/** `[repositories]`; checkout paths need `workspace_dir`, so a broken `[settings]` leaves them out. */
function loadRepositories(
  tables: unknown,
  workspaceDir: string | undefined,
  dir: string,
  out: Collector,
): Record<string, RepositorySettings> {
  const repositories: Record<string, RepositorySettings> = {};
  const rules = {
    required: 'at least one [repositories.<alias>] table is required',
    badKey: 'repository alias must contain only letters, digits, `_` and `-`',
  };
  forEachEntry(FILE.repositories, tables, ['repositories'], out, rules, (alias, table, path) => {
    const parsed = validate(FILE.repositories.valueType, table, path, out);
    if (!parsed || workspaceDir === undefined) return;
    const checkout = parsed.path === undefined ? undefined : resolvePath(parsed.path, dir);
    repositories[alias] = {
      alias,
      ...parsed,
      ...(checkout === undefined ? {} : { path: checkout }),
      checkoutPath: checkout ?? join(workspaceDir, alias),
    };
  });
  return repositories;
}

interface LoadedAgents {
  defaults: AgentDefaults | undefined;
  profiles: Record<string, Profile>;
  /** The profile names written (valid or not), or the default profiles' names. */
  profileNames: string[];
}

/** `[agents]`: the defaults and the profiles (the schema's default profiles when none is written). */
function loadAgents(table: unknown, out: Collector): LoadedAgents {
  const agents = table ?? {};
  const profiles: Record<string, Profile> = {};
  const defaultProfiles = AGENTS.profiles.def.defaultValue as Record<string, unknown>;
  if (!isTable(agents)) {
    out.add(['agents'], `expected a table, got ${describeType(agents)}`);
    return { defaults: undefined, profiles, profileNames: Object.keys(defaultProfiles) };
  }
  checkKnownKeys(FILE.agents, agents, ['agents'], out);
  const defaults = validate(AGENTS.defaults, agents.defaults, ['agents', 'defaults'], out);
  if (defaults && !isValidTimezone(defaults.timezone)) {
    out.add(['agents', 'defaults', 'timezone'], `unknown timezone: ${defaults.timezone}`);
  }
  const tables = agents.profiles ?? defaultProfiles;
  const rules = {
    required: 'at least one profile is required',
    badKey: 'profile name must contain only letters, digits, `_` and `-`',
    tablesOnly: true,
  };
  const record = AGENTS.profiles.unwrap();
  forEachEntry(record, tables, ['agents', 'profiles'], out, rules, (name, profile, path) => {
    const parsed = validate(record.valueType as unknown as z.ZodType<Profile>, profile, path, out);
    if (parsed) profiles[name] = parsed;
  });
  if (defaults && isTable(tables) && Object.keys(tables).length > 0 && !(defaults.profile in tables)) {
    out.add(['agents', 'defaults', 'profile'], `default profile does not exist: ${defaults.profile}`);
  }
  return { defaults, profiles, profileNames: Object.keys(isTable(tables) ? tables : defaultProfiles) };
}

function loadAssistant(table: unknown, out: Collector): Settings['assistant'] {
  if (table === undefined) return undefined;
  const assistant = validate(FILE.assistant, table, ['assistant'], out);
  if (assistant?.agent !== undefined && !isProvider(assistant.agent)) {
    out.add(
      ['assistant', 'agent'],
      `assistant.agent '${assistant.agent}' is not a registered coding agent provider; registered providers: ${PROVIDERS.join(', ')}`,
    );
  } else if (
    assistant?.model === 'auto' &&
    assistant.agent !== undefined &&
    !AUTO_MODEL_PROVIDERS.has(assistant.agent)
  ) {
    out.add(['assistant', 'model'], `model "auto" is not supported by ${assistant.agent}`);
  }
  return assistant;
}

/** `[automations]`, in file order, even for ids JavaScript would sort first (all-digit keys). */
function loadAutomations(
  tables: unknown,
  locations: TomlLocations,
  ctx: AutomationContext,
): ResolvedAutomation[] {
  const automations: ResolvedAutomation[] = [];
  const line = (id: string) => locations.exact(['automations', id])?.line ?? 0;
  const rules = {
    required: 'at least one [automations.<id>] table is required',
    badKey: 'automation id must contain only letters, digits, `_` and `-`',
    tablesOnly: true,
    order: (ids: string[]) => ids.sort((a, b) => line(a) - line(b)),
  };
  forEachEntry(FILE.automations, tables, ['automations'], ctx.out, rules, (id, table) => {
    const resolved = loadAutomation(id, table as Record<string, unknown>, ctx);
    if (resolved) automations.push(resolved);
  });
  return automations;
}

/** `[notifications.<name>]`: each target's table, and the automations its filter names exist. */
function loadNotifications(
  tables: unknown,
  automationTables: unknown,
  out: Collector,
): Settings['notifications'] {
  const targets: Settings['notifications'] = {};
  if (tables === undefined) return targets;
  const record = FILE.notifications.unwrap();
  const rules = {
    required: 'at least one [notifications.<name>] table is required when [notifications] is written',
    badKey: 'notification name must contain only letters, digits, `_` and `-`',
    tablesOnly: true,
  };
  const ids = isTable(automationTables) ? Object.keys(automationTables) : undefined;
  forEachEntry(record, tables, ['notifications'], out, rules, (name, table, path) => {
    const parsed = validate(record.valueType, table, path, out);
    if (!parsed) return;
    parsed.automations?.forEach((id, index) => {
      if (ids && !ids.includes(id))
        out.add(
          [...path, 'automations', index],
          `automation '${id}' for notification '${name}' does not exist`,
        );
    });
    targets[name] = parsed;
  });
  return targets;
}

/** Two aliases never share a workspace path. */
function checkSharedPaths(repositories: Record<string, RepositorySettings>, out: Collector): void {
  const byPath = new Map<string, string>();
  for (const repository of Object.values(repositories)) {
    const other = byPath.get(repository.checkoutPath);
    if (other !== undefined) {
      out.add(
        ['repositories', repository.alias, repository.path === undefined ? 'remote' : 'path'],
        `different repositories cannot share a workspace path ('${other}' and '${repository.alias}' both use ${repository.checkoutPath})`,
      );
    } else byPath.set(repository.checkoutPath, repository.alias);
  }
}

function loadWarnings(settings: Settings): string[] {
  const warnings: string[] = [];
  const automations = settings.automations;
  for (const automation of automations) {
    if (automation.config.checkout === 'main' && automation.repository.path === undefined) {
      warnings.push(
        `automations.${automation.id}: checkout = "main" runs in ${automation.repository.checkoutPath}, cloned by curupira; set repositories.${automation.repository.alias}.path to use an existing checkout`,
      );
    }
    // Issue 26: opting out of the sandbox where strangers write the text is allowed, and said.
    const sandbox =
      automation.config.sandbox ?? automation.profile.sandbox_mode ?? settings.execution.sandbox;
    if (sandbox === 'none' && automation.trigger.untrustedFields.length > 0) {
      const from = automation.config.sandbox
        ? 'the automation'
        : automation.profile.sandbox_mode
          ? `profile '${automation.profileName}'`
          : '[settings] sandbox';
      warnings.push(
        `automations.${automation.id}: sandbox = "none" (${from}) runs the agent on text strangers write with everything curupira's user can reach (keys, tokens, other worktrees, the network); see docs/sandbox.md`,
      );
    }
  }
  return warnings;
}

const LOOPBACK_HOSTS = new Set(['localhost', '[::1]']);

/**
 * The GitHub token travels with every request: plain `http://` is allowed only to this machine
 * (the simulator); anywhere else it must be `https://`.
 */
export function cleartextApiUrl(apiUrl: string): string | undefined {
  let url: URL;
  try {
    url = new URL(apiUrl);
  } catch {
    return undefined; // the schema's own check reports a malformed URL
  }
  if (url.protocol !== 'http:') return undefined;
  const host = url.hostname.toLowerCase();
  if (LOOPBACK_HOSTS.has(host) || host.endsWith('.localhost') || /^127\.\d+\.\d+\.\d+$/.test(host))
    return undefined;
  return `http:// sends the GitHub token unencrypted to ${host}; use https://${url.host}${url.pathname === '/' ? '' : url.pathname} (plain http is accepted only for localhost, 127.0.0.1 or [::1], e.g. the simulator)`;
}
