/**
 * GitHub issue search (`search(type: ISSUE, query: …)`) over the simulated world.
 *
 * Qualifiers, each negatable with a leading `-`:
 *   repo:O/N (several repo: terms are OR'ed), user:/org:/owner:, is:issue|pr|open|closed|merged|draft|
 *   locked, type:issue|pr, state:open|closed, label:X (AND across terms; `label:a,b` is OR), no:label|
 *   assignee|milestone|project, assignee:LOGIN|@me|*, author:LOGIN|@me|app/NAME|NAME[bot],
 *   commenter:, reviewed-by:, milestone:X, project:OWNER/NUMBER, linked:pr|issue, draft:true|false,
 *   base:, head:, review:none|required|approved|changes_requested, status:success|failure|pending,
 *   reason:completed|"not planned"|reopened|duplicate, created:/updated:/closed:/merged: (dates:
 *   2026-01-02, >=…, <…, A..B), comments:N|>N|A..B, in:title|body|comments, sort:….
 * Values may be double-quoted with `\"` escapes. Labels, logins, milestones and repository names match
 * case-insensitively. Anything else (plain words, quoted phrases, unknown qualifiers) is text that must
 * appear in the title or body, which is how GitHub treats an unknown qualifier too.
 *
 * Semantics worth knowing: `is:closed` includes merged pull requests; `linked:pr` counts pull requests
 * that are open or merged (not closed unmerged); bots are matched only through `app/NAME` or
 * `NAME[bot]`; `review:none` means no submitted review. GitHub's default order is "best match";
 * the simulator has no relevance score and uses `created-desc` instead. Ties sort by number.
 */
import type { SimIssueOrPullRequest, SimWorld } from './world.js';
import { canonicalLogin } from './world.js';

export interface SearchTerm {
  /** Qualifier name in lower case, or null for a plain word or quoted phrase. */
  readonly key: string | null;
  readonly value: string;
  readonly negated: boolean;
}

export type SortField = 'created' | 'updated' | 'comments';

export interface SearchSort {
  readonly field: SortField;
  readonly direction: 'asc' | 'desc';
}

export interface ParsedSearch {
  readonly terms: readonly SearchTerm[];
  readonly sort: SearchSort;
}

export const DEFAULT_SORT: SearchSort = { field: 'created', direction: 'desc' };

const KNOWN_QUALIFIERS = new Set([
  'repo',
  'user',
  'org',
  'owner',
  'is',
  'type',
  'state',
  'label',
  'no',
  'assignee',
  'author',
  'commenter',
  'reviewed-by',
  'milestone',
  'project',
  'linked',
  'draft',
  'base',
  'head',
  'review',
  'status',
  'reason',
  'created',
  'updated',
  'closed',
  'merged',
  'comments',
  'in',
  'sort',
]);

/** Splits a search string into terms, honouring `-` negation and double-quoted values. */
export function tokenizeSearchQuery(query: string): SearchTerm[] {
  const terms: SearchTerm[] = [];
  let i = 0;
  const n = query.length;
  // One value, or a comma list whose parts may each be quoted (`label:bug,"good first issue"`).
  const readPart = (): string => {
    if (query[i] === '"') {
      i += 1;
      let out = '';
      while (i < n && query[i] !== '"') {
        if (query[i] === '\\' && i + 1 < n) i += 1;
        out += query[i];
        i += 1;
      }
      i += 1;
      return out;
    }
    const start = i;
    while (i < n && !/\s/.test(query[i]!) && query[i] !== ',') i += 1;
    return query.slice(start, i);
  };
  const readValue = (): string => {
    let out = readPart();
    while (query[i] === ',') {
      i += 1;
      out += `,${readPart()}`;
    }
    return out;
  };
  while (i < n) {
    if (/\s/.test(query[i]!)) {
      i += 1;
      continue;
    }
    let negated = false;
    if (query[i] === '-' && i + 1 < n && !/\s/.test(query[i + 1]!)) {
      negated = true;
      i += 1;
    }
    const keyMatch = /^([A-Za-z][A-Za-z_-]*):/.exec(query.slice(i));
    if (keyMatch && KNOWN_QUALIFIERS.has(keyMatch[1]!.toLowerCase())) {
      i += keyMatch[0].length;
      terms.push({ key: keyMatch[1]!.toLowerCase(), value: readValue(), negated });
      continue;
    }
    terms.push({ key: null, value: readValue(), negated });
  }
  return terms;
}

