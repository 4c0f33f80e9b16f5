/**
 * The simulator's fixture format (`curupira simulator --fixture FILE`) as a schema: what
 * `SimWorld.loadFixture` reads. `schema/simulator-fixture.schema.json` is generated from it
 * (`npm run generate`) and docs/simulator.md describes it; a test checks both are current and that
 * every fixture in the repository follows it.
 */
import { z } from 'zod';
import { publishedJsonSchema } from '../core/json-schema.js';

const Login = z.string().min(1).describe('A login: `alice`; bots as `name[bot]` or `app/name`.');
const Timestamp = z.string().describe('ISO 8601 time, e.g. `2026-01-05T09:00:00Z`.');

const Comment = z.union([
  z.string().describe('The comment body, by the default author.'),
  z.strictObject({ body: z.string(), author: Login.optional(), createdAt: Timestamp.optional() }),
]);

const issueShape = {
  title: z.string().min(1).describe('Required.'),
  body: z.string().optional(),
  number: z
    .number()
    .int()
    .positive()
    .optional()
    .describe('Default: the next free number (issues first, then pull requests).'),
  author: Login.optional(),
  labels: z.array(z.string()).optional().describe('Label names; created in the repository when missing.'),
  labeledBy: Login.optional().describe(
    'Who applied the labels, as the timeline shows it. Default: the author.',
  ),
  assignees: z.array(Login).optional(),
  milestone: z.string().nullable().optional().describe('Milestone title; created when missing.'),
  createdAt: Timestamp.optional(),
  updatedAt: Timestamp.optional(),
  closedAt: Timestamp.nullable().optional(),
  comments: z.array(Comment).optional(),
  locked: z.boolean().optional(),
};

const Issue = z.strictObject({
  ...issueShape,
  state: z.enum(['OPEN', 'CLOSED']).optional().describe('Default `OPEN`.'),
  stateReason: z.enum(['COMPLETED', 'NOT_PLANNED', 'REOPENED', 'DUPLICATE']).nullable().optional(),
});

const PullRequest = z.strictObject({
  ...issueShape,
  state: z.enum(['OPEN', 'CLOSED', 'MERGED']).optional().describe('Default `OPEN`.'),
  draft: z.boolean().optional(),
  headRefName: z.string().optional(),
  baseRefName: z.string().optional(),
  headRefOid: z.string().optional(),
  isCrossRepository: z.boolean().optional().describe('The head branch is in a fork. Default `false`.'),
  mergeable: z.enum(['MERGEABLE', 'CONFLICTING', 'UNKNOWN']).optional(),
  mergeStateStatus: z
    .enum(['BEHIND', 'BLOCKED', 'CLEAN', 'DIRTY', 'DRAFT', 'HAS_HOOKS', 'UNKNOWN', 'UNSTABLE'])
    .optional(),
  additions: z.number().int().nonnegative().optional(),
  deletions: z.number().int().nonnegative().optional(),
  changedFiles: z.number().int().nonnegative().optional(),
  mergedAt: Timestamp.nullable().optional(),
  reviewDecision: z.enum(['APPROVED', 'CHANGES_REQUESTED', 'REVIEW_REQUIRED']).nullable().optional(),
  reviews: z
    .array(
      z.strictObject({
        author: Login.optional(),
        state: z.enum(['APPROVED', 'CHANGES_REQUESTED', 'COMMENTED', 'DISMISSED', 'PENDING']),
        body: z.string().optional(),
        submittedAt: Timestamp.optional(),
      }),
    )
    .optional(),
  checkState: z
    .enum(['SUCCESS', 'FAILURE', 'PENDING', 'ERROR', 'EXPECTED'])
    .nullable()
    .optional()
    .describe('The head commit’s status rollup.'),
  closingIssues: z.array(z.number().int().positive()).optional().describe('Issue numbers it closes.'),
});

const Label = z.union([
  z.string(),
  z.strictObject({
    name: z.string().min(1),
    color: z.string().optional(),
    description: z.string().optional(),
  }),
]);

const Repo = z.strictObject({
  name: z
    .string()
    .regex(/^[^/\s]+\/[^/\s]+$/)
    .describe('Required: `owner/name`.'),
  defaultBranch: z.string().optional().describe('Default `main`.'),
  gitDir: z
    .string()
    .min(1)
    .optional()
    .describe(
      'Path of a local bare repository backing this one: pushes to it are real pushes, and pull requests read their head, base and diff from it with git.',
    ),
  private: z.boolean().optional(),
  labels: z.array(Label).optional(),
  milestones: z
    .array(
      z.strictObject({
        title: z.string().min(1),
        state: z.enum(['OPEN', 'CLOSED']).optional(),
        description: z.string().optional(),
        dueOn: Timestamp.optional(),
      }),
    )
    .optional(),
  issues: z.array(Issue).optional(),
  pullRequests: z.array(PullRequest).optional(),
});

