/**
 * Every GraphQL operation curupira sends, as a named constant. A unit test validates each one
 * against GitHub's public schema, so a misspelt field fails in the suite, not in production.
 */

const ISSUE_FIELDS = `
  id
  number
  title
  body
  url
  state
  createdAt
  author { __typename login }
  labels(first: 50) { nodes { name description } }
  assignees(first: 20) { nodes { login } }
  milestone { title }
  repository { nameWithOwner }
`;

const PULL_REQUEST_FIELDS = `
  ${ISSUE_FIELDS}
  isDraft
  headRefName
  baseRefName
  headRefOid
  isCrossRepository
  mergeable
  mergeStateStatus
  additions
  deletions
  changedFiles
`;

const RATE_LIMIT = 'rateLimit { cost remaining resetAt limit used }';

export const SEARCH_ISSUES = `query CurupiraSearchIssues($query: String!, $first: Int!, $after: String) {
  search(type: ISSUE, query: $query, first: $first, after: $after) {
    issueCount
    pageInfo { hasNextPage endCursor }
    nodes {
      __typename
      ... on Issue {${ISSUE_FIELDS}}
    }
  }
  ${RATE_LIMIT}
}`;

export const SEARCH_PULL_REQUESTS = `query CurupiraSearchPullRequests($query: String!, $first: Int!, $after: String) {
  search(type: ISSUE, query: $query, first: $first, after: $after) {
    issueCount
    pageInfo { hasNextPage endCursor }
    nodes {
      __typename
      ... on PullRequest {${PULL_REQUEST_FIELDS}}
    }
  }
  ${RATE_LIMIT}
}`;

/** Only the count: what `doctor` shows per automation, for one point. */
export const SEARCH_COUNT = `query CurupiraSearchCount($query: String!) {
  search(type: ISSUE, query: $query, first: 1) { issueCount }
  ${RATE_LIMIT}
}`;

const PROJECT_ITEMS_SELECTION = `
  id
  title
  number
  url
  items(first: $first, after: $after) {
    totalCount
    pageInfo { hasNextPage endCursor }
    nodes {
      id
      type
      isArchived
      createdAt
      fieldValueByName(name: $statusField) {
        __typename
        ... on ProjectV2ItemFieldSingleSelectValue { name optionId }
      }
      content {
        __typename
        ... on Issue {${ISSUE_FIELDS}}
        ... on PullRequest {${PULL_REQUEST_FIELDS.replace(/\n {2}state\n/, '\n  pullRequestState: state\n')}}
        ... on DraftIssue { id title body createdAt creator { login } }
      }
    }
  }
`;

export const ORGANIZATION_PROJECT_ITEMS = `query CurupiraOrganizationProjectItems($owner: String!, $number: Int!, $statusField: String!, $first: Int!, $after: String) {
  organization(login: $owner) {
    projectV2(number: $number) {${PROJECT_ITEMS_SELECTION}}
  }
  ${RATE_LIMIT}
}`;

export const USER_PROJECT_ITEMS = `query CurupiraUserProjectItems($owner: String!, $number: Int!, $statusField: String!, $first: Int!, $after: String) {
  user(login: $owner) {
    projectV2(number: $number) {${PROJECT_ITEMS_SELECTION}}
  }
  ${RATE_LIMIT}
}`;

export const VIEWER = `query CurupiraViewer {
  viewer { login }
  ${RATE_LIMIT}
}`;

const SCREENING_SELECTION = `
  author { __typename login }
  authorAssociation
  comments(last: $comments) {
    totalCount
    nodes { author { __typename login } authorAssociation createdAt body }
  }
  timelineItems(last: 100, itemTypes: [LABELED_EVENT]) @include(if: $timeline) {
    nodes {
      __typename
      ... on LabeledEvent { createdAt actor { __typename login } label { name } }
    }
  }
`;

/** What screening reads of one issue or pull request at dispatch: comments, authors, who labelled it. */
export const SCREENING_CONTEXT = `query CurupiraScreeningContext($owner: String!, $name: String!, $number: Int!, $comments: Int!, $timeline: Boolean!) {
  repository(owner: $owner, name: $name) {
    issueOrPullRequest(number: $number) {
      __typename
      ... on Issue {${SCREENING_SELECTION}}
      ... on PullRequest {${SCREENING_SELECTION} headRefName}
    }
  }
  ${RATE_LIMIT}
}`;

