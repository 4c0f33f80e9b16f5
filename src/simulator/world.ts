/**
 * The simulator's in-memory GitHub: users, bots, organizations, repositories with their labels,
 * milestones, issues and pull requests (one number sequence per repository, as on GitHub), comments,
 * reviews, closing references, and Projects v2 boards with a single-select "Status" field.
 *
 * Tests build it in code (`world.addRepo('acme/api')`, `world.addIssue('acme/api', { title })`…) or
 * load a JSON fixture (`loadFixture`, format below). Timestamps come from an injectable `now`; the
 * default clock starts at 2026-01-01T00:00:00Z and moves one minute per reading, so every created
 * object gets a distinct, predictable time and `sort:created-*` orders are meaningful.
 *
 * Fixture format (every key optional unless marked; the user-facing reference is docs/simulator.md,
 * the schema src/simulator/fixture-schema.ts → schema/simulator-fixture.schema.json):
 *
 *   {
 *     "now": "2026-01-01T00:00:00Z",           // start of the default stepping clock
 *     "users": [{ "login": "alice", "name": "Alice" }, { "login": "dependabot[bot]" }],
 *     "organizations": [{ "login": "acme", "name": "Acme" }],
 *     "tokens": { "sim-token": "alice" },       // bearer token → login of the viewer
 *     "repos": [{
 *       "name": "acme/widgets",                 // required: owner/name
 *       "defaultBranch": "main",
 *       "labels": [{ "name": "agent-ready", "color": "0e8a16", "description": "…" }],
 *       "milestones": [{ "title": "v1.0", "state": "OPEN" }],
 *       "issues": [{ "title": "…", "body": "…", "author": "alice", "labels": ["bug"],
 *                    "assignees": ["bob"], "milestone": "v1.0", "state": "OPEN" | "CLOSED",
 *                    "stateReason": "COMPLETED", "number": 7, "createdAt": "…",
 *                    "comments": [{ "author": "bob", "body": "…" }] }],
 *       "pullRequests": [{ …issue keys…, "state": "OPEN" | "CLOSED" | "MERGED", "draft": false,
 *                    "headRefName": "fix-7", "baseRefName": "main", "mergeable": "MERGEABLE",
 *                    "mergeStateStatus": "CLEAN", "additions": 3, "deletions": 1, "changedFiles": 1,
 *                    "reviewDecision": "APPROVED", "reviews": [{ "author": "bob", "state": "APPROVED" }],
 *                    "checkState": "SUCCESS", "closingIssues": [7] }]
 *     }],
 *     "projects": [{
 *       "owner": "acme", "title": "Roadmap", "number": 1,     // owner and title required
 *       "statusOptions": ["Todo", "In Progress", "Done"],
 *       "items": [{ "issue": "acme/widgets#7", "status": "Todo" },
 *                 { "pullRequest": "acme/widgets#8", "status": "Done", "archived": true },
 *                 { "draft": { "title": "…", "body": "…" }, "status": "Todo" }]
 *     }]
 *   }
 *
 * Within a repository, issues get numbers first (in order), then pull requests, unless a `number`
 * is given. Bots are written `name[bot]` (REST's login) or `app/name` (search's form); GraphQL shows
 * a bot's login without the suffix, as GitHub does.
 */

import { parseFixture, type SimulatorFixture } from './fixture-schema.js';
import { isoSeconds, type NodeKind, nodeId, sha1Hex } from './ids.js';

export type IssueState = 'OPEN' | 'CLOSED';
export type PullRequestState = 'OPEN' | 'CLOSED' | 'MERGED';
export type IssueStateReason = 'COMPLETED' | 'NOT_PLANNED' | 'REOPENED' | 'DUPLICATE';
export type MergeableState = 'MERGEABLE' | 'CONFLICTING' | 'UNKNOWN';
export type MergeStateStatus =
  | 'BEHIND'
  | 'BLOCKED'
  | 'CLEAN'
  | 'DIRTY'
  | 'DRAFT'
  | 'HAS_HOOKS'
  | 'UNKNOWN'
  | 'UNSTABLE';
export type ReviewDecision = 'APPROVED' | 'CHANGES_REQUESTED' | 'REVIEW_REQUIRED';
export type ReviewState = 'APPROVED' | 'CHANGES_REQUESTED' | 'COMMENTED' | 'DISMISSED' | 'PENDING';
/** The head commit's status/check rollup, as `statusCheckRollup { state }` reports it. */
export type CheckState = 'SUCCESS' | 'FAILURE' | 'PENDING' | 'ERROR' | 'EXPECTED';

export interface SimActor {
  readonly __typename: 'User' | 'Bot';
  readonly id: string;
  readonly databaseId: number;
  /** REST's login: `alice`, or `dependabot[bot]` for a bot. */
  readonly login: string;
  name: string | null;
  readonly createdAt: string;
}

export interface SimOrganization {
  readonly __typename: 'Organization';
  readonly id: string;
  readonly databaseId: number;
  readonly login: string;
  name: string | null;
  readonly createdAt: string;
}

export interface SimLabel {
  readonly __typename: 'Label';
  readonly id: string;
  readonly databaseId: number;
  readonly repo: string;
  name: string;
  color: string;
  description: string | null;
  readonly createdAt: string;
}

export interface SimMilestone {
  readonly __typename: 'Milestone';
  readonly id: string;
  readonly databaseId: number;
  readonly repo: string;
  readonly number: number;
  title: string;
  state: 'OPEN' | 'CLOSED';
  description: string | null;
  dueOn: string | null;
  readonly createdAt: string;
}

export interface SimComment {
  readonly __typename: 'IssueComment';
  readonly id: string;
  readonly databaseId: number;
  readonly repo: string;
  /** Number of the issue or pull request the comment is on. */
  readonly parentNumber: number;
  readonly author: string;
  body: string;
  readonly createdAt: string;
  updatedAt: string;
}

export interface SimReview {
  readonly __typename: 'PullRequestReview';
  readonly id: string;
  readonly databaseId: number;
  readonly repo: string;
  readonly pullRequestNumber: number;
  readonly author: string;
  readonly state: ReviewState;
  readonly body: string;
  readonly submittedAt: string;
}

