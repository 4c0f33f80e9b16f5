/**
 * Resolvers that answer GitHub's schema from the simulated world.
 *
 * One default field resolver serves the whole schema: it looks for `RESOLVERS[Type][field]`; failing
 * that, it passes through a leaf (scalar or enum) property of the same name on the source object,
 * and for plain value objects (connections, edges, page info, commits…) any property. A field the
 * simulator does not model fails loudly with `SIMULATOR_UNSUPPORTED` rather than answering null, so
 * a test never passes on data GitHub would have filled in.
 */
import {
  GraphQLError,
  type GraphQLFieldResolver,
  type GraphQLResolveInfo,
  type GraphQLTypeResolver,
  getNamedType,
  isLeafType,
} from 'graphql';
import { HTML_BASE, isoSeconds, sha1Hex } from './ids.js';
import { mergeability } from './merging.js';
import { PR_GRAPHQL_RESOLVERS, pullRequestFields, timelineItems } from './pr-graphql.js';
import { paginate, type ResolverContext, typedError } from './resolver-kit.js';
import { searchIssues } from './search.js';
import {
  graphqlLogin,
  type SimActor,
  type SimComment,
  type SimDraftIssue,
  type SimIssue,
  type SimIssueOrPullRequest,
  type SimLabel,
  type SimLabeledEvent,
  type SimMilestone,
  type SimOrganization,
  type SimProject,
  type SimProjectItem,
  type SimPullRequest,
  type SimRepository,
  type SimReview,
  type SimStatusField,
  type SimTeam,
} from './world.js';

/** GitHub serves at most this many results of one search, whatever `issueCount` says. */
export const SEARCH_RESULT_CAP = 1000;

type Args = Record<string, unknown>;
type Resolver<S> = (source: S, args: Args, ctx: ResolverContext, info: GraphQLResolveInfo) => unknown;
type ResolverTable<S> = Record<string, Resolver<S>>;

function itemUrl(item: SimIssueOrPullRequest): string {
  return `${HTML_BASE}/${item.repo}/${item.__typename === 'Issue' ? 'issues' : 'pull'}/${item.number}`;
}

function actorUrl(actor: SimActor): string {
  return actor.__typename === 'Bot'
    ? `${HTML_BASE}/apps/${graphqlLogin(actor.login)}`
    : `${HTML_BASE}/${actor.login}`;
}

function projectUrl(project: SimProject): string {
  const kind = project.ownerType === 'Organization' ? 'orgs' : 'users';
  return `${HTML_BASE}/${kind}/${project.owner}/projects/${project.number}`;
}

function avatarUrl(databaseId: number): string {
  return `https://avatars.githubusercontent.com/u/${databaseId}?v=4`;
}

