/**
 * The configuration pipeline: read → parse TOML → strict schemas → defaults → cross-checks →
 * `{ settings, warnings }`, or a `ConfigError` listing every problem with its line and column.
 * Reads one file; creates and writes nothing; environment variables never override the file.
 */
import { readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { parse as parseToml, TomlError } from 'smol-toml';
import type { z } from 'zod';
import { isProvider, PROFILE_SCHEMAS, PROVIDERS, type Profile } from '../agents/schemas.js';
import { ConfigError, type ConfigIssue } from '../core/errors.js';
import { analyzePrompt, formatPlaceholderList, unknownPlaceholders } from '../prompt/index.js';
import { IDENTIFIER_PATTERN } from '../triggers/common-schema.js';
import { isValidTimezone } from '../triggers/cron/schedule.js';
import { acceptedTriggerNames, findTriggerDefinition, impliedTriggerName } from '../triggers/registry.js';
import {
  AgentDefaultsTable,
  AgentsTable,
  AssistantTable,
  RepositoryTable,
  SettingsFile,
  SettingsTable,
} from './schema.js';
import { screeningWarningsFor } from './screening.js';
import { type KeyPath, locateKeys, type TomlLocations } from './toml-locations.js';
import type {
  AnyAutomation,
  LoadedSettings,
  RepositorySettings,
  ResolvedAutomation,
  Settings,
} from './types.js';

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

/** The file's top-level tables and `[agents]`' keys, as the settings schema declares them. */
const TOP_LEVEL_KEYS: readonly string[] = Object.keys(SettingsFile.shape);
const AGENTS_KEYS: readonly string[] = Object.keys(AgentsTable.shape);
const AUTO_MODEL_PROVIDERS = new Set(['cursor', 'gemini']);

export function defaultConfigPath(): string {
  return join(homedir(), '.curupira', 'settings.toml');
}

export function expandHome(path: string): string {
  if (path === '~') return homedir();
  if (path.startsWith('~/')) return join(homedir(), path.slice(2));
  return path;
}

/** `~` expands; a relative path resolves against the settings file's folder. */
export function resolvePath(path: string, baseDir: string): string {
  const expanded = expandHome(path);
  return isAbsolute(expanded) ? resolve(expanded) : resolve(baseDir, expanded);
}

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
  return loadSettingsFromText(text, absolute);
}

function describeType(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (value instanceof Date) return 'a date';
  if (typeof value === 'object') return 'a table';
  if (typeof value === 'number') return Number.isInteger(value) ? 'an integer' : 'a float';
  return `a ${typeof value}`;
}

const TYPE_NAMES: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'a boolean (true or false)',
  array: 'an array',
  object: 'a table',
  date: 'a date',
  record: 'a table',
};

function closest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    const d = editDistance(word.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      bestDistance = d;
      best = candidate;
    }
  }
  return bestDistance <= Math.max(1, Math.floor(word.length / 3)) ? best : undefined;
}

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    let previous = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j += 1) {
      const current = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, previous + (a[i - 1] === b[j - 1] ? 0 : 1));
      previous = current;
    }
  }
  return row[b.length]!;
}

function knownKeys(schema: z.ZodType): string[] {
  const shape = (schema as unknown as { shape?: Record<string, unknown> }).shape;
  return shape ? Object.keys(shape) : [];
}