export function parseSearchQuery(query: string): ParsedSearch {
  const all = tokenizeSearchQuery(query);
  let sort = DEFAULT_SORT;
  const terms: SearchTerm[] = [];
  for (const term of all) {
    if (term.key !== 'sort') {
      terms.push(term);
      continue;
    }
    const match = /^(created|updated|comments)(?:-(asc|desc))?$/.exec(term.value.toLowerCase());
    if (match) sort = { field: match[1] as SortField, direction: (match[2] as 'asc' | 'desc') ?? 'desc' };
  }
  return { terms, sort };
}

export interface SearchOptions {
  /** Login of the token's user, for `@me`. */
  readonly viewer: string;
}

export interface SearchResult {
  /** Every match, sorted. Callers cap what they page through (GitHub serves at most 1,000). */
  readonly items: SimIssueOrPullRequest[];
}

/** Lazily built lookups shared by every item of one search. */
class SearchContext {
  private linkedIssues: Set<string> | undefined;
  private projectMembers = new Map<string, Set<string>>();

  constructor(
    readonly world: SimWorld,
    readonly viewer: string,
  ) {}

  isLinkedIssue(item: SimIssueOrPullRequest): boolean {
    if (!this.linkedIssues) {
      this.linkedIssues = new Set();
      for (const candidate of this.world.allItems()) {
        if (candidate.__typename !== 'PullRequest' || candidate.state === 'CLOSED') continue;
        for (const number of candidate.closingIssues) this.linkedIssues.add(key(candidate.repo, number));
      }
    }
    return this.linkedIssues.has(key(item.repo, item.number));
  }

  inProject(item: SimIssueOrPullRequest, ref: string): boolean {
    let members = this.projectMembers.get(ref);
    if (!members) {
      members = new Set();
      const match = /^([^/]+)\/(\d+)$/.exec(ref);
      const project = match ? this.world.project(match[1]!, Number(match[2])) : undefined;
      for (const projectItem of project?.items ?? []) {
        const { content } = projectItem;
        if (content.kind !== 'DraftIssue') members.add(key(content.repo, content.number));
      }
      this.projectMembers.set(ref, members);
    }
    return members.has(key(item.repo, item.number));
  }

  inAnyProject(item: SimIssueOrPullRequest): boolean {
    return this.world.projectItemsFor(item).length > 0;
  }
}

function key(repo: string, number: number): string {
  return `${repo.toLowerCase()}#${number}`;
}

function sameLogin(a: string, b: string): boolean {
  return canonicalLogin(a).toLowerCase() === canonicalLogin(b).toLowerCase();
}

/** A login in a qualifier: `@me` is the viewer; `app/x` is the bot `x[bot]`. */
function qualifierLogin(value: string, ctx: SearchContext): string {
  return value.toLowerCase() === '@me' ? ctx.viewer : canonicalLogin(value);
}

interface TimeRange {
  readonly from: number;
  readonly to: number;
}

function parseInstant(text: string): TimeRange | undefined {
  if (/^\d{4}-\d{2}-\d{2}$/.test(text)) {
    const start = Date.parse(`${text}T00:00:00Z`);
    return Number.isNaN(start) ? undefined : { from: start, to: start + 86_400_000 - 1 };
  }
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : { from: at, to: at };
}