function resourcePath(url: string): string {
  return url.slice(HTML_BASE.length);
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function actorOf(ctx: ResolverContext, login: string): SimActor {
  return ctx.world.actor(login) ?? ctx.world.addUser(login);
}

function ownerOf(ctx: ResolverContext, login: string): SimActor | SimOrganization | null {
  return ctx.world.organization(login) ?? ctx.world.actor(login) ?? null;
}

function repoOf(ctx: ResolverContext, name: string): SimRepository {
  const repo = ctx.world.repo(name);
  if (!repo) throw new GraphQLError(`repository ${name} vanished from the simulated world`);
  return repo;
}

function labelsOf(ctx: ResolverContext, item: SimIssueOrPullRequest): SimLabel[] {
  return item.labels
    .map((name) => ctx.world.label(item.repo, name))
    .filter((label): label is SimLabel => label !== undefined);
}

function association(ctx: ResolverContext, repo: string, login: string): string {
  repoOf(ctx, repo);
  return ctx.world.association(repo, login);
}

function notFound(kind: string, detail: string): GraphQLError {
  return typedError('NOT_FOUND', `Could not resolve to ${kind} ${detail}.`);
}

function ref(repo: string, name: string) {
  return {
    __typename: 'Ref',
    id: `REF_kwDOSIM${Buffer.from(`${repo}:${name}`).toString('base64url')}`,
    name,
    prefix: 'refs/heads/',
    target: { __typename: 'Commit', oid: sha1Hex(`${repo}:${name}`) },
  };
}

function statusValue(ctx: ResolverContext, item: SimProjectItem) {
  if (item.statusOptionId === null) return null;
  const project = ctx.world.node(item.projectId) as SimProject;
  const option = project.statusField.options.find((o) => o.id === item.statusOptionId);
  if (!option) return null;
  return {
    __typename: 'ProjectV2ItemFieldSingleSelectValue',
    id: `PVTFSV_${sha1Hex(`${item.id}:${option.id}`).slice(0, 20)}`,
    databaseId: item.databaseId,
    name: option.name,
    nameHTML: escapeHtml(option.name),
    optionId: option.id,
    color: option.color,
    description: option.description,
    descriptionHTML: escapeHtml(option.description),
    createdAt: item.updatedAt,
    updatedAt: item.updatedAt,
    creator: null,
    field: project.statusField,
    item,
  };
}

/** Fields shared by issues and pull requests. */
function itemResolvers<T extends SimIssueOrPullRequest>(): ResolverTable<T> {
  return {
    fullDatabaseId: (item) => String(item.databaseId),
    url: (item) => itemUrl(item),
    resourcePath: (item) => resourcePath(itemUrl(item)),
    bodyText: (item) => item.body,
    bodyHTML: (item) => (item.body === '' ? '' : `<p dir="auto">${escapeHtml(item.body)}</p>`),
    titleHTML: (item) => escapeHtml(item.title),
    closed: (item) => item.state !== 'OPEN',
    author: (item, _args, ctx) => actorOf(ctx, item.author),
    authorAssociation: (item, _args, ctx) => association(ctx, item.repo, item.author),
    viewerDidAuthor: (item, _args, ctx) => item.author === ctx.viewer.login,
    publishedAt: (item) => item.createdAt,
    lastEditedAt: () => null,
    includesCreatedEdit: () => false,
    createdViaEmail: () => false,
    activeLockReason: () => null,
    labels: (item, args, ctx) => paginate(labelsOf(ctx, item), args),
    assignees: (item, args, ctx) =>
      paginate(
        item.assignees.map((login) => actorOf(ctx, login)),
        args,
      ),
    milestone: (item, _args, ctx) =>
      item.milestone === null ? null : ctx.world.milestone(item.repo, item.milestone),
    comments: (item, args) => paginate(item.comments, args),
    // Labeled events, comments, closed/reopened events; for pull requests reviews, commits, merged
    // (src/simulator/pr-graphql.ts).
    timelineItems: (item, args, ctx) => timelineItems(item, args, ctx),
    repository: (item, _args, ctx) => repoOf(ctx, item.repo),
    projectItems: (item, args, ctx) => {
      const all = ctx.world.projectItemsFor(item);
      return paginate(args.includeArchived === false ? all.filter((i) => !i.isArchived) : all, args);
    },
  };
}

const issueResolvers: ResolverTable<SimIssue> = {
  ...itemResolvers<SimIssue>(),
  stateReason: (issue, args) =>
    issue.stateReason === 'DUPLICATE' && args.enableDuplicate !== true ? 'NOT_PLANNED' : issue.stateReason,
  closedByPullRequestsReferences: (issue, args, ctx) =>
    paginate(ctx.world.linkedPullRequests(issue, { includeClosed: args.includeClosedPrs === true }), args),
};

const pullRequestResolvers: ResolverTable<SimPullRequest> = {
  ...itemResolvers<SimPullRequest>(),
  merged: (pr) => pr.state === 'MERGED',
  // Over a backing bare repository, computed by git (src/simulator/merging.ts).
  mergeable: (pr, _args, ctx) => {
    const merge = mergeability(ctx.world, pr);
    if (!merge) return pr.mergeable;
    return merge.mergeable === null ? 'UNKNOWN' : merge.mergeable ? 'MERGEABLE' : 'CONFLICTING';
  },
  mergeStateStatus: (pr, _args, ctx) =>
    mergeability(ctx.world, pr)?.state.toUpperCase() ?? pr.mergeStateStatus,
  mergedBy: () => null,
  permalink: (pr) => itemUrl(pr),
  isCrossRepository: (pr) => pr.isCrossRepository === true,
  maintainerCanModify: () => false,
  baseRefOid: (pr) => sha1Hex(`${pr.repo}:${pr.baseRefName}`),
  headRef: (pr) => (pr.state === 'MERGED' ? null : ref(pr.repo, pr.headRefName)),
  baseRef: (pr) => ref(pr.repo, pr.baseRefName),
  headRepository: (pr, _args, ctx) => repoOf(ctx, pr.repo),
  baseRepository: (pr, _args, ctx) => repoOf(ctx, pr.repo),
  closingIssuesReferences: (pr, args, ctx) => paginate(ctx.world.closingIssues(pr), args),
  reviews: (pr, args) => {
    const states = Array.isArray(args.states) ? (args.states as string[]) : undefined;
    const author = typeof args.author === 'string' ? args.author : undefined;
    return paginate(
      pr.reviews.filter(
        (r) => (!states || states.includes(r.state)) && (!author || graphqlLogin(r.author) === author),
      ),
      args,
    );
  },
  // commits, statusCheckRollup, headRefOid, latestReviews, latestOpinionatedReviews: from git, CI and
  // the reviews (src/simulator/pr-graphql.ts).
  ...pullRequestFields,
};

const repositoryResolvers: ResolverTable<SimRepository> = {
  fullDatabaseId: (repo) => String(repo.databaseId),
  url: (repo) => `${HTML_BASE}/${repo.nameWithOwner}`,
  resourcePath: (repo) => `/${repo.nameWithOwner}`,
  owner: (repo, _args, ctx) => ownerOf(ctx, repo.owner),
  description: () => null,
  isArchived: () => false,
  isFork: () => false,
  isDisabled: () => false,
  isEmpty: () => false,
  isTemplate: () => false,
  hasIssuesEnabled: () => true,
  hasProjectsEnabled: () => true,
  visibility: (repo) => (repo.isPrivate ? 'PRIVATE' : 'PUBLIC'),
  viewerPermission: () => 'ADMIN',
  defaultBranchRef: (repo) => ref(repo.nameWithOwner, repo.defaultBranch),
  issue: (repo, args, ctx) => {
    const issue = ctx.world.issue(repo.nameWithOwner, Number(args.number));
    if (!issue) throw notFound('an Issue', `with the number of ${args.number}`);
    return issue;
  },
  pullRequest: (repo, args, ctx) => {
    const pr = ctx.world.pullRequest(repo.nameWithOwner, Number(args.number));
    if (!pr) throw notFound('a PullRequest', `with the number of ${args.number}`);
    return pr;
  },
  issueOrPullRequest: (repo, args, ctx) => {
    const item = ctx.world.item(repo.nameWithOwner, Number(args.number));
    if (!item) throw notFound('an issue or pull request', `with the number of ${args.number}`);
    return item;
  },
  labels: (repo, args) => {
    const query = typeof args.query === 'string' ? args.query.toLowerCase() : '';
    return paginate(
      repo.labels.filter((l) => l.name.toLowerCase().includes(query)),
      args,
    );
  },
  label: (repo, args, ctx) => ctx.world.label(repo.nameWithOwner, String(args.name)) ?? null,
  milestone: (repo, args) => repo.milestones.find((m) => m.number === Number(args.number)) ?? null,
  milestones: (repo, args) => {
    const states = Array.isArray(args.states) ? (args.states as string[]) : undefined;
    return paginate(
      repo.milestones.filter((m) => !states || states.includes(m.state)),
      args,
    );
  },
  issues: (repo, args) => paginate(listItems(repo, 'Issue', args), args),
  pullRequests: (repo, args) => paginate(listItems(repo, 'PullRequest', args), args),
};

/** `repository.issues` / `pullRequests`: filtered by states, labels and refs, ordered by `orderBy`. */
function listItems(repo: SimRepository, kind: 'Issue' | 'PullRequest', args: Args): SimIssueOrPullRequest[] {
  const states = Array.isArray(args.states) ? (args.states as string[]) : undefined;
  const labels = Array.isArray(args.labels)
    ? (args.labels as string[]).map((l) => l.toLowerCase())
    : undefined;
  const items = [...repo.items.values()].filter((item) => {
    if (item.__typename !== kind) return false;
    if (states && !states.includes(item.state)) return false;
    if (labels && !item.labels.some((l) => labels.includes(l.toLowerCase()))) return false;
    if (item.__typename === 'PullRequest') {
      if (typeof args.headRefName === 'string' && item.headRefName !== args.headRefName) return false;
      if (typeof args.baseRefName === 'string' && item.baseRefName !== args.baseRefName) return false;
    }
    return true;
  });
  const order = (args.orderBy ?? { field: 'CREATED_AT', direction: 'ASC' }) as {
    field: string;
    direction: string;
  };
  const keyOf = (item: SimIssueOrPullRequest): string | number =>
    order.field === 'UPDATED_AT'
      ? item.updatedAt
      : order.field === 'COMMENTS'
        ? item.comments.length
        : item.createdAt;
  items.sort((a, b) => {
    const ka = keyOf(a);
    const kb = keyOf(b);
    const diff = (ka < kb ? -1 : ka > kb ? 1 : 0) || a.number - b.number;
    return order.direction === 'DESC' ? -diff : diff;
  });
  return items;
}

function projectOf(ctx: ResolverContext, owner: string, number: unknown): SimProject {
  const project = ctx.world.project(owner, Number(number));
  if (!project) throw notFound('a ProjectV2', `with the number ${number}`);
  return project;
}

const userResolvers: ResolverTable<SimActor> = {
  url: (user) => actorUrl(user),
  resourcePath: (user) => resourcePath(actorUrl(user)),
  avatarUrl: (user) => avatarUrl(user.databaseId),
  updatedAt: (user) => user.createdAt,
  isViewer: (user, _args, ctx) => user.login === ctx.viewer.login,
  email: () => '',
  bio: () => null,
  company: () => null,
  location: () => null,
  websiteUrl: () => null,
  twitterUsername: () => null,
  isSiteAdmin: () => false,
  isBountyHunter: () => false,
  isEmployee: () => false,
  isHireable: () => false,
  projectV2: (user, args, ctx) => projectOf(ctx, user.login, args.number),
};

const botResolvers: ResolverTable<SimActor> = {
  login: (bot) => graphqlLogin(bot.login),
  url: (bot) => actorUrl(bot),
  resourcePath: (bot) => resourcePath(actorUrl(bot)),
  avatarUrl: (bot) => avatarUrl(bot.databaseId),
  updatedAt: (bot) => bot.createdAt,
};

const organizationResolvers: ResolverTable<SimOrganization> = {
  url: (org) => `${HTML_BASE}/${org.login}`,
  resourcePath: (org) => `/${org.login}`,
  avatarUrl: (org) => avatarUrl(org.databaseId),
  updatedAt: (org) => org.createdAt,
  description: () => null,
  isVerified: () => false,
  projectV2: (org, args, ctx) => projectOf(ctx, org.login, args.number),
  repository: (org, args, ctx) => ctx.world.repo(`${org.login}/${args.name}`) ?? null,
  team: (org, args, ctx) => ctx.world.team(org.login, String(args.slug)) ?? null,
};

const labelResolvers: ResolverTable<SimLabel> = {
  url: (label) => `${HTML_BASE}/${label.repo}/labels/${encodeURIComponent(label.name)}`,
  resourcePath: (label) => `/${label.repo}/labels/${encodeURIComponent(label.name)}`,
  updatedAt: (label) => label.createdAt,
  isDefault: () => false,
  repository: (label, _args, ctx) => repoOf(ctx, label.repo),
};

const milestoneResolvers: ResolverTable<SimMilestone> = {
  url: (m) => `${HTML_BASE}/${m.repo}/milestone/${m.number}`,
  resourcePath: (m) => `/${m.repo}/milestone/${m.number}`,
  updatedAt: (m) => m.createdAt,
  closed: (m) => m.state === 'CLOSED',
  closedAt: () => null,
  progressPercentage: () => 0,
  repository: (m, _args, ctx) => repoOf(ctx, m.repo),
};

function commentUrl(ctx: ResolverContext, comment: SimComment): string {
  const parent = ctx.world.item(comment.repo, comment.parentNumber);
  return `${parent ? itemUrl(parent) : `${HTML_BASE}/${comment.repo}`}#issuecomment-${comment.databaseId}`;
}

const commentResolvers: ResolverTable<SimComment> = {
  fullDatabaseId: (c) => String(c.databaseId),
  author: (c, _args, ctx) => actorOf(ctx, c.author),
  authorAssociation: (c, _args, ctx) => association(ctx, c.repo, c.author),
  bodyText: (c) => c.body,
  bodyHTML: (c) => `<p dir="auto">${escapeHtml(c.body)}</p>`,
  url: (c, _args, ctx) => commentUrl(ctx, c),
  resourcePath: (c, _args, ctx) => resourcePath(commentUrl(ctx, c)),
  publishedAt: (c) => c.createdAt,
  lastEditedAt: () => null,
  includesCreatedEdit: () => false,
  createdViaEmail: () => false,
  isMinimized: () => false,
  minimizedReason: () => null,
  viewerDidAuthor: (c, _args, ctx) => c.author === ctx.viewer.login,
  repository: (c, _args, ctx) => repoOf(ctx, c.repo),
  issue: (c, _args, ctx) => ctx.world.item(c.repo, c.parentNumber),
  pullRequest: (c, _args, ctx) => ctx.world.pullRequest(c.repo, c.parentNumber) ?? null,
};

const labeledEventResolvers: ResolverTable<SimLabeledEvent> = {
  actor: (e, _args, ctx) => actorOf(ctx, e.actor),
  label: (e, _args, ctx) => ctx.world.label(e.repo, e.label) ?? null,
  labelable: () => null,
};

const teamResolvers: ResolverTable<SimTeam> = {
  combinedSlug: (t) => `${t.org}/${t.slug}`,
  organization: (t, _args, ctx) => ctx.world.organization(t.org),
  members: (t, args, ctx) =>
    paginate(
      t.members.map((login) => actorOf(ctx, login)),
      args,
    ),
};

const reviewResolvers: ResolverTable<SimReview> = {
  author: (r, _args, ctx) => actorOf(ctx, r.author),
  authorAssociation: (r, _args, ctx) => association(ctx, r.repo, r.author),
  bodyText: (r) => r.body,
  createdAt: (r) => r.submittedAt,
  updatedAt: (r) => r.submittedAt,
  publishedAt: (r) => r.submittedAt,
  url: (r) => `${HTML_BASE}/${r.repo}/pull/${r.pullRequestNumber}#pullrequestreview-${r.databaseId}`,
  pullRequest: (r, _args, ctx) => ctx.world.pullRequest(r.repo, r.pullRequestNumber),
  repository: (r, _args, ctx) => repoOf(ctx, r.repo),
};

const projectResolvers: ResolverTable<SimProject> = {
  fullDatabaseId: (p) => String(p.databaseId),
  url: (p) => projectUrl(p),
  resourcePath: (p) => resourcePath(projectUrl(p)),
  closedAt: () => null,
  public: () => false,
  template: () => false,
  readme: () => null,
  shortDescription: () => null,
  owner: (p, _args, ctx) => ownerOf(ctx, p.owner),
  field: (p, args) => (args.name === p.statusField.name ? p.statusField : null),
  fields: (p, args) => paginate([p.statusField], args),
  items: (p, args) => paginate(p.items, args),
};

const statusFieldResolvers: ResolverTable<SimStatusField> = {
  dataType: () => 'SINGLE_SELECT',
  updatedAt: (f) => f.createdAt,
  project: (f, _args, ctx) => ctx.world.node(f.projectId),
  options: (f, args) => {
    const names = Array.isArray(args.names) ? (args.names as string[]) : undefined;
    return f.options
      .filter((o) => !names || names.includes(o.name))
      .map((o) => ({
        __typename: 'ProjectV2SingleSelectFieldOption',
        id: o.id,
        name: o.name,
        nameHTML: escapeHtml(o.name),
        color: o.color,
        description: o.description,
        descriptionHTML: escapeHtml(o.description),
      }));
  },
};

const projectItemResolvers: ResolverTable<SimProjectItem> = {
  fullDatabaseId: (i) => String(i.databaseId),
  type: (i) =>
    i.content.kind === 'Issue' ? 'ISSUE' : i.content.kind === 'PullRequest' ? 'PULL_REQUEST' : 'DRAFT_ISSUE',
  content: (i, _args, ctx) =>
    i.content.kind === 'DraftIssue'
      ? i.content.draft
      : (ctx.world.item(i.content.repo, i.content.number) ?? null),
  creator: () => null,
  project: (i, _args, ctx) => ctx.world.node(i.projectId),
  fieldValueByName: (i, args, ctx) => {
    const project = ctx.world.node(i.projectId) as SimProject;
    return args.name === project.statusField.name ? statusValue(ctx, i) : null;
  },
  fieldValues: (i, args, ctx) => {
    const value = statusValue(ctx, i);
    return paginate(value ? [value] : [], args);
  },
};

const draftResolvers: ResolverTable<SimDraftIssue> = {
  bodyText: (d) => d.body,
  bodyHTML: (d) => (d.body === '' ? '' : `<p dir="auto">${escapeHtml(d.body)}</p>`),
  creator: (d, _args, ctx) => actorOf(ctx, d.creator),
  assignees: (_d, args) => paginate([], args),
};

const queryResolvers: ResolverTable<unknown> = {
  id: () => 'QUERY',
  viewer: (_root, _args, ctx) => ctx.viewer,
  rateLimit: (_root, _args, ctx) => ({
    __typename: 'RateLimit',
    limit: ctx.rateLimit.limit,
    cost: ctx.rateLimit.cost,
    remaining: ctx.rateLimit.remaining,
    used: ctx.rateLimit.used,
    resetAt: isoSeconds(ctx.rateLimit.resetAt),
    nodeCount: ctx.rateLimit.nodeCount,
  }),
  search: (_root, args, ctx) => {
    const counts = {
      issueCount: 0,
      codeCount: 0,
      discussionCount: 0,
      repositoryCount: 0,
      userCount: 0,
      wikiCount: 0,
    };
    if (args.type !== 'ISSUE') return { ...paginate([], args), ...counts };
    const { items } = searchIssues(ctx.world, String(args.query), { viewer: ctx.viewer.login });
    return { ...paginate(items.slice(0, SEARCH_RESULT_CAP), args), ...counts, issueCount: items.length };
  },
  repository: (_root, args, ctx) => {
    const name = `${args.owner}/${args.name}`;
    const repo = ctx.world.repo(name);
    if (!repo) throw notFound('a Repository', `with the name '${name}'`);
    return repo;
  },
  organization: (_root, args, ctx) => {
    const org = ctx.world.organization(String(args.login));
    if (!org) throw notFound('an Organization', `with the login of '${args.login}'`);
    return org;
  },
  user: (_root, args, ctx) => {
    const user = ctx.world.actor(String(args.login));
    if (user?.__typename !== 'User') throw notFound('a User', `with the login of '${args.login}'`);
    return user;
  },
  repositoryOwner: (_root, args, ctx) => ownerOf(ctx, String(args.login)),
  node: (_root, args, ctx) => {
    const node = ctx.world.node(String(args.id));
    if (!node)
      throw typedError('NOT_FOUND', `Could not resolve to a node with the global id of '${args.id}'`);
    return node;
  },
  nodes: (_root, args, ctx) =>
    (args.ids as string[]).map((id) => {
      const node = ctx.world.node(id);
      return node ?? typedError('NOT_FOUND', `Could not resolve to a node with the global id of '${id}'`);
    }),
};

const RESOLVERS: Record<string, ResolverTable<never>> = {
  Query: queryResolvers,
  Issue: issueResolvers,
  PullRequest: pullRequestResolvers,
  Repository: repositoryResolvers,
  User: userResolvers,
  Bot: botResolvers,
  Organization: organizationResolvers,
  Label: labelResolvers,
  Milestone: milestoneResolvers,
  IssueComment: commentResolvers,
  LabeledEvent: labeledEventResolvers,
  Team: teamResolvers,
  PullRequestReview: reviewResolvers,
  ProjectV2: projectResolvers,
  ProjectV2SingleSelectField: statusFieldResolvers,
  ProjectV2Item: projectItemResolvers,
  DraftIssue: draftResolvers,
  ...PR_GRAPHQL_RESOLVERS,
};

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

export const fieldResolver: GraphQLFieldResolver<unknown, ResolverContext> = (source, args, ctx, info) => {
  const table = RESOLVERS[info.parentType.name] as ResolverTable<unknown> | undefined;
  const own = table?.[info.fieldName];
  if (own) return own(source, args, ctx, info);
  if (isRecord(source) && Object.hasOwn(source, info.fieldName)) {
    if (!table || isLeafType(getNamedType(info.returnType))) return source[info.fieldName];
  }
  throw typedError(
    'SIMULATOR_UNSUPPORTED',
    `The curupira GitHub simulator does not model ${info.parentType.name}.${info.fieldName}`,
  );
};

export const typeResolver: GraphQLTypeResolver<unknown, ResolverContext> = (value) =>
  isRecord(value) && typeof value.__typename === 'string' ? value.__typename : undefined;
