/**
 * Renders docs/configuration.md from the settings file's JSON Schema (and the trigger
 * definitions' prompt fields), so the reference can never drift from what validates.
 */
import { PROVIDERS } from '../agents/schemas.js';
import { BUILT_IN_TRIGGERS, defaultTrigger } from '../triggers/registry.js';
import type { TriggerDefinition } from '../triggers/types.js';
import { COMMON_PROMPT_FIELDS } from './load.js';

type JsonSchema = {
  type?: string | string[];
  description?: string;
  default?: unknown;
  enum?: unknown[];
  const?: unknown;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  minLength?: number;
  minItems?: number;
  pattern?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  additionalProperties?: JsonSchema | boolean;
};

function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

function typeOf(schema: JsonSchema): string {
  if (schema.const !== undefined) return `\`${JSON.stringify(schema.const)}\``;
  if (schema.enum) return schema.enum.map((v) => `\`${JSON.stringify(v)}\``).join(' | ');
  const variants = schema.anyOf ?? schema.oneOf;
  if (variants) return [...new Set(variants.map(typeOf))].join(' or ');
  if (schema.type === 'array') return `list of ${schema.items ? typeOf(schema.items) : 'values'}`;
  if (schema.type === 'object') return 'table';
  if (schema.type === undefined) return 'date or string';
  const base = Array.isArray(schema.type) ? schema.type.join(' or ') : schema.type;
  const bounds: string[] = [];
  if (schema.minimum !== undefined && schema.minimum > Number.MIN_SAFE_INTEGER)
    bounds.push(`≥ ${schema.minimum}`);
  if (schema.exclusiveMinimum !== undefined) bounds.push(`> ${schema.exclusiveMinimum}`);
  if (schema.maximum !== undefined && schema.maximum < Number.MAX_SAFE_INTEGER)
    bounds.push(`≤ ${schema.maximum}`);
  return bounds.length > 0 ? `${base} (${bounds.join(', ')})` : base;
}

function defaultOf(schema: JsonSchema, required: boolean): string {
  if (required) return 'required';
  if (schema.default === undefined) return '—';
  if (
    typeof schema.default === 'object' &&
    schema.default !== null &&
    Object.keys(schema.default).length === 0
  ) {
    return Array.isArray(schema.default) ? '`[]`' : '—';
  }
  return `\`${JSON.stringify(schema.default)}\``;
}

function keyTable(schema: JsonSchema, skip: readonly string[] = []): string[] {
  const lines = ['| key | type | default | description |', '| --- | --- | --- | --- |'];
  for (const [key, property] of Object.entries(schema.properties ?? {})) {
    if (skip.includes(key)) continue;
    const required = schema.required?.includes(key) ?? false;
    lines.push(
      `| \`${key}\` | ${cell(typeOf(property))} | ${cell(defaultOf(property, required))} | ${cell(property.description ?? '')} |`,
    );
  }
  return lines;
}

/** The keys of `schema` that are tables of their own (`[settings.polling]`), in schema order. */
function subTables(schema: JsonSchema): string[] {
  return Object.entries(schema.properties ?? {})
    .filter(([, property]) => property.type === 'object' && property.properties !== undefined)
    .map(([key]) => key);
}

/** One section per provider: the keys of its profile table. */
function profileSections(profiles: JsonSchema[]): string[] {
  const out: string[] = [];
  profiles.forEach((profile, index) => {
    const provider = (profile.properties?.provider?.const as string | undefined) ?? PROVIDERS[index];
    out.push(
      `### provider = "${provider}"`,
      '',
      profile.description ?? '',
      '',
      ...keyTable(profile, ['provider']),
      '',
    );
  });
  return out;
}

/** One section per built-in trigger: its table's keys and the prompt fields it offers. */
function automationSections(automations: JsonSchema[]): string[] {
  const out: string[] = [];
  const definitions = Object.values(BUILT_IN_TRIGGERS);
  automations.forEach((automation, index) => {
    const definition = definitions[index]!;
    const names = [...definition.aliases, definition.type].map((n) => `\`${n}\``).join(' or ');
    out.push(
      `### trigger_type = ${names}`,
      '',
      automation.description ?? '',
      '',
      ...keyTable(automation, subTables(automation)),
      '',
      ...subTableSections(automation, 'automations.<id>', '####'),
      `Prompt fields: ${definition.promptFields.map((f) => `\`${f}\``).join(', ')}.`,
    );
    if (definition.untrustedFields.length > 0) {
      out.push(
        '',
        `Untrusted (written by anyone who can open an item): ${definition.untrustedFields.map((f) => `\`${f}\``).join(', ')}.`,
      );
    }
    out.push('');
  });
  return out;
}

/** A section for each sub-table of `schema` (a table key written `[parent.name]`), with its keys. */
function subTableSections(schema: JsonSchema, parent: string, heading: string): string[] {
  return subTables(schema).flatMap((name) => {
    const table = schema.properties![name]!;
    return [
      `${heading} \`[${parent}.${name}]\``,
      '',
      ...(table.description ? [table.description, ''] : []),
      ...keyTable(table),
      '',
    ];
  });
}