/** An issue or pull request to read again: its repository (`owner/name`) and number. */
export interface ItemRef {
  readonly repo: string;
  readonly number: number;
}

/** Items one reconciliation request reads at most (as many as GitHub's `nodes(ids:)` takes). */
export const ITEM_STATES_PER_REQUEST = 100;

const ITEM_STATE_FIELDS = `fragment CurupiraItemStateFields on IssueOrPullRequest {
  __typename
  ... on Issue { state }
  ... on PullRequest { pullRequestState: state }
  ... on Labelable { labels(first: 100) { nodes { name } } }
}`;

export interface ItemStatesOperation {
  readonly query: string;
  readonly variables: Record<string, string>;
  /** Each item's answer by `owner/name#number`: its state and labels, or null when GitHub has none. */
  nodes(data: unknown): Map<string, ItemStateNode | null>;
}

/** `owner/name#number`: how `ItemStatesOperation.nodes` names an item. */
export const itemRefKey = (item: ItemRef): string => `${item.repo}#${item.number}`;

/**
 * The state and labels of many issues and pull requests in one request (reconciliation reads every
 * active task's item with one of these per check, not one request per item). Each repository is
 * the alias `r<i>` (owner and name are variables), each item `n<number>` inside it. Its cost is one
 * point per 100 items: the only connection is each item's labels (selected once, on `Labelable`).
 */
export function itemStatesOperation(items: readonly ItemRef[]): ItemStatesOperation {
  const repos = new Map<string, Set<number>>();
  for (const { repo, number } of items) {
    if (!Number.isSafeInteger(number) || number < 1) throw new Error(`not an item number: ${number}`);
    const numbers = repos.get(repo) ?? new Set<number>();
    numbers.add(number);
    repos.set(repo, numbers);
  }
  const variables: Record<string, string> = {};
  const definitions: string[] = [];
  const selections: string[] = [];
  [...repos].forEach(([repo, numbers], i) => {
    const [owner = '', name = ''] = repo.split('/');
    variables[`owner${i}`] = owner;
    variables[`name${i}`] = name;
    definitions.push(`$owner${i}: String!, $name${i}: String!`);
    const fields = [...numbers].map(
      (n) => `    n${n}: issueOrPullRequest(number: ${n}) { ...CurupiraItemStateFields }`,
    );
    selections.push(`  r${i}: repository(owner: $owner${i}, name: $name${i}) {\n${fields.join('\n')}\n  }`);
  });
  const query = `query CurupiraItemStates(${definitions.join(', ')}) {
${selections.join('\n')}
  ${RATE_LIMIT}
}
${ITEM_STATE_FIELDS}`;
  return {
    query,
    variables,
    nodes(data) {
      const answer = (data ?? {}) as Record<string, Record<string, ItemStateNode | null> | null>;
      const found = new Map<string, ItemStateNode | null>();
      [...repos].forEach(([repo, numbers], i) => {
        const repository = answer[`r${i}`] ?? null;
        for (const number of numbers)
          found.set(itemRefKey({ repo, number }), repository?.[`n${number}`] ?? null);
      });
      return found;
    },
  };
}

/** The members of an organization's team (`trusted_authors = ["@org/team"]`). */
export const TEAM_MEMBERS = `query CurupiraTeamMembers($org: String!, $slug: String!, $after: String) {
  organization(login: $org) {
    team(slug: $slug) {
      members(first: 100, after: $after) {
        pageInfo { hasNextPage endCursor }
        nodes { login }
      }
    }
  }
  ${RATE_LIMIT}
}`;

export const OPERATIONS = {
  SEARCH_ISSUES,
  SEARCH_PULL_REQUESTS,
  SEARCH_COUNT,
  ORGANIZATION_PROJECT_ITEMS,
  USER_PROJECT_ITEMS,
  VIEWER,
  SCREENING_CONTEXT,
  TEAM_MEMBERS,
  /** One shape of the generated query (two items of one repository); its tests cover the others. */
  ITEM_STATES: itemStatesOperation([
    { repo: 'acme/api', number: 1 },
    { repo: 'acme/api', number: 2 },
  ]).query,
} as const;