/** Turns zod's issues into our messages, at `prefix` + the issue's path. */
function convertIssues(
  error: z.ZodError,
  prefix: KeyPath,
  schema: z.ZodType,
  source: unknown,
): Omit<ConfigIssue, 'file'>[] {
  const out: Omit<ConfigIssue, 'file'>[] = [];
  for (const issue of error.issues) {
    const path = [...prefix, ...(issue.path as (string | number)[])];
    switch (issue.code) {
      case 'unrecognized_keys': {
        const table = valueAt(source, issue.path as (string | number)[]);
        const keys = knownKeys(schemaAt(schema, issue.path as (string | number)[]) ?? schema);
        for (const key of issue.keys) {
          const suggestion = closest(key, keys);
          out.push({
            path: formatPath([...path, key]),
            message: `unknown key${suggestion ? ` (did you mean '${suggestion}'?)` : ''}`,
          });
        }
        void table;
        break;
      }
      case 'invalid_type': {
        const input = valueAt(source, issue.path as (string | number)[]);
        out.push({
          path: formatPath(path),
          message:
            input === undefined
              ? 'is required'
              : `expected ${TYPE_NAMES[issue.expected] ?? issue.expected}, got ${describeType(input)}${
                  typeof input === 'string' || typeof input === 'number' ? ` (${JSON.stringify(input)})` : ''
                }`,
        });
        break;
      }
      case 'invalid_value': {
        const input = valueAt(source, issue.path as (string | number)[]);
        out.push({
          path: formatPath(path),
          message: `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}${
            input === undefined ? '' : `, got ${JSON.stringify(input)}`
          }`,
        });
        break;
      }
      case 'too_small': {
        const min = Number(issue.minimum);
        let message: string;
        if (issue.origin === 'string') message = 'must not be empty';
        else if (issue.origin === 'array')
          message = issue.message.startsWith('Too small') ? `must list at least ${min}` : issue.message;
        else
          message = issue.message.startsWith('Too small')
            ? `must be ${issue.inclusive ? 'at least' : 'greater than'} ${min}`
            : issue.message;
        out.push({ path: formatPath(path), message: `${message}${gotSuffix(source, issue.path)}` });
        break;
      }
      case 'too_big': {
        const max = Number(issue.maximum);
        const message = issue.message.startsWith('Too big')
          ? `must be ${issue.inclusive ? 'at most' : 'less than'} ${max}`
          : issue.message;
        out.push({ path: formatPath(path), message: `${message}${gotSuffix(source, issue.path)}` });
        break;
      }
      case 'invalid_union': {
        const input = valueAt(source, issue.path as (string | number)[]);
        out.push({ path: formatPath(path), message: `has an invalid value: ${describeType(input)}` });
        break;
      }
      case 'invalid_key': {
        out.push({ path: formatPath(path), message: 'name must contain only letters, digits, `_` and `-`' });
        break;
      }
      case 'invalid_format': {
        const message = issue.message.startsWith('Invalid')
          ? `has an invalid format (${issue.format})`
          : issue.message;
        out.push({ path: formatPath(path), message });
        break;
      }
      default:
        out.push({ path: formatPath(path), message: issue.message });
    }
  }
  return out;
}

function gotSuffix(source: unknown, path: PropertyKey[]): string {
  const value = valueAt(source, path as (string | number)[]);
  return typeof value === 'number' ? `, got ${value}` : '';
}

function valueAt(source: unknown, path: readonly (string | number)[]): unknown {
  let current = source;
  for (const part of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string | number, unknown>)[part];
  }
  return current;
}

function schemaAt(schema: z.ZodType, path: readonly (string | number)[]): z.ZodType | undefined {
  let current: z.ZodType | undefined = schema;
  for (const part of path) {
    current = unwrap(current);
    const shape = (current as unknown as { shape?: Record<string, z.ZodType> } | undefined)?.shape;
    if (shape && typeof part === 'string') {
      current = shape[part];
      continue;
    }
    return undefined;
  }
  return unwrap(current);
}

function unwrap(schema: z.ZodType | undefined): z.ZodType | undefined {
  let current = schema as unknown as { def?: { type?: string; innerType?: z.ZodType } } | undefined;
  for (let n = 0; n < 5 && current?.def?.innerType; n += 1) {
    current = current.def.innerType as unknown as typeof current;
  }
  return current as unknown as z.ZodType | undefined;
}