/** `with a `schedule` key is `cron`, …, and any other is <the default>`, from the built-in triggers. */
function impliedTriggersText(): string {
  const article = (word: string) => (/^[aeiou]/i.test(word) ? 'an' : 'a');
  const implied = Object.values(BUILT_IN_TRIGGERS).flatMap((d: TriggerDefinition) =>
    d.impliedBy === undefined ? [] : [`${article(d.impliedBy)} \`${d.impliedBy}\` key is \`${d.type}\``],
  );
  const fallback = defaultTrigger();
  const parts = implied.map((text, i) => (i === 0 ? `with ${text}` : `one with ${text}`));
  return `${parts.join(', ')}, and any other is \`${fallback.aliases[0] ?? fallback.type}\``;
}

export function renderConfigurationReference(root: Record<string, unknown>): string {
  const schema = root as JsonSchema;
  const props = schema.properties!;
  const settings = props.settings!;
  const repositories = props.repositories!.additionalProperties as JsonSchema;
  const agents = props.agents!;
  const profiles =
    (agents.properties!.profiles!.additionalProperties as JsonSchema).oneOf ??
    (agents.properties!.profiles!.additionalProperties as JsonSchema).anyOf!;
  const automations = (props.automations!.additionalProperties as JsonSchema).anyOf!;
  const out: string[] = [
    '# Configuration reference',
    '',
    '<!-- Generated by `npm run generate` from the schema in src/config/schema.ts; a test fails when this file is stale. -->',
    '',
    'curupira reads one TOML file (default `~/.curupira/settings.toml`, or `--config PATH`). Unknown keys are errors;',
    'relative paths resolve against the file’s folder and `~` expands; environment variables never override the file.',
    'Check a file with `curupira validate --explain`. The same schema as JSON Schema: `curupira schema`',
    '(committed as `schema/settings.schema.json`).',
    '',
    '## `[settings]`',
    '',
    settings.description ?? '',
    '',
    ...keyTable(settings, subTables(settings)),
    '',
    ...subTableSections(settings, 'settings', '##'),
    '## `[repositories.<alias>]`',
    '',
    `${repositories.description ?? ''} At least one is required; aliases use letters, digits, \`_\` and \`-\`. Two aliases may not resolve to the same checkout path.`,
    '',
    ...keyTable(repositories, subTables(repositories)),
    '',
    ...subTableSections(repositories, 'repositories.<alias>', '##'),
    '## `[agents.defaults]`',
    '',
    ...keyTable(agents.properties!.defaults!),
    '',
    '## `[agents.profiles.<name>]`',
    '',
    'A profile names an agent CLI (`provider`) and its options. Default: one profile named `opencode`. Every profile',
    'also accepts `model`, `executable`, `env`, `pass_env` and `github_token`.',
    '',
  ];
  out.push(...profileSections(profiles));
  out.push(
    '## `[assistant]`',
    '',
    ...keyTable(props.assistant ?? {}),
    '',
    '## `[automations.<id>]`',
    '',
    'One table per automation, run in file order. `trigger_type` picks the trigger; when it is omitted, a table',
    `${impliedTriggersText()}.`,
    'The `plugins-py/` prefix is optional.',
    '',
    `Every prompt may use the common placeholders ${COMMON_PROMPT_FIELDS.map((f) => `\`${f}\``).join(', ')}, plus its`,
    'trigger’s own, listed below. An unknown placeholder is a configuration error. Values flatten as text: null → empty,',
    'booleans `true`/`false`, lists and tables as compact JSON (in Jinja, lists stay lists for `for` and `join`).',
    'A prompt for a trigger with an item (not a schedule, a chain or a review watch) that reads none of the item’s',
    'number, title or body (its trigger’s fields or `task_number`, `task_title`, `task_body`) gets them appended, the',
    'title and body fenced as untrusted text; `validate --explain` says so on its `prompt` line.',
    '',
  );
  out.push(...automationSections(automations));
  const notifications = props.notifications?.additionalProperties as JsonSchema | undefined;
  if (notifications)
    out.push(
      '',
      '## `[notifications.<name>]`',
      '',
      `${notifications.description ?? ''} Optional; names use letters, digits, \`_\` and \`-\`. Events, payloads and delivery: [notifications.md](notifications.md).`,
      '',
      ...keyTable(notifications),
    );
  return `${out
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trimEnd()}\n`;
}