/** `2026-01-02`, `>2026-01-02`, `>=…`, `<…`, `<=…`, `A..B`, `A..*`, `*..B`. */
function parseDateRange(value: string): TimeRange | undefined {
  const range = /^(.+)\.\.(.+)$/.exec(value);
  if (range) {
    const from = range[1] === '*' ? { from: -Infinity, to: -Infinity } : parseInstant(range[1]!);
    const to = range[2] === '*' ? { from: Infinity, to: Infinity } : parseInstant(range[2]!);
    return from && to ? { from: from.from, to: to.to } : undefined;
  }
  const op = /^(>=|<=|>|<)(.+)$/.exec(value);
  if (!op) return parseInstant(value);
  const at = parseInstant(op[2]!);
  if (!at) return undefined;
  switch (op[1]) {
    case '>':
      return { from: at.to + 1, to: Infinity };
    case '>=':
      return { from: at.from, to: Infinity };
    case '<':
      return { from: -Infinity, to: at.from - 1 };
    default:
      return { from: -Infinity, to: at.to };
  }
}

function parseNumberRange(value: string): TimeRange | undefined {
  const range = /^(\d+|\*)\.\.(\d+|\*)$/.exec(value);
  if (range) {
    return {
      from: range[1] === '*' ? -Infinity : Number(range[1]),
      to: range[2] === '*' ? Infinity : Number(range[2]),
    };
  }
  const op = /^(>=|<=|>|<)?(\d+)$/.exec(value);
  if (!op) return undefined;
  const n = Number(op[2]);
  switch (op[1]) {
    case '>':
      return { from: n + 1, to: Infinity };
    case '>=':
      return { from: n, to: Infinity };
    case '<':
      return { from: -Infinity, to: n - 1 };
    case '<=':
      return { from: -Infinity, to: n };
    default:
      return { from: n, to: n };
  }
}

function inRange(timestamp: string | null, value: string): boolean {
  if (timestamp === null) return false;
  const range = parseDateRange(value);
  if (!range) return false;
  const at = Date.parse(timestamp);
  return at >= range.from && at <= range.to;
}

function textMatches(item: SimIssueOrPullRequest, text: string, scopes: ReadonlySet<string>): boolean {
  const needle = text.toLowerCase();
  if (needle === '') return true;
  if (scopes.has('title') && item.title.toLowerCase().includes(needle)) return true;
  if (scopes.has('body') && item.body.toLowerCase().includes(needle)) return true;
  return scopes.has('comments') && item.comments.some((c) => c.body.toLowerCase().includes(needle));
}

