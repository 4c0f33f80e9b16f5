/**
 * Problems of a settings file, as the user reads them: zod's issues turned into our messages
 * (`expected a table, got an integer (5)`, `unknown key (did you mean 'profile'?)`), each at its key
 * path, with the line and column where that key is written. Every problem is collected; none stops
 * the others from being found.
 */
import type { z } from 'zod';
import type { ConfigIssue } from '../core/errors.js';
import type { KeyPath, TomlLocations } from './toml-locations.js';

type Path = readonly (string | number)[];
type Issue = z.core.$ZodIssue;

export function describeType(value: unknown): string {
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

export function isTable(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && !(value instanceof Date);
}

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

/**
 * `unknown key`, with the closest of the table's known keys when one is near, else the table's
 * sub-table that declares it (`poll_interval_seconds` written under `[settings]` belongs in
 * `[settings.polling]`) when `place` gives the table's path and schema.
 */
export function unknownKeyMessage(
  key: string,
  known: readonly string[],
  place?: { path: KeyPath; schema: z.ZodType | undefined },
): string {
  const suggestion = closest(key, known);
  if (suggestion) return `unknown key (did you mean '${suggestion}'?)`;
  const home = place ? subTableDeclaring(key, place.schema) : undefined;
  if (home && place!.path.every((part) => typeof part === 'string'))
    return `unknown key (it belongs in [${[...place!.path, home].join('.')}])`;
  return 'unknown key';
}

/** The key of the one sub-table of `schema` (an object schema) that declares `key`, if exactly one does. */
function subTableDeclaring(key: string, schema: z.ZodType | undefined): string | undefined {
  const shape = internals(unwrap(schema))?.shape;
  if (!shape) return undefined;
  const homes = Object.entries(shape)
    .filter(([, child]) => knownKeys(child).includes(key))
    .map(([name]) => name);
  return homes.length === 1 ? homes[0] : undefined;
}

interface SchemaInternals {
  shape?: Record<string, z.ZodType>;
  def?: { innerType?: z.ZodType; discriminator?: string; options?: z.ZodType[] };
}

const internals = (schema: z.ZodType | undefined) => schema as unknown as SchemaInternals | undefined;

/** The keys an object schema declares (none for other schemas). */
export function knownKeys(schema: z.ZodType | undefined): string[] {
  const shape = internals(unwrap(schema))?.shape;
  return shape ? Object.keys(shape) : [];
}

/** Through `.optional()`, `.default()`, `.prefault()` and the like, to the schema they wrap. */
export function unwrap(schema: z.ZodType | undefined): z.ZodType | undefined {
  let current = schema;
  for (let n = 0; n < 5 && internals(current)?.def?.innerType; n += 1) {
    current = internals(current)!.def!.innerType;
  }
  return current;
}

/** The option of a discriminated union that `value` selects (the union itself when none does). */
function selectOption(schema: z.ZodType | undefined, value: unknown): z.ZodType | undefined {
  const def = internals(schema)?.def;
  if (!def?.discriminator || !def.options || !isTable(value)) return schema;
  const wanted = value[def.discriminator];
  const option = def.options.find((o) => {
    const literal = internals(o)?.shape?.[def.discriminator!] as unknown as { def?: { values?: unknown[] } };
    return literal?.def?.values?.includes(wanted);
  });
  return option ?? schema;
}

/** The object schema at `path` inside `schema`, following the values of `source` through unions. */
function schemaAt(schema: z.ZodType, source: unknown, path: Path): z.ZodType | undefined {
  let current: z.ZodType | undefined = selectOption(unwrap(schema), source);
  let value = source;
  for (const part of path) {
    const shape = internals(current)?.shape;
    if (!shape || typeof part !== 'string') return undefined;
    value = isTable(value) ? value[part] : undefined;
    current = selectOption(unwrap(shape[part]), value);
  }
  return current;
}

export function valueAt(source: unknown, path: Path): unknown {
  let current = source;
  for (const part of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string | number, unknown>)[part];
  }
  return current;
}

interface IssueContext {
  schema: z.ZodType;
  source: unknown;
  /** The value the issue is about. */
  input: unknown;
}

function gotNumber(input: unknown): string {
  return typeof input === 'number' ? `, got ${input}` : '';
}

function typeMessage(issue: Extract<Issue, { code: 'invalid_type' }>, { input }: IssueContext): string {
  // `never` is a key this table must not have (see `withoutItemKeys`): its schema says why.
  if (issue.expected === 'never') return issue.message;
  if (input === undefined) return 'is required';
  const quoted = typeof input === 'string' || typeof input === 'number' ? ` (${JSON.stringify(input)})` : '';
  return `expected ${TYPE_NAMES[issue.expected] ?? issue.expected}, got ${describeType(input)}${quoted}`;
}