/** Who applied a label, and when (the timeline's `LabeledEvent`). */
export interface SimLabeledEvent {
  readonly __typename: 'LabeledEvent';
  readonly id: string;
  readonly databaseId: number;
  readonly repo: string;
  readonly label: string;
  /** Login of the actor (REST form). */
  readonly actor: string;
  readonly createdAt: string;
}

/** Other timeline events curupira's writes leave behind, each with its actor (REST form). */
export interface SimIssueEvent {
  readonly id: string;
  readonly databaseId: number;
  readonly event: 'unlabeled' | 'closed' | 'reopened';
  readonly actor: string;
  readonly createdAt: string;
  /** The label removed (`unlabeled`). */
  readonly label?: string;
  /** GitHub's lower-case `state_reason` (`closed`, `reopened`). */
  readonly stateReason?: string | null;
}

export interface SimTeam {
  readonly __typename: 'Team';
  readonly id: string;
  readonly databaseId: number;
  readonly org: string;
  readonly slug: string;
  name: string;
  /** Logins of the members. */
  members: string[];
  readonly createdAt: string;
}

interface SimItemBase {
  readonly id: string;
  readonly databaseId: number;
  /** `owner/name` of the repository. */
  readonly repo: string;
  readonly number: number;
  title: string;
  body: string;
  /** Login of the author (REST form: `dependabot[bot]` for bots). */
  readonly author: string;
  /** Label names, spelt as the repository's label. */
  labels: string[];
  assignees: string[];
  /** Milestone number in the repository, or null. */
  milestone: number | null;
  readonly createdAt: string;
  updatedAt: string;
  closedAt: string | null;
  readonly comments: SimComment[];
  /** Every label applied, oldest first (removals are not recorded). */
  readonly labelEvents: SimLabeledEvent[];
  /** Unlabel, close and reopen events, oldest first. */
  readonly events: SimIssueEvent[];
  locked: boolean;
}

export interface SimIssue extends SimItemBase {
  readonly __typename: 'Issue';
  state: IssueState;
  stateReason: IssueStateReason | null;
}

export interface SimPullRequest extends SimItemBase {
  readonly __typename: 'PullRequest';
  state: PullRequestState;
  isDraft: boolean;
  headRefName: string;
  baseRefName: string;
  headRefOid: string;
  /** The head branch is in a fork: only `headRefOid` (and `refs/pull/<n>/head`) names its commit. */
  isCrossRepository: boolean;
  mergeable: MergeableState;
  mergeStateStatus: MergeStateStatus;
  additions: number;
  deletions: number;
  changedFiles: number;
  mergedAt: string | null;
  reviewDecision: ReviewDecision | null;
  readonly reviews: SimReview[];
  /** Rollup of the head commit's statuses and checks; null when it has none. */
  checkState: CheckState | null;
  /** Numbers of the issues (same repository) this pull request closes. */
  closingIssues: number[];
  /** Logins and team slugs asked to review it (`POST …/requested_reviewers`); absent: none. */
  requestedReviewers?: string[];
  requestedTeams?: string[];
}

export type SimIssueOrPullRequest = SimIssue | SimPullRequest;

export interface SimRepository {
  readonly __typename: 'Repository';
  readonly id: string;
  readonly databaseId: number;
  readonly owner: string;
  readonly name: string;
  readonly nameWithOwner: string;
  defaultBranch: string;
  isPrivate: boolean;
  readonly createdAt: string;
  updatedAt: string;
  readonly labels: SimLabel[];
  readonly milestones: SimMilestone[];
  readonly items: Map<number, SimIssueOrPullRequest>;
  nextNumber: number;
  /**
   * A local bare repository backing this one (a test helper or the fixture's `gitDir` gives its
   * path): pushes to it are real pushes, and pull requests read their head and base from it.
   */
  gitDir?: string;
}

export interface SimStatusOption {
  readonly id: string;
  name: string;
  color: 'BLUE' | 'GRAY' | 'GREEN' | 'ORANGE' | 'PINK' | 'PURPLE' | 'RED' | 'YELLOW';
  description: string;
}

export interface SimStatusField {
  readonly __typename: 'ProjectV2SingleSelectField';
  readonly id: string;
  readonly databaseId: number;
  readonly name: string;
  readonly projectId: string;
  readonly options: SimStatusOption[];
  readonly createdAt: string;
}

export interface SimDraftIssue {
  readonly __typename: 'DraftIssue';
  readonly id: string;
  title: string;
  body: string;
  readonly creator: string;
  readonly createdAt: string;
  updatedAt: string;
}

export type SimProjectItemContent =
  | { readonly kind: 'Issue' | 'PullRequest'; readonly repo: string; readonly number: number }
  | { readonly kind: 'DraftIssue'; readonly draft: SimDraftIssue };

export interface SimProjectItem {
  readonly __typename: 'ProjectV2Item';
  readonly id: string;
  readonly databaseId: number;
  readonly projectId: string;
  readonly content: SimProjectItemContent;
  /** Id of the Status option, or null when the item has no status. */
  statusOptionId: string | null;
  isArchived: boolean;
  readonly createdAt: string;
  updatedAt: string;
}

export interface SimProject {
  readonly __typename: 'ProjectV2';
  readonly id: string;
  readonly databaseId: number;
  readonly owner: string;
  readonly ownerType: 'Organization' | 'User';
  readonly number: number;
  title: string;
  closed: boolean;
  readonly createdAt: string;
  updatedAt: string;
  readonly statusField: SimStatusField;
  readonly items: SimProjectItem[];
}

export type SimNode =
  | SimActor
  | SimOrganization
  | SimRepository
  | SimLabel
  | SimMilestone
  | SimComment
  | SimReview
  | SimIssue
  | SimPullRequest
  | SimProject
  | SimStatusField
  | SimProjectItem
  | SimDraftIssue
  | SimLabeledEvent
  | SimTeam;

export interface CommentInput {
  body: string;
  author?: string;
  createdAt?: string;
}

export interface IssueInput {
  title: string;
  body?: string;
  number?: number;
  author?: string;
  labels?: readonly string[];
  /** Who applied `labels` (their timeline events); default the author. */
  labeledBy?: string;
  assignees?: readonly string[];
  /** Milestone title; created in the repository when missing. */
  milestone?: string | null;
  state?: IssueState;
  stateReason?: IssueStateReason | null;
  createdAt?: string;
  updatedAt?: string;
  closedAt?: string | null;
  comments?: readonly (CommentInput | string)[];
  locked?: boolean;
}