function matchesQualifier(
  item: SimIssueOrPullRequest,
  term: SearchTerm,
  ctx: SearchContext,
  scopes: ReadonlySet<string>,
): boolean {
  const value = term.value;
  const lower = value.toLowerCase();
  const isPr = item.__typename === 'PullRequest';
  const pr = isPr ? item : undefined;
  switch (term.key) {
    case 'repo':
      return item.repo.toLowerCase() === lower;
    case 'user':
    case 'org':
    case 'owner':
      return item.repo.split('/')[0]!.toLowerCase() === lower;
    case 'is':
    case 'type':
    case 'state':
      switch (lower) {
        case 'issue':
          return !isPr;
        case 'pr':
        case 'pull-request':
          return isPr;
        case 'open':
          return item.state === 'OPEN';
        case 'closed':
          return item.state !== 'OPEN';
        case 'merged':
          return item.state === 'MERGED';
        case 'draft':
          return pr?.isDraft === true;
        case 'locked':
          return item.locked;
        case 'unlocked':
          return !item.locked;
        default:
          return textMatches(item, `${term.key}:${value}`, scopes);
      }
    case 'label': {
      const wanted = /,/.test(value) ? lower.split(',').filter(Boolean) : [lower];
      return item.labels.some((label) => wanted.includes(label.toLowerCase()));
    }
    case 'no':
      switch (lower) {
        case 'label':
          return item.labels.length === 0;
        case 'assignee':
          return item.assignees.length === 0;
        case 'milestone':
          return item.milestone === null;
        case 'project':
          return !ctx.inAnyProject(item);
        default:
          return false;
      }
    case 'assignee':
      if (value === '*') return item.assignees.length > 0;
      return item.assignees.some((login) => sameLogin(login, qualifierLogin(value, ctx)));
    case 'author':
      return sameLogin(item.author, qualifierLogin(value, ctx));
    case 'commenter':
      return item.comments.some((c) => sameLogin(c.author, qualifierLogin(value, ctx)));
    case 'reviewed-by':
      return pr?.reviews.some((r) => sameLogin(r.author, qualifierLogin(value, ctx))) ?? false;
    case 'milestone': {
      if (item.milestone === null) return false;
      const milestone = ctx.world.milestone(item.repo, item.milestone);
      return milestone?.title.toLowerCase() === lower;
    }
    case 'project':
      return ctx.inProject(item, lower);
    case 'linked':
      if (lower === 'pr') return !isPr && ctx.isLinkedIssue(item);
      if (lower === 'issue') return pr !== undefined && ctx.world.closingIssues(pr).length > 0;
      return false;
    case 'draft':
      if (!pr) return false;
      return lower === 'true' ? pr.isDraft : lower === 'false' ? !pr.isDraft : false;
    case 'base':
      return pr?.baseRefName === value;
    case 'head':
      return pr?.headRefName === value;
    case 'review':
      if (!pr) return false;
      switch (lower) {
        case 'none':
          return pr.reviews.every((r) => r.state === 'PENDING');
        case 'required':
          return pr.reviewDecision === 'REVIEW_REQUIRED';
        case 'approved':
          return pr.reviewDecision === 'APPROVED';
        case 'changes_requested':
          return pr.reviewDecision === 'CHANGES_REQUESTED';
        default:
          return false;
      }
    case 'status': {
      const state = pr?.checkState;
      if (!state) return false;
      if (lower === 'success') return state === 'SUCCESS';
      if (lower === 'failure') return state === 'FAILURE' || state === 'ERROR';
      if (lower === 'pending') return state === 'PENDING' || state === 'EXPECTED';
      return false;
    }
    case 'reason': {
      if (item.__typename !== 'Issue' || item.stateReason === null) return false;
      return item.stateReason.toLowerCase().replace(/_/g, ' ') === lower.replace(/_/g, ' ');
    }
    case 'created':
      return inRange(item.createdAt, value);
    case 'updated':
      return inRange(item.updatedAt, value);
    case 'closed':
      return inRange(item.closedAt, value);
    case 'merged':
      return inRange(pr?.mergedAt ?? null, value);
    case 'comments': {
      const range = parseNumberRange(value);
      return range !== undefined && item.comments.length >= range.from && item.comments.length <= range.to;
    }
    default:
      return textMatches(item, value, scopes);
  }
}

function compareItems(a: SimIssueOrPullRequest, b: SimIssueOrPullRequest, sort: SearchSort): number {
  let diff = 0;
  if (sort.field === 'created') diff = a.createdAt.localeCompare(b.createdAt);
  else if (sort.field === 'updated') diff = a.updatedAt.localeCompare(b.updatedAt);
  else diff = a.comments.length - b.comments.length;
  if (diff === 0) diff = a.number - b.number || a.repo.localeCompare(b.repo);
  return sort.direction === 'asc' ? diff : -diff;
}

/** Every issue and pull request the query matches, in the query's sort order. */
export function searchIssues(world: SimWorld, query: string, options: SearchOptions): SearchResult {
  const { terms, sort } = parseSearchQuery(query);
  const ctx = new SearchContext(world, options.viewer);
  const inTerms = terms.filter((t) => t.key === 'in' && !t.negated);
  const scopes = new Set(
    inTerms.length === 0 ? ['title', 'body'] : inTerms.flatMap((t) => t.value.toLowerCase().split(',')),
  );
  const repoTerms = terms.filter((t) => t.key === 'repo' && !t.negated).map((t) => t.value.toLowerCase());
  const otherTerms = terms.filter((t) => t.key !== 'in' && !(t.key === 'repo' && !t.negated));
  const items = world.allItems().filter((item) => {
    if (repoTerms.length > 0 && !repoTerms.includes(item.repo.toLowerCase())) return false;
    for (const term of otherTerms) {
      const matches = matchesQualifier(item, term, ctx, scopes);
      if (matches === term.negated) return false;
    }
    return true;
  });
  items.sort((a, b) => compareItems(a, b, sort));
  return { items };
}