export function formatPath(path: KeyPath): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else if (/^[A-Za-z0-9_-]+$/.test(part)) out += out ? `.${part}` : part;
    else out += `${out ? '.' : ''}${JSON.stringify(part)}`;
  }
  return out;
}

interface Collector {
  add(path: KeyPath, message: string): void;
  readonly issues: ConfigIssue[];
}

function collector(file: string, locations: TomlLocations): Collector {
  const issues: ConfigIssue[] = [];
  const seen = new Set<string>();
  function push(path: KeyPath, message: string): void {
    const key = `${formatPath(path)}\u0000${message}`;
    if (seen.has(key)) return;
    seen.add(key);
    const position = locations.find(path);
    issues.push({ path: formatPath(path), message, file, line: position?.line, column: position?.column });
  }
  return {
    issues,
    add: push,
  };
}

function isTable(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && !(value instanceof Date);
}

/** Validates one zod schema at `prefix`, recording issues; returns the parsed value or undefined. */
function validate<T>(schema: z.ZodType<T>, value: unknown, prefix: KeyPath, out: Collector): T | undefined {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const converted = convertIssues(result.error, prefix, schema, value);
  for (const issue of converted) {
    out.add(parsePath(issue.path), issue.message);
  }
  return undefined;
}

/** Inverse of formatPath for the paths we produce. */
function parsePath(text: string): KeyPath {
  const parts: (string | number)[] = [];
  const pattern = /"((?:[^"\\]|\\.)*)"|\[(\d+)\]|([A-Za-z0-9_-]+)/g;
  for (const match of text.matchAll(pattern)) {
    if (match[1] !== undefined) parts.push(JSON.parse(`"${match[1]}"`) as string);
    else if (match[2] !== undefined) parts.push(Number(match[2]));
    else if (match[3] !== undefined) parts.push(match[3]);
  }
  return parts;
}