function tooSmallMessage(issue: Extract<Issue, { code: 'too_small' }>, { input }: IssueContext): string {
  const min = Number(issue.minimum);
  const generic = issue.message.startsWith('Too small');
  let message: string;
  if (issue.origin === 'string') message = 'must not be empty';
  else if (issue.origin === 'array') message = generic ? `must list at least ${min}` : issue.message;
  else message = generic ? `must be ${issue.inclusive ? 'at least' : 'greater than'} ${min}` : issue.message;
  return `${message}${gotNumber(input)}`;
}

function tooBigMessage(issue: Extract<Issue, { code: 'too_big' }>, { input }: IssueContext): string {
  const message = issue.message.startsWith('Too big')
    ? `must be ${issue.inclusive ? 'at most' : 'less than'} ${Number(issue.maximum)}`
    : issue.message;
  return `${message}${gotNumber(input)}`;
}

function unionMessage(issue: Extract<Issue, { code: 'invalid_union' }>, { input }: IssueContext): string {
  // A discriminated union's own message (set in the schema) names what the discriminator selects.
  if ('discriminator' in issue && issue.discriminator !== undefined) return issue.message;
  return `has an invalid value: ${describeType(input)}`;
}

/** One message per issue code; the codes not listed keep zod's (or the schema's) message. */
const MESSAGES: { [C in Issue['code']]?: (issue: Extract<Issue, { code: C }>, ctx: IssueContext) => string } =
  {
    invalid_type: typeMessage,
    // A message the schema set (zod's own start with "Invalid") says more than the list of values.
    invalid_value: (issue, { input }) =>
      !issue.message.startsWith('Invalid')
        ? issue.message
        : `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}${
            input === undefined ? '' : `, got ${JSON.stringify(input)}`
          }`,
    too_small: tooSmallMessage,
    too_big: tooBigMessage,
    invalid_union: unionMessage,
    invalid_key: () => 'name must contain only letters, digits, `_` and `-`',
    invalid_format: (issue) =>
      issue.message.startsWith('Invalid') ? `has an invalid format (${issue.format})` : issue.message,
  };

export interface Problem {
  path: KeyPath;
  message: string;
}

/** Turns zod's issues into our messages, at `prefix` + the issue's path. */
export function convertIssues(
  error: z.ZodError,
  prefix: KeyPath,
  schema: z.ZodType,
  source: unknown,
): Problem[] {
  const out: Problem[] = [];
  for (const issue of error.issues) {
    const issuePath = issue.path as (string | number)[];
    const path = [...prefix, ...issuePath];
    if (issue.code === 'unrecognized_keys') {
      const table = schemaAt(schema, source, issuePath) ?? selectOption(unwrap(schema), source);
      const keys = knownKeys(table);
      for (const key of issue.keys)
        out.push({ path: [...path, key], message: unknownKeyMessage(key, keys, { path, schema: table }) });
      continue;
    }
    const convert = MESSAGES[issue.code] as ((issue: Issue, ctx: IssueContext) => string) | undefined;
    const ctx = { schema, source, input: valueAt(source, issuePath) };
    out.push({ path, message: convert ? convert(issue, ctx) : issue.message });
  }
  return out;
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

/** Where problems are recorded: once each, located in the file. */
export interface Collector {
  add(path: KeyPath, message: string): void;
  readonly issues: ConfigIssue[];
}

export function collector(file: string, locations: TomlLocations): Collector {
  const issues: ConfigIssue[] = [];
  const seen = new Set<string>();
  return {
    issues,
    add(path, message) {
      const key = `${formatPath(path)}\u0000${message}`;
      if (seen.has(key)) return;
      seen.add(key);
      const position = locations.find(path);
      issues.push({ path: formatPath(path), message, file, line: position?.line, column: position?.column });
    },
  };
}

/** Validates `value` with `schema` at `prefix`, recording its problems; the parsed value or undefined. */
export function validate<T>(
  schema: z.ZodType<T>,
  value: unknown,
  prefix: KeyPath,
  out: Collector,
): T | undefined {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  for (const problem of convertIssues(result.error, prefix, schema, value))
    out.add(problem.path, problem.message);
  return undefined;
}

/** Records an `unknown key` problem for each key of `table` that `schema` does not declare. */
export function checkKnownKeys(
  schema: z.ZodType,
  table: Record<string, unknown>,
  prefix: KeyPath,
  out: Collector,
): void {
  const known = knownKeys(schema);
  for (const key of Object.keys(table)) {
    if (!known.includes(key))
      out.add([...prefix, key], unknownKeyMessage(key, known, { path: prefix, schema }));
  }
}

export function sortIssues(issues: ConfigIssue[]): ConfigIssue[] {
  return [...issues].sort(
    (a, b) =>
      (a.line ?? Number.MAX_SAFE_INTEGER) - (b.line ?? Number.MAX_SAFE_INTEGER) ||
      (a.column ?? 0) - (b.column ?? 0),
  );
}
