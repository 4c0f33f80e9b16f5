/**
 * A local stand-in for Jira Cloud's REST API v3, for tests and `curupira simulator --trackers`.
 * Given a `validator` (the tests pass one built on Jira's published OpenAPI description, the
 * excerpt in src/simulator/fixtures/jira-openapi.json), every request body and every answer is
 * checked against that description: a body Jira would refuse is refused here (400), and an answer
 * of the wrong shape fails the request (500 with the schema errors), so the stand-in cannot drift
 * from Jira. JQL is read for the clauses curupira compiles, and nothing else.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Jira's OpenAPI description, as excerpted (test/fixtures/jira/README.md). */
export const JIRA_OPENAPI = JSON.parse(
  readFileSync(new URL('./fixtures/jira-openapi.json', import.meta.url), 'utf8'),
);

/** Checks a value against a component schema of Jira's description: the errors, or undefined. */
export type JiraValidator = (schema: string, value: unknown) => string | undefined;

/** The schema name an operation's JSON request body or 200 answer refers to. */
export function operationSchema(method: string, path: string, part: 'request' | 'response'): string {
  const operation = JIRA_OPENAPI.paths[path]?.[method];
  const content =
    part === 'request' ? operation?.requestBody?.content : operation?.responses?.['200']?.content;
  const ref: string | undefined = content?.['application/json']?.schema?.$ref;
  if (!ref) throw new Error(`${method} ${path} has no ${part} schema in Jira's description`);
  return ref.replace('#/components/schemas/', '');
}

export interface StandInJiraUser {
  accountId: string;
  displayName: string;
  accountType: 'atlassian' | 'app' | 'customer';
}

export interface StandInJiraIssue {
  key: string;
  summary: string;
  description?: string;
  status?: string;
  /** The status category: `new`, `indeterminate` or `done`. */
  category?: string;
  issueType?: string;
  labels?: string[];
  components?: string[];
  assignee?: string;
  reporter?: string;
  created: string;
  comments?: {
    author: string;
    body: string;
    /** The document it was posted as (a comment curupira wrote); answered as it was. */
    document?: unknown;
    created: string;
    properties?: { key: string; value: unknown }[];
  }[];
}

/** A write curupira made (a comment or a transition), in order. */
export interface StandInJiraWrite {
  kind: 'comment' | 'transition';
  issue: string;
  /** The comment's text (its blocks' text, one a line; a list item's with `- `). */
  body?: string;
  /** The comment as posted (an Atlassian Document). */
  document?: unknown;
  /** The status a transition moved the issue to. */
  status?: string;
}

/** The statuses every issue can move to, each by its own transition. */
const STATUSES = [
  { transition: '11', id: '10000', name: 'To Do', category: 'new' },
  { transition: '21', id: '10001', name: 'In Progress', category: 'indeterminate' },
  { transition: '31', id: '10002', name: 'In Review', category: 'indeterminate' },
  { transition: '41', id: '10003', name: 'Done', category: 'done' },
];

/** A board of Jira Software: its columns in order, each with the names of the statuses mapped to it. */
export interface StandInJiraBoard {
  name: string;
  project: string;
  columns: { name: string; statuses: string[] }[];
}

/** The id of a status of the stand-in's workflow, by name. */
export function jiraStatusId(name: string): string {
  const status = STATUSES.find((s) => s.name === name);
  if (!status) throw new Error(`the stand-in has no status ${name}`);
  return status.id;
}

/** The text of an Atlassian Document: its blocks' text, one a line; a list item's with `- `. */
function textOf(node: unknown): string {
  if (node === null || typeof node !== 'object') return '';
  const { type, text, content } = node as { type?: string; text?: string; content?: unknown[] };
  if (type === 'text') return text ?? '';
  const inner = (content ?? []).map(textOf);
  if (type === 'listItem') return `- ${inner.join('\n')}`;
  if (type === 'paragraph') return inner.join('');
  return inner.join('\n');
}

/**
 * Why Jira would refuse an Atlassian Document (undefined: it would not), for the nodes and marks a
 * comment of curupira's uses, by the rules of the format's published JSON schema: a `doc` of
 * version 1 holds blocks; a list holds list items, each starting with a paragraph; a paragraph
 * holds inline nodes; a text node is never empty; `code` combines with no mark but `link`, and a
 * link has an `href`.
 */