/** Loads settings from TOML text; `file` names the source in messages and anchors relative paths. */
export function loadSettingsFromText(text: string, file: string): LoadedSettings {
  const absolute = resolve(file);
  const dir = dirname(absolute);
  const raw = parseSettingsToml(text, absolute);
  const locations = locateKeys(text);
  const out = collector(absolute, locations);

  for (const key of Object.keys(raw)) {
    if (!TOP_LEVEL_KEYS.includes(key)) {
      const suggestion = closest(key, TOP_LEVEL_KEYS);
      out.add([key], `unknown key${suggestion ? ` (did you mean '${suggestion}'?)` : ''}`);
    }
  }

  // [settings]
  const execution = validate(SettingsTable, raw.settings ?? {}, ['settings'], out);
  if (execution) {
    const problem = cleartextApiUrl(execution.github.api_url);
    if (problem) out.add(['settings', 'github', 'api_url'], problem);
  }
  const repositories = loadRepositories(raw.repositories, execution?.workspace_dir, dir, out);
  const { defaults, profiles } = loadAgents(raw.agents, out);
  const assistant = loadAssistant(raw.assistant, out);
  const automations = loadAutomations(raw, locations, { out, repositories, profiles, defaults });
  // Cross-check: chained automations name an existing automation and never loop.
  if (isTable(raw.automations)) checkChains(raw.automations, out);
  checkSharedPaths(repositories, out);

  if (out.issues.length > 0) throw new ConfigError(sortIssues(out.issues));
  if (!execution || !defaults)
    throw new ConfigError([{ path: '', message: 'invalid configuration', file: absolute }]);

  const settings: Settings = {
    file: absolute,
    dir,
    execution: {
      ...execution,
      workspace_dir: resolvePath(execution.workspace_dir, dir),
      state_db_path: resolvePath(execution.state_db_path, dir),
    } as Settings['execution'],
    repositories,
    agents: { defaults, profiles },
    automations,
    ...(assistant ? { assistant } : {}),
  };
  return { settings, warnings: [...loadWarnings(settings), ...screeningWarningsFor(settings)] };
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

/** `[repositories]`; checkout paths need `workspace_dir`, so a broken `[settings]` leaves them out. */
function loadRepositories(
  repoTables: unknown,
  workspaceDir: string | undefined,
  dir: string,
  out: Collector,
): Record<string, RepositorySettings> {
  const repositories: Record<string, RepositorySettings> = {};
  if (repoTables === undefined)
    out.add(['repositories'], 'at least one [repositories.<alias>] table is required');
  else if (!isTable(repoTables))
    out.add(['repositories'], `expected a table, got ${describeType(repoTables)}`);
  else {
    if (Object.keys(repoTables).length === 0)
      out.add(['repositories'], 'at least one [repositories.<alias>] table is required');
    for (const [alias, table] of Object.entries(repoTables)) {
      if (!IDENTIFIER_PATTERN.test(alias)) {
        out.add(['repositories', alias], 'repository alias must contain only letters, digits, `_` and `-`');
        continue;
      }
      const parsed = validate(RepositoryTable, table, ['repositories', alias], out);
      if (!parsed || workspaceDir === undefined) continue;
      const path = parsed.path === undefined ? undefined : resolvePath(parsed.path, dir);
      repositories[alias] = {
        alias,
        remote: parsed.remote,
        ...(path === undefined ? {} : { path }),
        ...(parsed.setup_script === undefined ? {} : { setup_script: parsed.setup_script }),
        checkoutPath: path ?? join(resolvePath(workspaceDir, dir), alias),
      };
    }
  }

  return repositories;
}

/** `[agents]`: the defaults and the profiles (one `opencode` profile when none is written). */
function loadAgents(
  agentsTable: unknown,
  out: Collector,
): { defaults: { profile: string; timezone: string } | undefined; profiles: Record<string, Profile> } {
  const agentsRaw = agentsTable ?? {};
  let defaults: { profile: string; timezone: string } | undefined;
  const profiles: Record<string, Profile> = {};
  if (!isTable(agentsRaw)) out.add(['agents'], `expected a table, got ${describeType(agentsRaw)}`);
  else {
    for (const key of Object.keys(agentsRaw)) {
      if (!AGENTS_KEYS.includes(key)) {
        const suggestion = closest(key, AGENTS_KEYS);
        out.add(['agents', key], `unknown key${suggestion ? ` (did you mean '${suggestion}'?)` : ''}`);
      }
    }
    defaults = validate(AgentDefaultsTable, agentsRaw.defaults ?? {}, ['agents', 'defaults'], out);
    if (defaults && !isValidTimezone(defaults.timezone)) {
      out.add(['agents', 'defaults', 'timezone'], `unknown timezone: ${defaults.timezone}`);
    }
    const profileTables = agentsRaw.profiles ?? { opencode: { provider: 'opencode' } };
    if (!isTable(profileTables))
      out.add(['agents', 'profiles'], `expected a table, got ${describeType(profileTables)}`);
    else {
      if (Object.keys(profileTables).length === 0)
        out.add(['agents', 'profiles'], 'at least one profile is required');
      for (const [name, table] of Object.entries(profileTables)) {
        const path = ['agents', 'profiles', name];
        if (!IDENTIFIER_PATTERN.test(name)) {
          out.add(path, 'profile name must contain only letters, digits, `_` and `-`');
          continue;
        }
        if (!isTable(table)) {
          out.add(path, `expected a table, got ${describeType(table)}`);
          continue;
        }
        const provider = table.provider;
        if (provider === undefined) {
          out.add([...path, 'provider'], `is required (one of ${PROVIDERS.join(', ')})`);
          continue;
        }
        if (!isProvider(provider)) {
          out.add(
            [...path, 'provider'],
            `unknown coding agent provider: ${typeof provider === 'string' ? provider : describeType(provider)} (registered providers: ${PROVIDERS.join(', ')})`,
          );
          continue;
        }
        const parsed = validate(PROFILE_SCHEMAS[provider] as z.ZodType<Profile>, table, path, out);
        if (parsed) profiles[name] = parsed;
      }
      if (defaults && Object.keys(profileTables).length > 0 && !(defaults.profile in profileTables)) {
        out.add(['agents', 'defaults', 'profile'], `default profile does not exist: ${defaults.profile}`);
      }
    }
  }

  return { defaults, profiles };
}

function loadAssistant(table: unknown, out: Collector): Settings['assistant'] {
  if (table === undefined) return undefined;
  const assistant = validate(AssistantTable, table, ['assistant'], out);
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

function loadAutomations(
  raw: Record<string, unknown>,
  locations: TomlLocations,
  parts: Pick<AutomationContext, 'out' | 'repositories' | 'profiles' | 'defaults'>,
): ResolvedAutomation[] {
  const { out } = parts;
  const repoTables = raw.repositories;
  const agentsRaw = raw.agents ?? {};
  const automations: ResolvedAutomation[] = [];
  const automationTables = raw.automations;
  if (automationTables === undefined)
    out.add(['automations'], 'at least one [automations.<id>] table is required');
  else if (!isTable(automationTables))
    out.add(['automations'], `expected a table, got ${describeType(automationTables)}`);
  else {
    if (Object.keys(automationTables).length === 0)
      out.add(['automations'], 'at least one [automations.<id>] table is required');
    // File order, even for ids JavaScript would sort first (all-digit keys).
    const ids = Object.keys(automationTables).sort(
      (a, b) =>
        (locations.exact(['automations', a])?.line ?? 0) - (locations.exact(['automations', b])?.line ?? 0),
    );
    for (const id of ids) {
      const resolved = loadAutomation(id, automationTables[id], {
        ...parts,
        repositoryAliases: isTable(repoTables) ? new Set(Object.keys(repoTables)) : undefined,
        profileNames:
          isTable(agentsRaw) && isTable(agentsRaw.profiles) ? Object.keys(agentsRaw.profiles) : ['opencode'],
      });
      if (resolved) automations.push(resolved);
    }
  }

  return automations;
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
  const execution = settings.execution;
  const automations = settings.automations;
  if (execution.otlp_endpoint !== undefined) {
    warnings.push(
      'settings.otlp_endpoint: accepted, but curupira does not export traces yet; nothing is sent there',
    );
  }
  for (const automation of automations) {
    if (automation.config.checkout === 'main' && automation.repository.path === undefined) {
      warnings.push(
        `automations.${automation.id}: checkout = "main" runs in ${automation.repository.checkoutPath}, cloned by curupira; set repositories.${automation.repository.alias}.path to use an existing checkout`,
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

/** A chain must name another automation, and following chain links must never come back. */
function checkChains(tables: Record<string, unknown>, out: Collector): void {
  const upstreamOf = new Map<string, string>();
  for (const [id, table] of Object.entries(tables)) {
    if (!isTable(table)) continue;
    const name = table.trigger_type ?? impliedTriggerName(table);
    const upstream =
      typeof name === 'string' ? findTriggerDefinition(name)?.upstreamAutomation?.(table) : undefined;
    if (upstream !== undefined) upstreamOf.set(id, upstream);
  }
  const reported = new Set<string>();
  for (const [id, upstream] of upstreamOf) {
    const path = ['automations', id, 'after'];
    if (upstream === id) {
      out.add(path, `automation '${id}' cannot run after itself`);
      continue;
    }
    if (!(upstream in tables)) {
      out.add(path, `automation '${upstream}' (named by 'after') does not exist`);
      continue;
    }
    const chain = [id];
    let current = upstream;
    while (upstreamOf.has(current) && !chain.includes(current)) {
      chain.push(current);
      current = upstreamOf.get(current)!;
    }
    if (current === id) {
      const loop = [...chain, id];
      const key = [...loop].slice(0, -1).sort().join(',');
      if (reported.has(key)) continue;
      reported.add(key);
      out.add(path, `chained automations loop: ${loop.join(' → ')}`);
    }
  }
}

function sortIssues(issues: ConfigIssue[]): ConfigIssue[] {
  return [...issues].sort(
    (a, b) =>
      (a.line ?? Number.MAX_SAFE_INTEGER) - (b.line ?? Number.MAX_SAFE_INTEGER) ||
      (a.column ?? 0) - (b.column ?? 0),
  );
}

interface AutomationContext {
  out: Collector;
  repositories: Record<string, RepositorySettings>;
  /** The aliases written in [repositories], valid or not; undefined when that table itself is broken. */
  repositoryAliases: ReadonlySet<string> | undefined;
  profiles: Record<string, Profile>;
  profileNames: string[];
  defaults: { profile: string; timezone: string } | undefined;
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
      const allowed = new Set<string>([...COMMON_PROMPT_FIELDS, ...promptFields]);
      const unknown = unknownPlaceholders(analysis, allowed);
      if (unknown.length > 0) {
        out.add(
          [...path, 'prompt'],
          `unsupported prompt placeholders for '${id}': ${formatPlaceholderList(unknown)}`,
        );
      }
    } catch (error) {
      out.add([...path, 'prompt'], error instanceof Error ? error.message : String(error));
    }
  }
  return { promptSyntax, placeholders };
}

function loadAutomation(id: string, table: unknown, ctx: AutomationContext): ResolvedAutomation | undefined {
  const { out } = ctx;
  const path = ['automations', id];
  if (!IDENTIFIER_PATTERN.test(id)) {
    out.add(path, 'automation id must contain only letters, digits, `_` and `-`');
    return undefined;
  }
  if (!isTable(table)) {
    out.add(path, `expected a table, got ${describeType(table)}`);
    return undefined;
  }
  let triggerName = table.trigger_type;
  if (triggerName === undefined) triggerName = impliedTriggerName(table);
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
    return undefined;
  }
  // The trigger's schema is the table's type: this is where the two are joined (`trigger.schema`
  // is typed as any schema, since the registry holds every trigger's).
  const config = validate(trigger.schema as z.ZodType<ResolvedAutomation['config']>, table, path, out);

  // Cross-checks that only need the raw table run even when other fields are invalid.
  const alias = table.repository;
  let repository: RepositorySettings | undefined;
  if (typeof alias === 'string' && IDENTIFIER_PATTERN.test(alias)) {
    repository = ctx.repositories[alias];
    // An alias whose table exists is not missing, even when its table or [settings] had errors.
    if (ctx.repositoryAliases && !ctx.repositoryAliases.has(alias)) {
      out.add([...path, 'repository'], `repository '${alias}' for automation '${id}' does not exist`);
    }
  }
  const profileName = typeof table.profile === 'string' ? table.profile : ctx.defaults?.profile;
  if (typeof table.profile === 'string' && !ctx.profileNames.includes(table.profile)) {
    out.add([...path, 'profile'], `profile '${table.profile}' for automation '${id}' does not exist`);
  }

  const { promptSyntax, placeholders } = checkPrompt(id, table, trigger.promptFields, path, out);

  const defaultTimezone = ctx.defaults?.timezone ?? 'UTC';
  const timezone = config
    ? trigger.resolveTimezone(config, {
        id,
        defaultTimezone,
        problem: (key, message) => out.add([...path, key], message),
      })
    : defaultTimezone;

  if (!config || !repository || !profileName) return undefined;
  const profile = ctx.profiles[profileName];
  if (!profile) return undefined;
  const automation: AnyAutomation = {
    id,
    triggerType: trigger.type,
    trigger,
    config,
    repository,
    profileName,
    profile,
    timezone,
    promptSyntax,
    placeholders,
  };
  // Where a trigger's type and its validated table are joined: `config` passed `trigger.schema`.
  return automation as ResolvedAutomation;
}