export interface ReviewInput {
  author?: string;
  state: ReviewState;
  body?: string;
  submittedAt?: string;
}

export interface PullRequestInput extends Omit<IssueInput, 'state' | 'stateReason'> {
  state?: PullRequestState;
  draft?: boolean;
  headRefName?: string;
  baseRefName?: string;
  headRefOid?: string;
  isCrossRepository?: boolean;
  mergeable?: MergeableState;
  mergeStateStatus?: MergeStateStatus;
  additions?: number;
  deletions?: number;
  changedFiles?: number;
  mergedAt?: string | null;
  reviewDecision?: ReviewDecision | null;
  reviews?: readonly ReviewInput[];
  checkState?: CheckState | null;
  closingIssues?: readonly number[];
}

export interface IssuePatch {
  title?: string;
  body?: string;
  state?: IssueState;
  stateReason?: IssueStateReason | null;
  labels?: readonly string[];
  assignees?: readonly string[];
  milestone?: string | null;
}

export interface ProjectInput {
  title: string;
  number?: number;
  /** Options of the single-select "Status" field, in board order. Default: Todo, In Progress, Done. */
  statusOptions?: readonly string[];
}

export type ProjectItemContentInput =
  | SimIssueOrPullRequest
  /** `owner/name#number` of an issue or pull request. */
  | string
  | { draft: { title: string; body?: string; creator?: string } };

export interface ProjectItemOptions {
  /** Name of the Status option (case-insensitive), or null for none. */
  status?: string | null;
  archived?: boolean;
}

export interface WorldOptions {
  /** Milliseconds since the epoch for every timestamp the world writes. Default: a stepping clock. */
  now?: () => number;
  /** Start of the default stepping clock. */
  start?: string | number;
}

const DEFAULT_START = Date.UTC(2026, 0, 1);
const DEFAULT_STATUS_OPTIONS = ['Todo', 'In Progress', 'Done'] as const;
const OPTION_COLORS: readonly SimStatusOption['color'][] = ['GRAY', 'YELLOW', 'GREEN', 'BLUE', 'PURPLE'];

/** A clock that starts at `start` and moves `stepMs` forward every time it is read. */
export function steppingClock(start: number = DEFAULT_START, stepMs = 60_000): () => number {
  let next = start;
  return () => {
    const value = next;
    next += stepMs;
    return value;
  };
}

/**
 * The real time, each reading at least a second after the one before: what the world writes keeps
 * its order at GitHub's one-second precision, and its dates are today's (the demo, `curupira
 * simulator` without a fixture); tests keep the stepping clock, whose times do not depend on when
 * they run.
 */
export function realTimeClock(now: () => number = Date.now): () => number {
  let last = Number.NEGATIVE_INFINITY;
  return () => {
    last = Math.max(now(), last + 1000);
    return last;
  };
}

/** `app/dependabot` and `dependabot[bot]` both name the bot `dependabot[bot]`. */
export function canonicalLogin(login: string): string {
  const trimmed = login.trim();
  if (trimmed.toLowerCase().startsWith('app/')) return `${trimmed.slice(4)}[bot]`;
  return trimmed;
}

export function isBotLogin(login: string): boolean {
  return /\[bot\]$/i.test(login);
}

/** The login GraphQL shows: a bot's name without `[bot]`. */
export function graphqlLogin(login: string): string {
  return login.replace(/\[bot\]$/i, '');
}

function parseRepoName(nameWithOwner: string): { owner: string; name: string } {
  const match = /^([A-Za-z0-9_.-]+)\/([A-Za-z0-9_.-]+)$/.exec(nameWithOwner.trim());
  if (!match) throw new Error(`repository must be written owner/name, got '${nameWithOwner}'`);
  return { owner: match[1]!, name: match[2]! };
}