export function adfProblem(node: unknown, where = 'body'): string | undefined {
  if (node === null || typeof node !== 'object') return `${where} is not a node`;
  const { type, version, content, text, marks } = node as {
    type?: string;
    version?: unknown;
    content?: unknown;
    text?: unknown;
    marks?: { type?: string; attrs?: { href?: unknown } }[];
  };
  const children = (allowed: string[]): string | undefined => {
    if (!Array.isArray(content)) return `${where}: ${type} needs a content array`;
    for (const [i, child] of content.entries()) {
      const kind = (child as { type?: string } | null)?.type ?? '?';
      if (!allowed.includes(kind)) return `${where}.content[${i}]: ${kind} is not allowed in ${type}`;
      const problem = adfProblem(child, `${where}.content[${i}]`);
      if (problem) return problem;
    }
    return undefined;
  };
  const blocks = ['paragraph', 'bulletList', 'orderedList', 'heading', 'codeBlock', 'blockquote', 'rule'];
  switch (type) {
    case 'doc':
      if (version !== 1) return `${where}: a doc's version must be 1`;
      return children(blocks);
    case 'bulletList':
    case 'orderedList':
      if (!Array.isArray(content) || content.length === 0) return `${where}: a list needs items`;
      return children(['listItem']);
    case 'listItem':
      if (!Array.isArray(content) || (content[0] as { type?: string } | undefined)?.type !== 'paragraph')
        return `${where}: a list item starts with a paragraph`;
      return children(['paragraph', 'bulletList', 'orderedList', 'codeBlock']);
    case 'paragraph':
      return content === undefined
        ? undefined
        : children(['text', 'hardBreak', 'mention', 'emoji', 'inlineCard']);
    case 'hardBreak':
    case 'rule':
      return undefined;
    case 'text': {
      if (typeof text !== 'string' || text.length === 0) return `${where}: a text node needs text`;
      const kinds = (marks ?? []).map((m) => m.type ?? '?');
      const known = ['strong', 'em', 'code', 'link', 'strike', 'underline', 'subsup', 'textColor'];
      const unknown = kinds.find((k) => !known.includes(k));
      if (unknown) return `${where}: unknown mark ${unknown}`;
      if (kinds.includes('code') && kinds.some((k) => k !== 'code' && k !== 'link'))
        return `${where}: code combines only with link`;
      if ((marks ?? []).some((m) => m.type === 'link' && typeof m.attrs?.href !== 'string'))
        return `${where}: a link needs an href`;
      return undefined;
    }
    default:
      return `${where}: node type ${type} is not one Jira takes here`;
  }
}

function adf(text: string): unknown {
  return {
    type: 'doc',
    version: 1,
    content: text
      .split('\n')
      .map((line) => ({ type: 'paragraph', content: line ? [{ type: 'text', text: line }] : [] })),
  };
}

/** The values of a JQL string literal or list, as curupira writes them. */
function literals(text: string): string[] {
  return [...text.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]!.replace(/\\(.)/g, '$1'));
}

export class JiraStandIn {
  readonly users = new Map<string, StandInJiraUser>();
  readonly issues: StandInJiraIssue[] = [];
  /** Jira Software boards by id (`GET /rest/agile/1.0/board/{id}/configuration`). */
  readonly boards = new Map<number, StandInJiraBoard>();
  readonly requests: {
    method: string;
    path: string;
    authorization: string;
    body: unknown;
    /** When it arrived (epoch ms). */
    at: number;
    /** Answered 429 with `Retry-After`. */
    limited?: boolean;
  }[] = [];
  /** Answer the next N requests with 429 and `Retry-After`. */
  throttleNext = 0;
  readonly writes: StandInJiraWrite[] = [];
  /** Fail the next N write requests (POST of a comment or a transition) with HTTP 500, after applying them or not. */
  faults: { failNext: number; afterApplying: boolean } = { failNext: 0, afterApplying: false };
  retryAfterSeconds = 30;
  private server: ReturnType<typeof createServer> | undefined;
  url = '';

