/**
 * A local stand-in for Linear's GraphQL API, for tests and `curupira simulator --trackers`: it
 * executes each request with graphql-js against Linear's published schema (the excerpt in
 * src/simulator/fixtures/linear-schema.graphql; test/fixtures/linear/README.md), so a
 * query Linear would refuse is refused here, and every answer has Linear's shapes (graphql-js
 * checks each value against the schema's types). Its issues, users and comments live in memory;
 * it counts a request budget and answers with Linear's rate-limit headers and its `RATELIMITED`
 * error, and answers an unknown key with `AUTHENTICATION_ERROR`.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { buildSchema, type GraphQLSchema, graphql, parse, validate } from 'graphql';

const SCHEMA_FILE = new URL('./fixtures/linear-schema.graphql', import.meta.url);
let schema: GraphQLSchema | undefined;

/** Linear's schema, as excerpted in fixtures/linear-schema.graphql. */
export function linearSchema(): GraphQLSchema {
  schema ??= buildSchema(readFileSync(SCHEMA_FILE, 'utf8'));
  return schema;
}

export interface StandInUser {
  id: string;
  name: string;
  displayName: string;
  email: string;
  admin?: boolean;
  owner?: boolean;
  guest?: boolean;
  app?: boolean;
}

export interface StandInComment {
  /** Given by the creator (`commentCreate`'s `id`), else made up. */
  id?: string;
  body: string;
  createdAt: string;
  userId: string;
}

export interface StandInIssue {
  team: string;
  number: number;
  title: string;
  description?: string | null;
  state?: { name: string; type: string };
  project?: string;
  labels?: string[];
  assigneeId?: string;
  creatorId?: string;
  /** 0 none, 1 urgent … 4 low. */
  priority?: number;
  createdAt: string;
  comments?: StandInComment[];
}

export interface StandInWrite {
  kind: 'comment' | 'move';
  issue: string;
  body?: string;
  stateId?: string;
}

const PRIORITY_LABELS = ['No priority', 'Urgent', 'High', 'Medium', 'Low'];

type Filter = Record<string, unknown>;

/** Linear's comparators (`eq`, `neq`, `in`, `nin`, `gt`, `gte`, `lt`, `lte`) on one value. */
function compare(value: unknown, comparator: Filter): boolean {
  for (const [op, operand] of Object.entries(comparator)) {
    const ok = (() => {
      switch (op) {
        case 'eq':
          return value === operand;
        case 'neq':
          return value !== operand;
        case 'in':
          return (operand as unknown[]).includes(value);
        case 'nin':
          return !(operand as unknown[]).includes(value);
        case 'gt':
          return typeof value === 'number' && value > (operand as number);
        case 'gte':
          return typeof value === 'number' && value >= (operand as number);
        case 'lt':
          return typeof value === 'number' && value < (operand as number);
        case 'lte':
          return typeof value === 'number' && value <= (operand as number);
        default:
          throw new Error(`the stand-in does not know the comparator ${op}`);
      }
    })();
    if (!ok) return false;
  }
  return true;
}

export class LinearStandIn {
  readonly users = new Map<string, StandInUser>();
  readonly issues: StandInIssue[] = [];
  readonly writes: StandInWrite[] = [];
  /** Every request's operation name and variables, in order (what a test asserts on). */
  readonly requests: {
    operation: string;
    variables: Record<string, unknown>;
    authorization: string;
    /** When it arrived (epoch ms). */
    at: number;
    /** Refused with `RATELIMITED`. */
    limited?: boolean;
  }[] = [];
  readonly states = [
    { id: 'state-todo', name: 'Todo', type: 'unstarted' },
    { id: 'state-review', name: 'In Review', type: 'started' },
    { id: 'state-done', name: 'Done', type: 'completed' },
  ];
  /** Requests left before `RATELIMITED` (the requests budget); undefined: unlimited. */
  requestsLeft: number | undefined;
  readonly requestLimit = 1500;
  /** When the budget refills (epoch ms), as `X-RateLimit-Requests-Reset` says. */
  resetAt = Date.parse('2030-01-01T00:00:00Z');
  /** The HTTP status of a `RATELIMITED` answer (Linear has sent both 400 and 429). */
  rateLimitStatus: 400 | 429 = 400;

  /**
   * From now on `requests` requests are left, until `resetInMs` from now; then the budget is
   * unlimited again. With `fromRefusal`, the window starts at the first refused request instead
   * (so a test on a slow machine sees a refusal however late the next request comes).
   */
  limit(requests: number, resetInMs: number, { fromRefusal = false } = {}): void {
    this.requestsLeft = requests;
    this.resetAt = fromRefusal ? Number.POSITIVE_INFINITY : Date.now() + resetInMs;
    this.resetOnRefusalMs = fromRefusal ? resetInMs : undefined;
    this.refillAtReset = true;
  }
  private refillAtReset = false;
  private resetOnRefusalMs: number | undefined;
  /** Fail the next N mutations with HTTP 500, after applying them or not. */
  faults: { failNext: number; afterApplying: boolean } = { failNext: 0, afterApplying: false };
  private server: ReturnType<typeof createServer> | undefined;
  url = '';