function parseItemRef(ref: string): { repo: string; number: number } {
  const match = /^([^#\s]+)#(\d+)$/.exec(ref.trim());
  if (!match) throw new Error(`an issue or pull request is written owner/name#number, got '${ref}'`);
  return { repo: match[1]!, number: Number(match[2]) };
}

/** The world's accounts: users, bots, organizations, tokens, teams (and its clock and node ids). */
export class SimAccounts {
  protected readonly clock: () => number;
  protected seq = 0;
  protected readonly nodes = new Map<string, SimNode>();
  protected readonly actors = new Map<string, SimActor>();
  protected readonly organizations = new Map<string, SimOrganization>();
  protected readonly repos = new Map<string, SimRepository>();
  protected readonly projects: SimProject[] = [];
  protected readonly tokens = new Map<string, string>();
  /** `repo\u0000login` (lower case) → authorAssociation, besides OWNER for the repository's owner. */
  protected readonly associations = new Map<string, string>();
  protected readonly teams = new Map<string, SimTeam>();
  /** When set, a token the world does not know authenticates as this login (the CLI's default). */
  protected anyTokenLogin: string | undefined;

  constructor(options: WorldOptions = {}) {
    const start =
      options.start === undefined
        ? DEFAULT_START
        : typeof options.start === 'number'
          ? options.start
          : Date.parse(options.start);
    this.clock = options.now ?? steppingClock(start);
  }

  /** The current time as GitHub writes it. Advances the default stepping clock. */
  timestamp(): string {
    return isoSeconds(this.clock());
  }

  protected register<T extends SimNode>(kind: NodeKind, build: (id: string, databaseId: number) => T): T {
    this.seq += 1;
    const node = build(nodeId(kind, this.seq), this.seq);
    this.nodes.set(node.id, node);
    return node;
  }

  // ── users, bots, organizations, tokens ─────────────────────────────────────────────────────

  addUser(login: string, options: { name?: string | null } = {}): SimActor {
    const canonical = canonicalLogin(login);
    const existing = this.actors.get(canonical.toLowerCase());
    if (existing) {
      if (options.name !== undefined) existing.name = options.name;
      return existing;
    }
    const kind = isBotLogin(canonical) ? 'Bot' : 'User';
    const actor = this.register<SimActor>(kind, (id, databaseId) => ({
      __typename: kind,
      id,
      databaseId,
      login: canonical,
      name: options.name ?? null,
      createdAt: this.timestamp(),
    }));
    this.actors.set(canonical.toLowerCase(), actor);
    return actor;
  }

  /** The user or bot with this login (`app/x`, `x[bot]` or a user login), if the world has it. */
  actor(login: string): SimActor | undefined {
    return this.actors.get(canonicalLogin(login).toLowerCase());
  }

  addOrganization(login: string, options: { name?: string | null } = {}): SimOrganization {
    const existing = this.organizations.get(login.toLowerCase());
    if (existing) {
      if (options.name !== undefined) existing.name = options.name;
      return existing;
    }
    const org = this.register<SimOrganization>('Organization', (id, databaseId) => ({
      __typename: 'Organization',
      id,
      databaseId,
      login,
      name: options.name ?? null,
      createdAt: this.timestamp(),
    }));
    this.organizations.set(login.toLowerCase(), org);
    return org;
  }

  organization(login: string): SimOrganization | undefined {
    return this.organizations.get(login.toLowerCase());
  }

  /** Lets `token` authenticate as `login` (created as a user when missing). */
  addToken(token: string, login: string): SimActor {
    const actor = this.addUser(login);
    this.tokens.set(token, actor.login);
    return actor;
  }

  /** The viewer a token authenticates as, or undefined for an unknown token. */
  viewerForToken(token: string): SimActor | undefined {
    const login = this.tokens.get(token) ?? (token === '' ? undefined : this.anyTokenLogin);
    return login === undefined ? undefined : this.actor(login);
  }

  /** From now on any non-empty token authenticates as `login` (created as a user when missing). */
  acceptAnyToken(login: string): SimActor {
    const actor = this.addUser(login);
    this.anyTokenLogin = actor.login;
    return actor;
  }

  /** The login of the first token the world knows, if any. */
  firstTokenLogin(): string | undefined {
    return this.tokens.values().next().value;
  }

  /** Gives `login` this `authorAssociation` on `repo` (MEMBER, COLLABORATOR, CONTRIBUTOR…). */
  setAssociation(repoName: string, login: string, association: string): void {
    this.addUser(login);
    this.associations.set(`${repoName}\u0000${canonicalLogin(login)}`.toLowerCase(), association);
  }

  /** `authorAssociation` of `login` on `repo`: OWNER for its owner, else what was set, else NONE. */
  association(repoName: string, login: string): string {
    const repo = this.repos.get(repoName.trim().toLowerCase());
    if (repo && repo.owner.toLowerCase() === login.toLowerCase()) return 'OWNER';
    return this.associations.get(`${repoName}\u0000${canonicalLogin(login)}`.toLowerCase()) ?? 'NONE';
  }

  /** A team `org/slug` with these members (the organization is created when missing). */
  addTeam(org: string, slug: string, members: readonly string[]): SimTeam {
    this.addOrganization(org);
    const team = this.register<SimTeam>('Team', (id, databaseId) => ({
      __typename: 'Team',
      id,
      databaseId,
      org,
      slug,
      name: slug,
      members: members.map((login) => this.addUser(login).login),
      createdAt: this.timestamp(),
    }));
    this.teams.set(`${org}/${slug}`.toLowerCase(), team);
    return team;
  }

  team(org: string, slug: string): SimTeam | undefined {
    return this.teams.get(`${org}/${slug}`.toLowerCase());
  }

  protected recordLabeled(item: SimIssueOrPullRequest, names: readonly string[], actor: string): void {
    for (const label of names) {
      const event = this.register<SimLabeledEvent>('LabeledEvent', (id, databaseId) => ({
        __typename: 'LabeledEvent',
        id,
        databaseId,
        repo: item.repo,
        label,
        actor: this.addUser(actor).login,
        createdAt: this.timestamp(),
      }));
      item.labelEvents.push(event);
    }
  }
}

/** Repositories, their labels and milestones. */
export class SimRepositories extends SimAccounts {
  // ── repositories, labels, milestones ───────────────────────────────────────────────────────

  addRepo(
    nameWithOwner: string,
    options: { defaultBranch?: string; private?: boolean; gitDir?: string } = {},
  ): SimRepository {
    const { owner, name } = parseRepoName(nameWithOwner);
    const existing = this.repos.get(`${owner}/${name}`.toLowerCase());
    if (existing) {
      if (options.gitDir !== undefined) existing.gitDir = options.gitDir;
      return existing;
    }
    if (!this.actor(owner) && !this.organization(owner)) this.addOrganization(owner);
    const created = this.timestamp();
    const repo = this.register<SimRepository>('Repository', (id, databaseId) => ({
      __typename: 'Repository',
      id,
      databaseId,
      owner,
      name,
      nameWithOwner: `${owner}/${name}`,
      defaultBranch: options.defaultBranch ?? 'main',
      isPrivate: options.private ?? false,
      createdAt: created,
      updatedAt: created,
      labels: [],
      milestones: [],
      items: new Map(),
      nextNumber: 1,
      ...(options.gitDir === undefined ? {} : { gitDir: options.gitDir }),
    }));
    this.repos.set(repo.nameWithOwner.toLowerCase(), repo);
    return repo;
  }

  repo(nameWithOwner: string): SimRepository | undefined {
    return this.repos.get(nameWithOwner.trim().toLowerCase());
  }

  repositories(): SimRepository[] {
    return [...this.repos.values()];
  }

  protected requireRepo(nameWithOwner: string): SimRepository {
    const repo = this.repo(nameWithOwner);
    if (!repo) throw new Error(`the simulated world has no repository '${nameWithOwner}'`);
    return repo;
  }

  addLabel(
    repoName: string,
    name: string,
    options: { color?: string; description?: string | null } = {},
  ): SimLabel {
    const repo = this.requireRepo(repoName);
    const existing = this.label(repoName, name);
    if (existing) {
      if (options.color !== undefined) existing.color = options.color;
      if (options.description !== undefined) existing.description = options.description;
      return existing;
    }
    const label = this.register<SimLabel>('Label', (id, databaseId) => ({
      __typename: 'Label',
      id,
      databaseId,
      repo: repo.nameWithOwner,
      name,
      color: options.color ?? 'ededed',
      description: options.description ?? null,
      createdAt: this.timestamp(),
    }));
    repo.labels.push(label);
    return label;
  }

  /** A repository's label, matched case-insensitively like GitHub. */
  label(repoName: string, name: string): SimLabel | undefined {
    const lower = name.toLowerCase();
    return this.repo(repoName)?.labels.find((l) => l.name.toLowerCase() === lower);
  }

  addMilestone(
    repoName: string,
    title: string,
    options: { state?: 'OPEN' | 'CLOSED'; description?: string | null; dueOn?: string | null } = {},
  ): SimMilestone {
    const repo = this.requireRepo(repoName);
    const existing = repo.milestones.find((m) => m.title.toLowerCase() === title.toLowerCase());
    if (existing) return existing;
    const milestone = this.register<SimMilestone>('Milestone', (id, databaseId) => ({
      __typename: 'Milestone',
      id,
      databaseId,
      repo: repo.nameWithOwner,
      number: repo.milestones.length + 1,
      title,
      state: options.state ?? 'OPEN',
      description: options.description ?? null,
      dueOn: options.dueOn ?? null,
      createdAt: this.timestamp(),
    }));
    repo.milestones.push(milestone);
    return milestone;
  }

  milestone(repoName: string, number: number): SimMilestone | undefined {
    return this.repo(repoName)?.milestones.find((m) => m.number === number);
  }

  // ── what an item takes from its repository: a number, labels, users, a milestone ─────────────

  protected takeNumber(repo: SimRepository, wanted: number | undefined): number {
    if (wanted !== undefined) {
      if (!Number.isInteger(wanted) || wanted < 1) throw new Error(`invalid issue number ${wanted}`);
      if (repo.items.has(wanted)) {
        throw new Error(`${repo.nameWithOwner}#${wanted} already exists (issues and PRs share numbers)`);
      }
      repo.nextNumber = Math.max(repo.nextNumber, wanted + 1);
      return wanted;
    }
    while (repo.items.has(repo.nextNumber)) repo.nextNumber += 1;
    const number = repo.nextNumber;
    repo.nextNumber += 1;
    return number;
  }

  protected labelNames(repo: SimRepository, names: readonly string[] | undefined): string[] {
    const out: string[] = [];
    for (const name of names ?? []) {
      const label = this.addLabel(repo.nameWithOwner, name);
      if (!out.includes(label.name)) out.push(label.name);
    }
    return out;
  }

  protected userLogins(logins: readonly string[] | undefined): string[] {
    return [...new Set((logins ?? []).map((login) => this.addUser(login).login))];
  }

  protected milestoneNumber(repo: SimRepository, title: string | null | undefined): number | null {
    if (title === undefined || title === null) return null;
    return this.addMilestone(repo.nameWithOwner, title).number;
  }
}

/** Issues, pull requests, their comments, reviews, events and labels. */
export class SimItems extends SimRepositories {
  // ── issues and pull requests ───────────────────────────────────────────────────────────────

  protected baseFields(
    repo: SimRepository,
    input: IssueInput | PullRequestInput,
    id: string,
    databaseId: number,
    number: number,
  ): SimItemBase {
    const createdAt = input.createdAt ?? this.timestamp();
    return {
      id,
      databaseId,
      repo: repo.nameWithOwner,
      number,
      title: input.title,
      body: input.body ?? '',
      author: this.addUser(input.author ?? 'octocat').login,
      labels: this.labelNames(repo, input.labels),
      assignees: this.userLogins(input.assignees),
      milestone: this.milestoneNumber(repo, input.milestone),
      createdAt,
      updatedAt: input.updatedAt ?? createdAt,
      closedAt: null,
      comments: [],
      labelEvents: [],
      events: [],
      locked: input.locked ?? false,
    };
  }

  protected addInitialComments(item: SimIssueOrPullRequest, comments: IssueInput['comments']): void {
    for (const comment of comments ?? []) {
      const input = typeof comment === 'string' ? { body: comment } : comment;
      this.addComment(item.repo, item.number, input);
    }
  }

  addIssue(repoName: string, input: IssueInput): SimIssue {
    const repo = this.requireRepo(repoName);
    const number = this.takeNumber(repo, input.number);
    const issue = this.register<SimIssue>('Issue', (id, databaseId) => ({
      __typename: 'Issue',
      ...this.baseFields(repo, input, id, databaseId, number),
      state: input.state ?? 'OPEN',
      stateReason: input.stateReason ?? null,
    }));
    repo.items.set(number, issue);
    if (issue.state === 'CLOSED') {
      issue.closedAt = input.closedAt ?? issue.updatedAt;
      issue.stateReason = input.stateReason === undefined ? 'COMPLETED' : input.stateReason;
    }
    this.recordLabeled(issue, issue.labels, input.labeledBy ?? issue.author);
    this.addInitialComments(issue, input.comments);
    return issue;
  }

  addPullRequest(repoName: string, input: PullRequestInput): SimPullRequest {
    const repo = this.requireRepo(repoName);
    const number = this.takeNumber(repo, input.number);
    const draft = input.draft ?? false;
    const mergeable = input.mergeable ?? 'MERGEABLE';
    const pr = this.register<SimPullRequest>('PullRequest', (id, databaseId) => ({
      __typename: 'PullRequest',
      ...this.baseFields(repo, input, id, databaseId, number),
      state: input.state ?? 'OPEN',
      isDraft: draft,
      headRefName: input.headRefName ?? `patch-${number}`,
      baseRefName: input.baseRefName ?? repo.defaultBranch,
      headRefOid: input.headRefOid ?? sha1Hex(`${repo.nameWithOwner}#${number}:${input.headRefName ?? ''}`),
      isCrossRepository: input.isCrossRepository ?? false,
      mergeable,
      mergeStateStatus:
        input.mergeStateStatus ?? (draft ? 'DRAFT' : mergeable === 'CONFLICTING' ? 'DIRTY' : 'CLEAN'),
      additions: input.additions ?? 0,
      deletions: input.deletions ?? 0,
      changedFiles: input.changedFiles ?? 0,
      mergedAt: null,
      reviewDecision: input.reviewDecision ?? null,
      reviews: [],
      checkState: input.checkState ?? null,
      closingIssues: [...new Set(input.closingIssues ?? [])],
    }));
    repo.items.set(number, pr);
    if (pr.state !== 'OPEN') pr.closedAt = input.closedAt ?? pr.updatedAt;
    if (pr.state === 'MERGED') pr.mergedAt = input.mergedAt ?? pr.closedAt;
    for (const review of input.reviews ?? []) this.addReview(repo.nameWithOwner, number, review);
    this.recordLabeled(pr, pr.labels, input.labeledBy ?? pr.author);
    this.addInitialComments(pr, input.comments);
    return pr;
  }

  /** The issue or pull request with this number, if any. */
  item(repoName: string, number: number): SimIssueOrPullRequest | undefined {
    return this.repo(repoName)?.items.get(number);
  }

  issue(repoName: string, number: number): SimIssue | undefined {
    const item = this.item(repoName, number);
    return item?.__typename === 'Issue' ? item : undefined;
  }

  pullRequest(repoName: string, number: number): SimPullRequest | undefined {
    const item = this.item(repoName, number);
    return item?.__typename === 'PullRequest' ? item : undefined;
  }

  protected requireItem(repoName: string, number: number): SimIssueOrPullRequest {
    const item = this.item(repoName, number);
    if (!item) throw new Error(`the simulated world has no issue or pull request ${repoName}#${number}`);
    return item;
  }

  /** Every issue and pull request, in every repository. */
  allItems(): SimIssueOrPullRequest[] {
    const out: SimIssueOrPullRequest[] = [];
    for (const repo of this.repos.values()) out.push(...repo.items.values());
    return out;
  }

  protected touch(item: SimIssueOrPullRequest): void {
    item.updatedAt = this.timestamp();
  }

  addComment(repoName: string, number: number, input: CommentInput & { touch?: boolean }): SimComment {
    const item = this.requireItem(repoName, number);
    const createdAt = input.createdAt ?? this.timestamp();
    const comment = this.register<SimComment>('IssueComment', (id, databaseId) => ({
      __typename: 'IssueComment',
      id,
      databaseId,
      repo: item.repo,
      parentNumber: item.number,
      author: this.addUser(input.author ?? 'octocat').login,
      body: input.body,
      createdAt,
      updatedAt: createdAt,
    }));
    item.comments.push(comment);
    if (input.touch !== false && createdAt > item.updatedAt) item.updatedAt = createdAt;
    return comment;
  }

  addReview(repoName: string, number: number, input: ReviewInput): SimReview {
    const pr = this.pullRequest(repoName, number);
    if (!pr) throw new Error(`the simulated world has no pull request ${repoName}#${number}`);
    const review = this.register<SimReview>('PullRequestReview', (id, databaseId) => ({
      __typename: 'PullRequestReview',
      id,
      databaseId,
      repo: pr.repo,
      pullRequestNumber: pr.number,
      author: this.addUser(input.author ?? 'octocat').login,
      state: input.state,
      body: input.body ?? '',
      submittedAt: input.submittedAt ?? this.timestamp(),
    }));
    pr.reviews.push(review);
    return review;
  }

  /** Records a timeline event by `actor` (default the item's author). */
  protected recordEvent(
    item: SimIssueOrPullRequest,
    event: SimIssueEvent['event'],
    actor: string | undefined,
    extra: { label?: string; stateReason?: string | null } = {},
  ): void {
    // Not a GraphQL node here (the GraphQL timeline models labeled events only), so no register().
    this.seq += 1;
    const recorded: SimIssueEvent = {
      id: `IE_sim${this.seq}`,
      databaseId: this.seq,
      event,
      actor: this.addUser(actor ?? item.author).login,
      createdAt: this.timestamp(),
      ...extra,
    };
    item.events.push(recorded);
  }

  closeIssue(
    repoName: string,
    number: number,
    options: { stateReason?: IssueStateReason; actor?: string } = {},
  ): SimIssue {
    const issue = this.issue(repoName, number);
    if (!issue) throw new Error(`the simulated world has no issue ${repoName}#${number}`);
    issue.state = 'CLOSED';
    issue.stateReason = options.stateReason ?? 'COMPLETED';
    this.touch(issue);
    issue.closedAt = issue.updatedAt;
    this.recordEvent(issue, 'closed', options.actor, { stateReason: issue.stateReason.toLowerCase() });
    return issue;
  }

  reopenIssue(repoName: string, number: number, options: { actor?: string } = {}): SimIssue {
    const issue = this.issue(repoName, number);
    if (!issue) throw new Error(`the simulated world has no issue ${repoName}#${number}`);
    issue.state = 'OPEN';
    issue.stateReason = 'REOPENED';
    issue.closedAt = null;
    this.touch(issue);
    this.recordEvent(issue, 'reopened', options.actor, { stateReason: 'reopened' });
    return issue;
  }

  /** A comment of the repository by its REST id. */
  comment(
    repoName: string,
    databaseId: number,
  ): { comment: SimComment; item: SimIssueOrPullRequest } | undefined {
    const repo = this.repo(repoName);
    for (const item of repo?.items.values() ?? []) {
      const comment = item.comments.find((c) => c.databaseId === databaseId);
      if (comment) return { comment, item };
    }
    return undefined;
  }

  /** Replaces a comment's body; undefined when the repository has no such comment. */
  updateComment(repoName: string, databaseId: number, body: string): SimComment | undefined {
    const found = this.comment(repoName, databaseId);
    if (!found) return undefined;
    found.comment.body = body;
    found.comment.updatedAt = this.timestamp();
    return found.comment;
  }

  /** Deletes a comment; false when the repository has no such comment. */
  deleteComment(repoName: string, databaseId: number): boolean {
    const found = this.comment(repoName, databaseId);
    if (!found) return false;
    found.item.comments.splice(found.item.comments.indexOf(found.comment), 1);
    return true;
  }

  closePullRequest(repoName: string, number: number): SimPullRequest {
    const pr = this.pullRequest(repoName, number);
    if (!pr) throw new Error(`the simulated world has no pull request ${repoName}#${number}`);
    pr.state = 'CLOSED';
    this.touch(pr);
    pr.closedAt = pr.updatedAt;
    return pr;
  }

  /** Merges a pull request and, as GitHub does, closes the open issues it references. */
  mergePullRequest(repoName: string, number: number): SimPullRequest {
    const pr = this.pullRequest(repoName, number);
    if (!pr) throw new Error(`the simulated world has no pull request ${repoName}#${number}`);
    pr.state = 'MERGED';
    this.touch(pr);
    pr.closedAt = pr.updatedAt;
    pr.mergedAt = pr.updatedAt;
    for (const issueNumber of pr.closingIssues) {
      if (this.issue(repoName, issueNumber)?.state === 'OPEN') this.closeIssue(repoName, issueNumber);
    }
    return pr;
  }

  /** Records that pull request `prNumber` closes issue `issueNumber` (a closing reference). */
  linkPullRequest(repoName: string, prNumber: number, issueNumber: number): void {
    const pr = this.pullRequest(repoName, prNumber);
    if (!pr) throw new Error(`the simulated world has no pull request ${repoName}#${prNumber}`);
    if (!this.issue(repoName, issueNumber)) {
      throw new Error(`the simulated world has no issue ${repoName}#${issueNumber}`);
    }
    if (!pr.closingIssues.includes(issueNumber)) pr.closingIssues.push(issueNumber);
  }

  /** Pull requests that close this issue, in number order. */
  linkedPullRequests(issue: SimIssue, options: { includeClosed?: boolean } = {}): SimPullRequest[] {
    const repo = this.repo(issue.repo);
    if (!repo) return [];
    const out: SimPullRequest[] = [];
    for (const item of repo.items.values()) {
      if (item.__typename !== 'PullRequest' || !item.closingIssues.includes(issue.number)) continue;
      if (item.state === 'CLOSED' && !options.includeClosed) continue;
      out.push(item);
    }
    return out.sort((a, b) => a.number - b.number);
  }

  /** Issues this pull request closes. */
  closingIssues(pr: SimPullRequest): SimIssue[] {
    return pr.closingIssues
      .map((number) => this.issue(pr.repo, number))
      .filter((issue): issue is SimIssue => issue !== undefined);
  }

  /** Adds labels (applied by `actor`, default the item's author, as its timeline shows). */
  addLabels(
    repoName: string,
    number: number,
    names: readonly string[],
    actor?: string,
  ): SimIssueOrPullRequest {
    const item = this.requireItem(repoName, number);
    const repo = this.requireRepo(repoName);
    for (const name of this.labelNames(repo, names)) {
      if (!item.labels.some((l) => l.toLowerCase() === name.toLowerCase())) {
        item.labels.push(name);
        this.recordLabeled(item, [name], actor ?? item.author);
      }
    }
    this.touch(item);
    return item;
  }

  /** Removes a label from an issue; false when the issue did not have it. */
  removeLabel(repoName: string, number: number, name: string, actor?: string): boolean {
    const item = this.requireItem(repoName, number);
    const removed = item.labels.find((l) => l.toLowerCase() === name.toLowerCase());
    if (removed === undefined) return false;
    item.labels = item.labels.filter((l) => l !== removed);
    this.touch(item);
    this.recordEvent(item, 'unlabeled', actor, { label: removed });
    return true;
  }

  updateIssue(
    repoName: string,
    number: number,
    patch: IssuePatch,
    options: { actor?: string } = {},
  ): SimIssueOrPullRequest {
    const item = this.requireItem(repoName, number);
    const repo = this.requireRepo(repoName);
    if (patch.title !== undefined) item.title = patch.title;
    if (patch.body !== undefined) item.body = patch.body;
    if (patch.labels !== undefined) item.labels = this.labelNames(repo, patch.labels);
    if (patch.assignees !== undefined) item.assignees = this.userLogins(patch.assignees);
    if (patch.milestone !== undefined) item.milestone = this.milestoneNumber(repo, patch.milestone);
    this.touch(item);
    if (patch.state !== undefined && item.__typename === 'Issue' && patch.state !== item.state) {
      if (patch.state === 'CLOSED')
        this.closeIssue(repoName, number, {
          stateReason: patch.stateReason ?? undefined,
          actor: options.actor,
        });
      else this.reopenIssue(repoName, number, { actor: options.actor });
    } else if (patch.state !== undefined && item.__typename === 'PullRequest' && item.state !== 'MERGED') {
      if (patch.state === 'CLOSED' && item.state === 'OPEN') this.closePullRequest(repoName, number);
      if (patch.state === 'OPEN' && item.state === 'CLOSED') {
        item.state = 'OPEN';
        item.closedAt = null;
      }
    }
    return item;
  }
}

/**
 * A GitHub the simulator serves: accounts, repositories, issues and pull requests (the classes
 * above, one per part), Projects v2, lookups by node id and fixtures.
 */
export class SimWorld extends SimItems {
  // ── Projects v2 ────────────────────────────────────────────────────────────────────────────

  addProject(owner: string, input: ProjectInput): SimProject {
    const ownerType = this.actor(owner) ? 'User' : 'Organization';
    if (ownerType === 'Organization') this.addOrganization(owner);
    const ownerLogin = this.actor(owner)?.login ?? this.organization(owner)!.login;
    const taken = this.projects.filter((p) => p.owner.toLowerCase() === ownerLogin.toLowerCase());
    const number = input.number ?? Math.max(0, ...taken.map((p) => p.number)) + 1;
    if (taken.some((p) => p.number === number))
      throw new Error(`${ownerLogin} already has project ${number}`);
    const created = this.timestamp();
    const project = this.register<SimProject>('ProjectV2', (id, databaseId) => ({
      __typename: 'ProjectV2',
      id,
      databaseId,
      owner: ownerLogin,
      ownerType,
      number,
      title: input.title,
      closed: false,
      createdAt: created,
      updatedAt: created,
      statusField: this.register<SimStatusField>('ProjectV2SingleSelectField', (fieldId, fieldDbId) => ({
        __typename: 'ProjectV2SingleSelectField',
        id: fieldId,
        databaseId: fieldDbId,
        name: 'Status',
        projectId: id,
        options: (input.statusOptions ?? DEFAULT_STATUS_OPTIONS).map((name, index) => ({
          id: sha1Hex(`${id}:${name}`).slice(0, 8),
          name,
          color: OPTION_COLORS[index % OPTION_COLORS.length]!,
          description: '',
        })),
        createdAt: created,
      })),
      items: [],
    }));
    this.projects.push(project);
    return project;
  }

  /** The project `number` of an organization or user. */
  project(owner: string, number: number): SimProject | undefined {
    return this.projects.find((p) => p.owner.toLowerCase() === owner.toLowerCase() && p.number === number);
  }

  allProjects(): readonly SimProject[] {
    return this.projects;
  }

  protected resolveProject(project: SimProject | string): SimProject {
    if (typeof project !== 'string') return project;
    const match = /^([^/\s]+)\/(\d+)$/.exec(project.trim());
    const found = match ? this.project(match[1]!, Number(match[2])) : undefined;
    if (!found) throw new Error(`the simulated world has no project '${project}' (write owner/number)`);
    return found;
  }

  protected statusOptionId(project: SimProject, status: string | null | undefined): string | null {
    if (status === undefined || status === null) return null;
    const option = project.statusField.options.find((o) => o.name.toLowerCase() === status.toLowerCase());
    if (!option) {
      const names = project.statusField.options.map((o) => o.name).join(', ');
      throw new Error(
        `project ${project.owner}/${project.number} has no Status '${status}' (it has ${names})`,
      );
    }
    return option.id;
  }

  addProjectItem(
    projectRef: SimProject | string,
    contentInput: ProjectItemContentInput,
    options: ProjectItemOptions = {},
  ): SimProjectItem {
    const project = this.resolveProject(projectRef);
    let content: SimProjectItemContent;
    if (typeof contentInput === 'string') {
      const ref = parseItemRef(contentInput);
      const item = this.requireItem(ref.repo, ref.number);
      content = { kind: item.__typename, repo: item.repo, number: item.number };
    } else if ('draft' in contentInput) {
      const draftInput = contentInput.draft;
      const created = this.timestamp();
      const draft = this.register<SimDraftIssue>('DraftIssue', (id) => ({
        __typename: 'DraftIssue',
        id,
        title: draftInput.title,
        body: draftInput.body ?? '',
        creator: this.addUser(draftInput.creator ?? 'octocat').login,
        createdAt: created,
        updatedAt: created,
      }));
      content = { kind: 'DraftIssue', draft };
    } else {
      content = { kind: contentInput.__typename, repo: contentInput.repo, number: contentInput.number };
    }
    if (content.kind !== 'DraftIssue') {
      const { repo, number } = content;
      const existing = project.items.find(
        (i) => i.content.kind !== 'DraftIssue' && i.content.repo === repo && i.content.number === number,
      );
      if (existing) {
        if (options.status !== undefined) this.setProjectItemStatus(existing, options.status);
        if (options.archived !== undefined) existing.isArchived = options.archived;
        return existing;
      }
    }
    const created = this.timestamp();
    const item = this.register<SimProjectItem>('ProjectV2Item', (id, databaseId) => ({
      __typename: 'ProjectV2Item',
      id,
      databaseId,
      projectId: project.id,
      content,
      statusOptionId: this.statusOptionId(project, options.status),
      isArchived: options.archived ?? false,
      createdAt: created,
      updatedAt: created,
    }));
    project.items.push(item);
    project.updatedAt = created;
    return item;
  }

  setProjectItemStatus(item: SimProjectItem, status: string | null): SimProjectItem {
    const project = this.node(item.projectId) as SimProject;
    item.statusOptionId = this.statusOptionId(project, status);
    item.updatedAt = this.timestamp();
    return item;
  }

  archiveProjectItem(item: SimProjectItem, archived = true): SimProjectItem {
    item.isArchived = archived;
    item.updatedAt = this.timestamp();
    return item;
  }

  /** Project items whose content is this issue or pull request. */
  projectItemsFor(item: SimIssueOrPullRequest): SimProjectItem[] {
    const out: SimProjectItem[] = [];
    for (const project of this.projects) {
      for (const projectItem of project.items) {
        const { content } = projectItem;
        if (content.kind !== 'DraftIssue' && content.repo === item.repo && content.number === item.number) {
          out.push(projectItem);
        }
      }
    }
    return out;
  }

  // ── lookups ─────────────────────────────────────────────────────────────────────────────────

  /** Any object by its global node id. */
  node(id: string): SimNode | undefined {
    return this.nodes.get(id);
  }

  // ── fixtures ────────────────────────────────────────────────────────────────────────────────

  /**
   * Adds everything a fixture (format at the top of this file) describes to this world. The fixture
   * is checked against its schema first (src/simulator/fixture-schema.ts); an `Error` names the
   * first problem.
   */
  loadFixture(input: unknown): this {
    const fixture = parseFixture(input);
    for (const user of fixture.users ?? []) this.addUser(user.login, { name: user.name });
    for (const org of fixture.organizations ?? []) this.addOrganization(org.login, { name: org.name });
    for (const [token, login] of Object.entries(fixture.tokens ?? {})) this.addToken(token, login);
    for (const repo of fixture.repos ?? []) this.loadRepo(repo);
    for (const project of fixture.projects ?? []) this.loadProject(project);
    return this;
  }

  protected loadProject(input: FixtureProject): void {
    const project = this.addProject(input.owner, {
      title: input.title,
      number: input.number,
      statusOptions: input.statusOptions,
    });
    for (const item of input.items ?? []) {
      const options = { status: item.status, archived: item.archived === true };
      if ('issue' in item) this.addProjectItem(project, item.issue, options);
      else if ('pullRequest' in item) this.addProjectItem(project, item.pullRequest, options);
      else
        this.addProjectItem(
          project,
          { draft: { title: item.draft.title, body: item.draft.body ?? '' } },
          options,
        );
    }
  }

  protected loadRepo(repo: FixtureRepo): void {
    const name = repo.name;
    this.addRepo(name, {
      defaultBranch: repo.defaultBranch,
      private: repo.private === true,
      ...(repo.gitDir === undefined ? {} : { gitDir: repo.gitDir }),
    });
    for (const labelInput of repo.labels ?? []) {
      const label = typeof labelInput === 'string' ? { name: labelInput } : labelInput;
      this.addLabel(name, label.name, { color: label.color, description: label.description });
    }
    for (const milestone of repo.milestones ?? []) {
      this.addMilestone(name, milestone.title, {
        state: milestone.state === 'CLOSED' ? 'CLOSED' : 'OPEN',
        description: milestone.description,
        dueOn: milestone.dueOn,
      });
    }
    for (const issue of repo.issues ?? []) this.addIssue(name, issue);
    for (const pr of repo.pullRequests ?? []) this.addPullRequest(name, pr);
  }
}

type FixtureRepo = NonNullable<SimulatorFixture['repos']>[number];
type FixtureProject = NonNullable<SimulatorFixture['projects']>[number];

/** A world built from a fixture (a parsed JSON value). */
export function worldFromFixture(fixture: unknown, options: WorldOptions = {}): SimWorld {
  const start = options.start ?? parseFixture(fixture).now;
  return new SimWorld({ ...options, start }).loadFixture(fixture);
}