// ---- Response shapes (what the selections above return) ----

export interface RateLimitNode {
  cost: number;
  remaining: number;
  resetAt: string;
  limit: number;
  used: number;
}

export interface IssueNode {
  __typename?: 'Issue';
  id: string;
  number: number;
  title: string;
  body: string | null;
  url: string;
  state: string;
  createdAt: string;
  author: { __typename?: string; login: string } | null;
  labels: { nodes: { name: string; description?: string | null }[] } | null;
  assignees: { nodes: { login: string }[] } | null;
  milestone: { title: string } | null;
  repository: { nameWithOwner: string };
}

export interface PullRequestNode extends Omit<IssueNode, '__typename'> {
  __typename?: 'PullRequest';
  isDraft: boolean;
  headRefName: string;
  baseRefName: string;
  headRefOid: string;
  /** The head branch lives in a fork (the pull request is only reachable as `pull/<n>/head`). */
  isCrossRepository?: boolean;
  mergeable: 'MERGEABLE' | 'CONFLICTING' | 'UNKNOWN';
  mergeStateStatus: string | null;
  additions: number;
  deletions: number;
  changedFiles: number;
}

export interface SearchPage<N> {
  search: {
    issueCount: number;
    pageInfo: { hasNextPage: boolean; endCursor: string | null };
    nodes: (N | { __typename: string } | null)[];
  };
  rateLimit: RateLimitNode | null;
}

export interface DraftIssueNode {
  __typename: 'DraftIssue';
  id: string;
  title: string;
  body: string;
  createdAt: string;
  creator: { login: string } | null;
}

/** In project items, a pull request's `state` is aliased: Issue.state and PullRequest.state have different types. */
export type ProjectPullRequestNode = Omit<PullRequestNode, 'state'> & { pullRequestState: string };

export interface ProjectItemNode {
  id: string;
  type: string;
  isArchived: boolean;
  createdAt: string;
  fieldValueByName: { __typename: string; name?: string | null; optionId?: string | null } | null;
  content:
    | (IssueNode & { __typename: 'Issue' })
    | (ProjectPullRequestNode & { __typename: 'PullRequest' })
    | DraftIssueNode
    | null;
}

export interface ProjectItemsPage {
  projectV2: {
    id: string;
    title: string;
    number: number;
    url: string;
    items: {
      totalCount: number;
      pageInfo: { hasNextPage: boolean; endCursor: string | null };
      nodes: (ProjectItemNode | null)[];
    };
  } | null;
}

export interface ActorNode {
  __typename: string;
  login: string;
}

export interface ScreeningCommentNode {
  author: ActorNode | null;
  authorAssociation: string;
  createdAt: string;
  body: string;
}

export interface ScreeningContextNode {
  __typename: 'Issue' | 'PullRequest';
  author: ActorNode | null;
  authorAssociation: string;
  comments: { totalCount: number; nodes: (ScreeningCommentNode | null)[] };
  timelineItems?: {
    nodes: ({
      __typename: string;
      createdAt?: string;
      actor?: ActorNode | null;
      label?: { name: string };
    } | null)[];
  };
  headRefName?: string;
}

export interface ScreeningContextPage {
  repository: { issueOrPullRequest: ScreeningContextNode | null } | null;
}

/** An issue's or pull request's state and labels, as reconciliation reads them. */
export type ItemStateNode =
  | { __typename: 'Issue'; state: string; labels: { nodes: ({ name: string } | null)[] } | null }
  | {
      __typename: 'PullRequest';
      pullRequestState: string;
      labels: { nodes: ({ name: string } | null)[] } | null;
    };

export interface TeamMembersPage {
  organization: {
    team: {
      members: {
        pageInfo: { hasNextPage: boolean; endCursor: string | null };
        nodes: ({ login: string } | null)[];
      };
    } | null;
  } | null;
}