  constructor(
    readonly email: string,
    readonly token: string,
    readonly me: string,
    private readonly validator?: JiraValidator,
  ) {}

  /** The validator's errors for `value` as a `schema`; none without a validator. */
  private invalid(schema: string, value: unknown): string | undefined {
    return this.validator?.(schema, value);
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
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this.url;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private user(id: string | undefined): Record<string, unknown> | null {
    const user = id === undefined ? undefined : this.users.get(id);
    return user
      ? { ...user, active: true, self: `${this.url}/rest/api/3/user?accountId=${user.accountId}` }
      : null;
  }

  /** Whether `issue` matches every clause of curupira's JQL (`… AND … ORDER BY …`). */
  private matches(issue: StandInJiraIssue, jql: string): boolean {
    const where = jql.replace(/\s+ORDER BY .*$/i, '');
    return where.split(/\s+AND\s+/).every((clause) => {
      const values = literals(clause);
      if (/^project = /.test(clause)) return issue.key.startsWith(`${values[0]}-`);
      if (/^issuetype in /.test(clause)) return values.includes(issue.issueType ?? 'Task');
      // A board column's statuses arrive as ids, unquoted: `status in (10001, 10002)`.
      if (/^status in \(\d/.test(clause))
        return (/\(([^)]*)\)/.exec(clause)?.[1] ?? '')
          .split(',')
          .map((id) => id.trim())
          .includes(jiraStatusId(issue.status ?? 'To Do'));
      if (/^status in /.test(clause)) return values.includes(issue.status ?? 'To Do');
      if (clause === 'statusCategory != Done') return (issue.category ?? 'new') !== 'done';
      if (/^labels = /.test(clause)) return (issue.labels ?? []).includes(values[0]!);
      if (/^component in /.test(clause)) return (issue.components ?? []).some((c) => values.includes(c));
      if (clause === 'assignee = currentUser()') return issue.assignee === this.me;
      if (clause === 'assignee is EMPTY') return issue.assignee === undefined;
      if (/^assignee = /.test(clause)) return issue.assignee === values[0];
      throw new Error(`the stand-in does not read the JQL clause ${clause}`);
    });
  }

  private issueBean(issue: StandInJiraIssue): Record<string, unknown> {
    return {
      id: String(10000 + this.issues.indexOf(issue)),
      key: issue.key,
      self: `${this.url}/rest/api/3/issue/${issue.key}`,
      fields: {
        summary: issue.summary,
        description: issue.description === undefined ? null : adf(issue.description),
        status: { id: jiraStatusId(issue.status ?? 'To Do'), name: issue.status ?? 'To Do' },
        issuetype: { name: issue.issueType ?? 'Task' },
        labels: issue.labels ?? [],
        components: (issue.components ?? []).map((name) => ({ name })),
        priority: { name: 'Medium' },
        assignee: this.user(issue.assignee),
        reporter: this.user(issue.reporter),
        created: issue.created,
        project: { key: issue.key.split('-')[0] },
      },
    };
  }

  private send(res: ServerResponse, status: number, body: unknown, schema?: string): void {
    const errors = schema && status === 200 ? this.invalid(schema, body) : undefined;
    if (errors !== undefined) {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ errorMessages: [`stand-in answer is not a ${schema}: ${errors}`] }));
      return;
    }
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  }

  /** A board's configuration as Jira Software answers it (`BoardConfigBean`), checked against its schema. */
  private boardConfiguration(res: ServerResponse, id: string): void {
    if (!/^\d+$/.test(id)) {
      this.send(res, 400, { errorMessages: ['The board id is not valid.'] });
      return;
    }
    const board = this.boards.get(Number(id));
    if (!board) {
      this.send(res, 404, {
        errorMessages: [
          `The requested board cannot be viewed because it either does not exist or you do not have permission to view it.`,
        ],
      });
      return;
    }
    const answer = {
      id: Number(id),
      name: board.name,
      type: 'kanban',
      self: `${this.url}/rest/agile/1.0/board/${id}/configuration`,
      location: { type: 'project', projectKeyOrId: board.project },
      filter: { id: '10100', self: `${this.url}/rest/api/2/filter/10100` },
      subQuery: { query: 'resolution = EMPTY OR resolution changed after -2w' },
      columnConfig: {
        columns: board.columns.map((column) => ({
          name: column.name,
          statuses: column.statuses.map((name) => ({
            id: jiraStatusId(name),
            self: `${this.url}/rest/api/2/status/${jiraStatusId(name)}`,
          })),
        })),
        constraintType: 'issueCount',
      },
      ranking: { rankCustomFieldId: 10019 },
    };
    const wrong = this.invalid('BoardConfigBean', answer);
    if (wrong) {
      this.send(res, 500, { errorMessages: [`stand-in answer is not a BoardConfigBean: ${wrong}`] });
      return;
    }
    this.send(res, 200, answer);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', this.url);
    const method = (req.method ?? 'GET').toLowerCase();
    const authorization = String(req.headers.authorization ?? '');
    const body = text === '' ? undefined : JSON.parse(text);
    const request: (typeof this.requests)[number] = {
      method,
      path: `${url.pathname}${url.search}`,
      authorization,
      body,
      at: Date.now(),
    };
    this.requests.push(request);
    const expected = `Basic ${Buffer.from(`${this.email}:${this.token}`).toString('base64')}`;
    if (authorization !== expected) {
      res.writeHead(401, { 'content-type': 'text/plain' });
      res.end('Client must be authenticated to access this resource.');
      return;
    }
    if (this.throttleNext > 0) {
      this.throttleNext -= 1;
      request.limited = true;
      res.writeHead(429, {
        'content-type': 'application/json',
        'retry-after': String(this.retryAfterSeconds),
      });
      res.end(JSON.stringify({ errorMessages: ['Rate limit exceeded.'] }));
      return;
    }
    const path = url.pathname;
    const boardPath = /^\/rest\/agile\/1\.0\/board\/([^/]+)\/configuration$/.exec(path);
    if (method === 'get' && boardPath) {
      this.boardConfiguration(res, boardPath[1]!);
      return;
    }
    const projectPath = /^\/rest\/api\/3\/project\/([^/]+)$/.exec(path);
    const issuePath = /^\/rest\/api\/3\/issue\/([^/]+)$/.exec(path);
    const commentPath = /^\/rest\/api\/3\/issue\/([^/]+)\/comment$/.exec(path);
    if (method === 'post' && path === '/rest/api/3/search/jql') {
      const errors = this.invalid(operationSchema('post', path, 'request'), body);
      if (errors !== undefined) {
        this.send(res, 400, { errorMessages: [errors] });
        return;
      }
      const {
        jql,
        maxResults = 50,
        nextPageToken,
      } = body as { jql: string; maxResults?: number; nextPageToken?: string };
      const all = this.issues
        .filter((issue) => this.matches(issue, jql))
        .sort((a, b) => a.created.localeCompare(b.created));
      const start =
        nextPageToken === undefined ? 0 : Number(Buffer.from(nextPageToken, 'base64url').toString());
      const page = all.slice(start, start + maxResults);
      const last = start + maxResults >= all.length;
      this.send(
        res,
        200,
        {
          issues: page.map((issue) => this.issueBean(issue)),
          isLast: last,
          ...(last ? {} : { nextPageToken: Buffer.from(String(start + maxResults)).toString('base64url') }),
        },
        operationSchema('post', path, 'response'),
      );
      return;
    }
    if (method === 'get' && path === '/rest/api/3/myself') {
      this.send(res, 200, this.user(this.me), operationSchema('get', path, 'response'));
      return;
    }
    if (method === 'get' && projectPath) {
      const key = decodeURIComponent(projectPath[1]!);
      if (!this.issues.some((i) => i.key.startsWith(`${key}-`))) {
        this.send(res, 404, { errorMessages: ['No project could be found with key.'] });
        return;
      }
      this.send(
        res,
        200,
        { id: '10000', key, name: `Project ${key}`, self: `${this.url}/rest/api/3/project/${key}` },
        operationSchema('get', '/rest/api/3/project/{projectIdOrKey}', 'response'),
      );
      return;
    }
    const issue = (key: string) => this.issues.find((i) => i.key === decodeURIComponent(key));
    if (method === 'get' && issuePath) {
      const found = issue(issuePath[1]!);
      if (!found) return this.send(res, 404, { errorMessages: ['Issue does not exist'] });
      this.send(
        res,
        200,
        this.issueBean(found),
        operationSchema('get', '/rest/api/3/issue/{issueIdOrKey}', 'response'),
      );
      return;
    }
    if (method === 'get' && commentPath) {
      const found = issue(commentPath[1]!);
      if (!found) return this.send(res, 404, { errorMessages: ['Issue does not exist'] });
      const newestFirst = url.searchParams.get('orderBy') === '-created';
      const max = Number(url.searchParams.get('maxResults') ?? 50);
      const comments = [...(found.comments ?? [])].sort((a, b) =>
        newestFirst ? b.created.localeCompare(a.created) : a.created.localeCompare(b.created),
      );
      this.send(
        res,
        200,
        {
          startAt: 0,
          maxResults: max,
          total: comments.length,
          comments: comments.slice(0, max).map((c, i) => ({
            id: String(i + 1),
            author: this.user(c.author),
            body: c.document ?? adf(c.body),
            created: c.created,
            ...(url.searchParams.get('expand') === 'properties' ? { properties: c.properties ?? [] } : {}),
          })),
        },
        operationSchema('get', '/rest/api/3/issue/{issueIdOrKey}/comment', 'response'),
      );
      return;
    }
    const transitionsPath = /^\/rest\/api\/3\/issue\/([^/]+)\/transitions$/.exec(path);
    if (method === 'get' && transitionsPath) {
      const found = issue(transitionsPath[1]!);
      if (!found) return this.send(res, 404, { errorMessages: ['Issue does not exist'] });
      this.send(
        res,
        200,
        {
          transitions: STATUSES.map((s) => ({
            id: s.transition,
            name: `Move to ${s.name}`,
            to: { name: s.name, statusCategory: { key: s.category } },
          })),
        },
        operationSchema('get', '/rest/api/3/issue/{issueIdOrKey}/transitions', 'response'),
      );
      return;
    }
    if (method === 'post' && (commentPath || transitionsPath)) {
      const template = commentPath
        ? '/rest/api/3/issue/{issueIdOrKey}/comment'
        : '/rest/api/3/issue/{issueIdOrKey}/transitions';
      const errors =
        this.invalid(operationSchema('post', template, 'request'), body) ??
        (commentPath ? adfProblem((body as { body?: unknown }).body) : undefined);
      if (errors !== undefined) {
        this.send(res, 400, { errorMessages: [errors] });
        return;
      }
      const found = issue((commentPath ?? transitionsPath)![1]!);
      if (!found) return this.send(res, 404, { errorMessages: ['Issue does not exist'] });
      const apply = (): boolean => {
        if (commentPath) {
          const { body: doc, properties } = body as {
            body: unknown;
            properties?: { key: string; value: unknown }[];
          };
          const text = textOf(doc);
          found.comments ??= [];
          found.comments.push({
            author: this.me,
            body: text,
            document: doc,
            created: new Date().toISOString(),
            ...(properties ? { properties } : {}),
          });
          this.writes.push({ kind: 'comment', issue: found.key, body: text, document: doc });
          return true;
        }
        const id = (body as { transition?: { id?: string } }).transition?.id;
        const to = STATUSES.find((s) => s.transition === id);
        if (!to) return false;
        found.status = to.name;
        found.category = to.category;
        this.writes.push({ kind: 'transition', issue: found.key, status: to.name });
        return true;
      };
      if (this.faults.failNext > 0) {
        this.faults.failNext -= 1;
        if (this.faults.afterApplying) apply();
        this.send(res, 500, { errorMessages: ['Internal server error'] });
        return;
      }
      if (!apply()) return this.send(res, 400, { errorMessages: ['Transition id is not valid'] });
      if (commentPath) this.send(res, 201, { id: String(found.comments!.length), body: body });
      else {
        res.writeHead(204);
        res.end();
      }
      return;
    }
    this.send(res, 404, { errorMessages: [`the stand-in does not answer ${method.toUpperCase()} ${path}`] });
  }
}