  constructor(
    readonly key: string,
    readonly viewerId: string,
  ) {}

  addUser(user: StandInUser): void {
    this.users.set(user.id, user);
  }

  addIssue(issue: StandInIssue): string {
    this.issues.push(issue);
    return `${issue.team}-${issue.number}`;
  }

  /** Listens on 127.0.0.1 at `port` (default: a free one); returns the URL to configure. */
  async start(port = 0): Promise<string> {
    const server = createServer((req, res) => void this.handle(req, res));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/graphql`;
    return this.url;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private identifier(issue: StandInIssue): string {
    return `${issue.team}-${issue.number}`;
  }

  private user(id: string | undefined): Record<string, unknown> | null {
    const user = id === undefined ? undefined : this.users.get(id);
    if (!user) return null;
    return {
      admin: false,
      owner: false,
      guest: false,
      app: false,
      ...user,
      isMe: user.id === this.viewerId,
    };
  }

  private matches(issue: StandInIssue, filter: Filter): boolean {
    for (const [key, value] of Object.entries(filter)) {
      const f = value as Filter;
      const ok = (() => {
        switch (key) {
          case 'and':
            return (value as Filter[]).every((part) => this.matches(issue, part));
          case 'or':
            return (value as Filter[]).some((part) => this.matches(issue, part));
          case 'team':
            return compare(issue.team, (f.key ?? {}) as Filter);
          case 'project':
            return issue.project !== undefined && compare(issue.project, (f.name ?? {}) as Filter);
          case 'state': {
            const state = issue.state ?? this.states[0]!;
            return (
              (f.name === undefined || compare(state.name, f.name as Filter)) &&
              (f.type === undefined || compare(state.type, f.type as Filter))
            );
          }
          case 'labels': {
            const some = (f.some as Filter | undefined)?.name as Filter | undefined;
            if (!some) throw new Error('the stand-in knows labels.some.name only');
            return (issue.labels ?? []).some((label) => compare(label, some));
          }
          case 'assignee': {
            const assignee = this.user(issue.assigneeId);
            if (f.null === true) return assignee === null;
            if (!assignee) return false;
            if (f.isMe) return compare(assignee.isMe, f.isMe as Filter);
            if (f.email) return compare(assignee.email, f.email as Filter);
            return true;
          }
          case 'priority':
            return compare(issue.priority ?? 0, f);
          default:
            throw new Error(`the stand-in does not filter on ${key}`);
        }
      })();
      if (!ok) return false;
    }
    return true;
  }

  private issueObject(issue: StandInIssue): Record<string, unknown> {
    const identifier = this.identifier(issue);
    const state = issue.state ?? this.states[0]!;
    return {
      id: `issue-${identifier}`,
      identifier,
      number: issue.number,
      title: issue.title,
      description: issue.description ?? null,
      url: `https://linear.app/acme/issue/${identifier.toLowerCase()}`,
      priority: issue.priority ?? 0,
      priorityLabel: PRIORITY_LABELS[issue.priority ?? 0],
      createdAt: issue.createdAt,
      state: { ...state },
      team: { key: issue.team },
      project: issue.project === undefined ? null : { name: issue.project },
      labels: ({ first }: { first?: number }) => ({
        nodes: (issue.labels ?? []).slice(0, first ?? 50).map((name) => ({ name })),
      }),
      assignee: this.user(issue.assigneeId),
      creator: this.user(issue.creatorId),
      comments: ({ first }: { first?: number }) => ({
        nodes: (issue.comments ?? []).slice(-(first ?? 50)).map((c, i) => ({
          id: c.id ?? `comment-${identifier}-${i}`,
          body: c.body,
          createdAt: c.createdAt,
          user: this.user(c.userId),
          botActor: null,
        })),
      }),
    };
  }

  /** The root resolvers: Linear's queries and the two mutations curupira sends. */
  private root(): Record<string, unknown> {
    return {
      viewer: () => this.user(this.viewerId),
      teams: ({ filter }: { filter?: Filter }) => {
        const keys = [...new Set(this.issues.map((i) => i.team))];
        const key = ((filter?.key as Filter | undefined)?.eq as string | undefined) ?? undefined;
        return {
          nodes: keys
            .filter((k) => key === undefined || k === key)
            .map((k) => ({ id: `team-${k}`, key: k, name: `Team ${k}` })),
        };
      },
      issues: ({ filter, first, after }: { filter?: Filter; first?: number; after?: string }) => {
        // Newest first, as Linear orders by `createdAt`.
        const all = this.issues
          .filter((issue) => !filter || this.matches(issue, filter))
          .sort((a, b) => b.createdAt.localeCompare(a.createdAt));
        const start = after === undefined || after === null ? 0 : Number(after);
        const size = first ?? 50;
        const page = all.slice(start, start + size);
        return {
          nodes: page.map((issue) => this.issueObject(issue)),
          pageInfo: {
            hasNextPage: start + size < all.length,
            endCursor: page.length > 0 ? String(start + page.length) : null,
          },
        };
      },
      issue: ({ id }: { id: string }) => {
        const issue = this.issues.find(
          (i) => this.identifier(i) === id || `issue-${this.identifier(i)}` === id,
        );
        if (!issue) throw new Error('Entity not found: Issue');
        return this.issueObject(issue);
      },
      workflowStates: ({ filter }: { filter?: Filter }) => ({
        nodes: this.states.filter((s) => compare(s.name, ((filter?.name ?? {}) as Filter) || {})),
      }),
      commentCreate: ({ input }: { input: { id?: string; issueId: string; body: string } }) => {
        const issue = this.issues.find((i) => this.identifier(i) === input.issueId);
        if (!issue) throw new Error('Entity not found: Issue');
        // Linear refuses a second entity with an id already taken.
        if (input.id !== undefined && this.issues.some((i) => i.comments?.some((c) => c.id === input.id)))
          throw new Error('Conflict: an entity with this id already exists');
        this.writes.push({ kind: 'comment', issue: input.issueId, body: input.body });
        const id = input.id ?? `comment-${this.writes.length}`;
        issue.comments ??= [];
        issue.comments.push({
          id,
          body: input.body,
          createdAt: new Date().toISOString(),
          userId: this.viewerId,
        });
        return { success: true, comment: { id, body: input.body, createdAt: new Date().toISOString() } };
      },
      issueUpdate: ({ id, input }: { id: string; input: { stateId?: string } }) => {
        this.writes.push({ kind: 'move', issue: id, ...(input.stateId ? { stateId: input.stateId } : {}) });
        const issue = this.issues.find((i) => this.identifier(i) === id);
        const state = this.states.find((s) => s.id === input.stateId);
        if (issue && state) issue.state = { name: state.name, type: state.type };
        return { success: true };
      },
    };
  }

  private rateHeaders(): Record<string, string> {
    const remaining = this.requestsLeft ?? this.requestLimit;
    // Before the first refusal of a `fromRefusal` window, its reset would come that long from now.
    const reset = Number.isFinite(this.resetAt) ? this.resetAt : Date.now() + (this.resetOnRefusalMs ?? 0);
    return {
      'x-ratelimit-requests-limit': String(this.requestLimit),
      'x-ratelimit-requests-remaining': String(Math.max(0, remaining)),
      'x-ratelimit-requests-reset': String(reset),
    };
  }

  private send(res: ServerResponse, status: number, body: unknown): void {
    res.writeHead(status, { 'content-type': 'application/json', ...this.rateHeaders() });
    res.end(JSON.stringify(body));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const authorization = String(req.headers.authorization ?? '');
    let payload: { query?: string; variables?: Record<string, unknown> };
    try {
      payload = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      this.send(res, 400, { errors: [{ message: 'Body is not JSON' }] });
      return;
    }
    const query = payload.query ?? '';
    const variables = payload.variables ?? {};
    const operation = /^\s*(?:query|mutation)\s+(\w+)/.exec(query)?.[1] ?? '';
    const request: (typeof this.requests)[number] = { operation, variables, authorization, at: Date.now() };
    this.requests.push(request);
    if (this.refillAtReset && this.requestsLeft !== undefined && Date.now() >= this.resetAt) {
      this.requestsLeft = undefined;
      this.refillAtReset = false;
    }
    if (authorization !== this.key) {
      this.send(res, 400, {
        errors: [
          {
            message: 'Authentication required, not authenticated',
            extensions: {
              code: 'AUTHENTICATION_ERROR',
              type: 'authentication error',
              userPresentableMessage: 'You need to authenticate to access this operation.',
            },
          },
        ],
      });
      return;
    }
    if (this.requestsLeft !== undefined) {
      if (this.requestsLeft <= 0) {
        request.limited = true;
        if (this.resetOnRefusalMs !== undefined) {
          this.resetAt = request.at + this.resetOnRefusalMs;
          this.resetOnRefusalMs = undefined;
        }
        this.send(res, this.rateLimitStatus, {
          errors: [{ message: 'Rate limit exceeded', extensions: { code: 'RATELIMITED' } }],
        });
        return;
      }
      this.requestsLeft -= 1;
    }
    const errors = validate(linearSchema(), parse(query));
    if (errors.length > 0) {
      this.send(res, 400, {
        errors: errors.map((e) => ({
          message: e.message,
          extensions: { code: 'GRAPHQL_VALIDATION_FAILED' },
        })),
      });
      return;
    }
    const mutation = /^\s*mutation\b/.test(query);
    if (mutation && this.faults.failNext > 0) {
      this.faults.failNext -= 1;
      if (this.faults.afterApplying)
        await graphql({
          schema: linearSchema(),
          source: query,
          variableValues: variables,
          rootValue: this.root(),
        });
      this.send(res, 500, { errors: [{ message: 'Internal server error' }] });
      return;
    }
    const result = await graphql({
      schema: linearSchema(),
      source: query,
      variableValues: variables,
      rootValue: this.root(),
    });
    this.send(res, result.errors ? 400 : 200, result);
  }
}