const ItemRef = z
  .string()
  .regex(/^[^/\s]+\/[^/\s#]+#\d+$/)
  .describe('`owner/name#number`');

const ProjectItem = z.union([
  z.strictObject({ issue: ItemRef, status: z.string().optional(), archived: z.boolean().optional() }),
  z.strictObject({ pullRequest: ItemRef, status: z.string().optional(), archived: z.boolean().optional() }),
  z.strictObject({
    draft: z.strictObject({ title: z.string().min(1), body: z.string().optional() }),
    status: z.string().optional(),
    archived: z.boolean().optional(),
  }),
]);

export const SimulatorFixture = z
  .strictObject({
    $schema: z.string().optional().describe('Editors may point this at the schema file.'),
    now: Timestamp.optional().describe(
      'Start of the clock: each created object is one minute later than the one before.',
    ),
    users: z.array(z.strictObject({ login: Login, name: z.string().optional() })).optional(),
    organizations: z.array(z.strictObject({ login: Login, name: z.string().optional() })).optional(),
    tokens: z
      .record(z.string(), Login)
      .optional()
      .describe(
        'Bearer token → login of the viewer. `curupira simulator` also accepts any token unless `--token` is given.',
      ),
    repos: z.array(Repo).optional(),
    projects: z
      .array(
        z.strictObject({
          owner: Login.describe('Required: the user or organization that owns the board.'),
          title: z.string().min(1).describe('Required.'),
          number: z.number().int().positive().optional(),
          statusOptions: z
            .array(z.string())
            .optional()
            .describe('The single-select Status field’s options; default Todo, In Progress, Done.'),
          items: z.array(ProjectItem).optional(),
        }),
      )
      .optional(),
  })
  .describe('A curupira GitHub simulator fixture: the world `curupira simulator --fixture FILE` serves.');
export type SimulatorFixture = z.infer<typeof SimulatorFixture>;

/** The JSON Schema of fixture files (draft 2020-12). */
export function simulatorFixtureJsonSchema(): Record<string, unknown> {
  return publishedJsonSchema(SimulatorFixture, 'simulator-fixture', 'curupira simulator fixture');
}

type Path = readonly PropertyKey[];

/**
 * Where in a fixture `path` points, as a reader names it: `users[].login`, `tokens.sim-token`, and
 * inside a repository its name (`acme/api.issues[].title`).
 */
function placeOf(input: unknown, path: Path): string {
  const [top, index, ...rest] = path;
  const repos = (input as { repos?: unknown } | null)?.repos;
  const repoName =
    top === 'repos' && Array.isArray(repos)
      ? (repos[index as number] as { name?: unknown })?.name
      : undefined;
  if (typeof repoName === 'string' && repoName !== '' && rest[0] !== 'name') return joinPath(repoName, rest);
  return joinPath('', path) || 'fixture';
}

function joinPath(start: string, path: Path): string {
  let place = start;
  for (const part of path)
    place = typeof part === 'number' ? `${place}[]` : `${place}${place ? '.' : ''}${String(part)}`;
  return place;
}

const EXPECTED: Record<string, string> = {
  object: 'must be a JSON object',
  record: 'must be a JSON object',
  array: 'must be a JSON array',
  string: 'must be a non-empty string',
  number: 'must be a number',
  boolean: 'must be true or false',
};

/** Of a union's options, the one the input came closest to: the fewest problems, none at its root. */
function closestOption(issue: z.core.$ZodIssueInvalidUnion): z.core.$ZodIssue | undefined {
  const candidates = issue.errors.filter((errors) =>
    errors.every((e) => e.path.length > 0 || e.code !== 'invalid_type'),
  );
  const best = [...candidates].sort((a, b) => a.length - b.length)[0];
  return best?.[0];
}

/** One sentence for the first problem zod found. */
function describeIssue(input: unknown, issue: z.core.$ZodIssue, prefix: Path = []): string {
  const path = [...prefix, ...issue.path];
  const place = placeOf(input, path);
  switch (issue.code) {
    case 'invalid_type':
      return `${place} ${EXPECTED[issue.expected] ?? `must be ${issue.expected}`}`;
    case 'too_small':
      return issue.origin === 'string'
        ? `${place} must be a non-empty string`
        : `${place} must be at least ${Number(issue.minimum)}`;
    case 'invalid_value':
      return `${place} must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'unrecognized_keys':
      return `${place} has unknown keys: ${issue.keys.join(', ')}`;
    case 'invalid_union': {
      const value = path.reduce<unknown>(
        (v, part) => (v as Record<PropertyKey, unknown> | undefined)?.[part],
        input,
      );
      const kinds = ['issue', 'pullRequest', 'draft'];
      if (path.at(-2) === 'items' && !kinds.some((k) => Object.hasOwn(Object(value), k)))
        return 'a project item needs "issue", "pullRequest" or "draft"';
      const option = closestOption(issue);
      return option ? describeIssue(input, option, path) : `${place} has an invalid value`;
    }
    default:
      return `${place} is invalid (${issue.message})`;
  }
}

/** A fixture checked against the schema; throws an `Error` naming its first problem. */
export function parseFixture(input: unknown): SimulatorFixture {
  const result = SimulatorFixture.safeParse(input);
  if (result.success) return result.data;
  throw new Error(describeIssue(input, result.error.issues[0]!));
}
