/**
 * The GitHub Search query compiler: typed filters from an automation become one search string.
 *
 * Parts always come in the same order, so a given configuration compiles to the same text every
 * time (the query is shown by `curupira validate --explain` and compared in tests):
 * `repo:` · `is:issue|is:pr` · state · labels · any-of labels · excluded labels · assignee · author ·
 * excluded authors · milestone · project · issue-only or PR-only qualifiers · title text · `sort:`.
 */

export type SearchKind = 'issue' | 'pr';
export type SearchState = 'open' | 'closed' | 'all';
export type SearchSort =
  | 'created-asc'
  | 'created-desc'
  | 'updated-asc'
  | 'updated-desc'
  | 'comments-asc'
  | 'comments-desc';
export type ReviewFilter = 'none' | 'required' | 'approved' | 'changes_requested';
export type CiStatusFilter = 'success' | 'failure' | 'pending';

export interface SearchFilters {
  kind: SearchKind;
  /** `owner/name`. */
  repo: string;
  state: SearchState;
  /** Every label is required. */
  labels: readonly string[];
  /** At least one of these labels (one `label:a,b` qualifier); absent or empty: no such filter. */
  labels_any?: readonly string[] | undefined;
  exclude_labels: readonly string[];
  /** A login, `@me`, `none` (no assignee) or `any` (some assignee). */
  assignee?: string;
  author?: string;
  /** Each becomes `-author:…`. */
  exclude_authors?: readonly string[] | undefined;
  /** Text searched in titles only (`"…" in:title`); it must not contain `"`. */
  title?: string | undefined;
  /** Leaves out Dependabot and Renovate here; every other bot is left out after the search (`isBotAuthor`). */
  ignore_bots?: boolean | undefined;
  milestone?: string;
  /** `owner/number`, e.g. `acme/5`. */
  project?: string;
  sort: SearchSort;
  /** Issues only. */
  linked_pull_request?: boolean;
  /** Pull requests only. */
  draft?: boolean;
  base?: string;
  head?: string;
  review?: ReviewFilter;
  ci_status?: CiStatusFilter;
  linked_issue?: boolean;
}

/** The bots `ignore_bots` names in the query; search has no qualifier for "any bot". */
const BOTS_IN_QUERY = ['app/dependabot', 'app/renovate'] as const;

/** An item's author is a bot: a `Bot` actor (GraphQL), or a login GitHub gives apps (`name[bot]`). */
export function isBotAuthor(author: { __typename?: string; login: string } | null | undefined): boolean {
  if (!author) return false;
  return author.__typename === 'Bot' || /\[bot\]$/i.test(author.login);
}

const NEEDS_QUOTES = /[\s",:]/u;

/**
 * Quotes a qualifier value when GitHub would otherwise split or misread it: values with whitespace,
 * `"`, `:` or `,` are wrapped in double quotes with inner quotes escaped. An empty value is quoted
 * too, so it never turns into a bare `label:`.
 */
export function quoteSearchValue(value: string): string {
  if (value !== '' && !NEEDS_QUOTES.test(value)) return value;
  return `"${value.replaceAll('"', '\\"')}"`;
}

function qualifier(name: string, value: string): string {
  return `${name}:${quoteSearchValue(value)}`;
}

function stateQualifier(state: SearchState): string | undefined {
  if (state === 'open') return 'is:open';
  if (state === 'closed') return 'is:closed';
  return undefined;
}

function assigneeQualifier(assignee: string): string {
  if (assignee === 'none') return 'no:assignee';
  if (assignee === 'any') return 'assignee:*';
  if (assignee === '@me') return 'assignee:@me';
  return qualifier('assignee', assignee);
}

function linkedQualifier(target: 'pr' | 'issue', wanted: boolean): string {
  return wanted ? `linked:${target}` : `-linked:${target}`;
}

function issueQualifiers(filters: SearchFilters): string[] {
  const parts: string[] = [];
  if (filters.linked_pull_request !== undefined) {
    parts.push(linkedQualifier('pr', filters.linked_pull_request));
  }
  return parts;
}

function pullRequestQualifiers(filters: SearchFilters): string[] {
  const parts: string[] = [];
  if (filters.draft !== undefined) parts.push(`draft:${filters.draft ? 'true' : 'false'}`);
  if (filters.base !== undefined) parts.push(qualifier('base', filters.base));
  if (filters.head !== undefined) parts.push(qualifier('head', filters.head));
  if (filters.review !== undefined) parts.push(qualifier('review', filters.review));
  if (filters.ci_status !== undefined) parts.push(qualifier('status', filters.ci_status));
  if (filters.linked_issue !== undefined) parts.push(linkedQualifier('issue', filters.linked_issue));
  return parts;
}

/** Compiles filters into the exact GitHub Search query string, e.g. `repo:acme/api is:issue is:open sort:created-asc`. */
export function compileSearchQuery(filters: SearchFilters): string {
  const parts: string[] = [qualifier('repo', filters.repo), filters.kind === 'pr' ? 'is:pr' : 'is:issue'];
  const state = stateQualifier(filters.state);
  if (state) parts.push(state);
  for (const label of filters.labels) parts.push(qualifier('label', label));
  if (filters.labels_any !== undefined && filters.labels_any.length > 0)
    parts.push(`label:${filters.labels_any.map(quoteSearchValue).join(',')}`);
  for (const label of filters.exclude_labels) parts.push(`-${qualifier('label', label)}`);
  if (filters.assignee !== undefined) parts.push(assigneeQualifier(filters.assignee));
  if (filters.author !== undefined) parts.push(qualifier('author', filters.author));
  for (const author of filters.exclude_authors ?? []) parts.push(`-${qualifier('author', author)}`);
  if (filters.ignore_bots) parts.push(...BOTS_IN_QUERY.map((bot) => `-author:${bot}`));
  if (filters.milestone !== undefined) parts.push(qualifier('milestone', filters.milestone));
  if (filters.project !== undefined) parts.push(qualifier('project', filters.project));
  parts.push(...(filters.kind === 'pr' ? pullRequestQualifiers(filters) : issueQualifiers(filters)));
  if (filters.title !== undefined) parts.push(`"${filters.title}"`, 'in:title');
  parts.push(`sort:${filters.sort}`);
  return parts.join(' ');
}
