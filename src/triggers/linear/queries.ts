/**
 * The GraphQL operations curupira sends to Linear. Each is validated against Linear's published
 * schema (the excerpt in src/simulator/fixtures/linear-schema.graphql) by the stand-in that answers them in
 * tests, so a field Linear does not have fails there, not in production.
 */

const USER = 'id name displayName admin owner guest app';

export const LINEAR_ISSUES = `query CurupiraLinearIssues($filter: IssueFilter, $first: Int, $after: String) {
  issues(filter: $filter, first: $first, after: $after, orderBy: createdAt) {
    nodes {
      id
      identifier
      number
      title
      description
      url
      priority
      priorityLabel
      createdAt
      state { name type }
      team { key }
      project { name }
      labels(first: 50) { nodes { name } }
      assignee { ${USER} }
      creator { ${USER} }
    }
    pageInfo { hasNextPage endCursor }
  }
}`;

export const LINEAR_ISSUE_CONTEXT = `query CurupiraLinearIssueContext($id: String!, $first: Int) {
  issue(id: $id) {
    identifier
    creator { ${USER} }
    comments(first: $first, orderBy: createdAt) {
      nodes { body createdAt user { ${USER} } botActor { name type } }
    }
  }
}`;

export const LINEAR_TEAM = `query CurupiraLinearTeam($filter: TeamFilter) {
  viewer { ${USER} }
  teams(filter: $filter, first: 1) { nodes { id key name } }
}`;

export const LINEAR_STATES = `query CurupiraLinearStates($filter: WorkflowStateFilter) {
  workflowStates(filter: $filter, first: 1) { nodes { id name } }
}`;

/** The ids of an issue's newest comments: a write-back comment already posted is among them. */
export const LINEAR_COMMENT_IDS = `query CurupiraLinearCommentIds($id: String!, $first: Int) {
  issue(id: $id) {
    state { name }
    comments(first: $first, orderBy: createdAt) { nodes { id } }
  }
}`;

export const LINEAR_COMMENT = `mutation CurupiraLinearComment($input: CommentCreateInput!) {
  commentCreate(input: $input) { success comment { id } }
}`;

export const LINEAR_MOVE = `mutation CurupiraLinearMove($id: String!, $input: IssueUpdateInput!) {
  issueUpdate(id: $id, input: $input) { success }
}`;

export const LINEAR_OPERATIONS = [
  LINEAR_ISSUES,
  LINEAR_ISSUE_CONTEXT,
  LINEAR_TEAM,
  LINEAR_STATES,
  LINEAR_COMMENT_IDS,
  LINEAR_COMMENT,
  LINEAR_MOVE,
] as const;

export interface LinearUser {
  id: string;
  name: string;
  displayName: string;
  admin: boolean;
  owner: boolean;
  guest: boolean;
  app: boolean;
}

export interface LinearIssueNode {
  id: string;
  identifier: string;
  number: number;
  title: string;
  description: string | null;
  url: string;
  priority: number;
  priorityLabel: string;
  createdAt: string;
  state: { name: string; type: string };
  team: { key: string };
  project: { name: string } | null;
  labels: { nodes: { name: string }[] };
  assignee: LinearUser | null;
  creator: LinearUser | null;
}

export interface LinearIssuesPage {
  issues: {
    nodes: LinearIssueNode[];
    pageInfo: { hasNextPage: boolean; endCursor: string | null };
  };
}

export interface LinearIssueContext {
  issue: {
    identifier: string;
    creator: LinearUser | null;
    comments: {
      nodes: {
        body: string;
        createdAt: string;
        user: LinearUser | null;
        botActor: { name: string | null; type: string } | null;
      }[];
    };
  };
}

export interface LinearTeamAnswer {
  viewer: LinearUser;
  teams: { nodes: { id: string; key: string; name: string }[] };
}

export interface LinearCommentIds {
  issue: { state: { name: string }; comments: { nodes: { id: string }[] } };
}

export interface LinearStatesAnswer {
  workflowStates: { nodes: { id: string; name: string }[] };
}
