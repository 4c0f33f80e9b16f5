/**
 * `POST /graphql`: GitHub's pipeline, in GitHub's order. Parse, validate against the real schema,
 * coerce variables, check pagination and the node limit, price the query and check the budget, then
 * execute over the world. Every failure before execution is answered with HTTP 200 and `errors`
 * only (no `data`), as GitHub does; execution errors come with partial `data`.
 */
import {
  type DocumentNode,
  execute,
  GraphQLError,
  getVariableValues,
  Kind,
  type OperationDefinitionNode,
  parse,
} from 'graphql';
import { analyzeOperation } from './cost.js';
import {
  type GitHubGraphQLErrorBody,
  githubExecutionError,
  githubParseError,
  githubValidationErrors,
  githubVariableError,
} from './graphql-errors.js';
import { type RateLimiter, type RateLimitState, rateLimitHeaders } from './rate-limit.js';
import { fieldResolver, typeResolver } from './resolvers.js';
import { githubSchema } from './schema.js';
import type { SimActor, SimWorld } from './world.js';

/**
 * Queries already parsed and found valid against the schema (which never changes in a process),
 * by their text: a client sends the same few queries over and over, and validating one against
 * GitHub's schema costs milliseconds. Only valid documents are kept (errors are worked out again,
 * so each answer names them as before); the oldest goes beyond `VALID_DOCUMENTS_KEPT`.
 */
const validDocuments = new Map<string, DocumentNode>();
const VALID_DOCUMENTS_KEPT = 200;

function rememberValid(query: string, document: DocumentNode): void {
  if (validDocuments.size >= VALID_DOCUMENTS_KEPT) {
    const oldest = validDocuments.keys().next().value;
    if (oldest !== undefined) validDocuments.delete(oldest);
  }
  validDocuments.set(query, document);
}

export interface GraphQLRequest {
  readonly world: SimWorld;
  readonly viewer: SimActor;
  readonly limiter: RateLimiter;
  /** The parsed JSON body. */
  readonly body: unknown;
  /** HTTP status of an exhausted-budget answer: GitHub has sent both 200 and 403. Default 200. */
  readonly rateLimitedStatus?: 200 | 403;
}

export interface GraphQLResponse {
  readonly status: number;
  readonly body: unknown;
  readonly headers: Record<string, string>;
  readonly operationName: string | null;
  readonly query: string | null;
  readonly variables: Record<string, unknown> | null;
  /** Points charged to the viewer's budget (0 when the query never ran). */
  readonly cost: number;
}

const GRAPHQL_DOCS = 'https://docs.github.com/graphql';

function errorsOnly(errors: GitHubGraphQLErrorBody[]): { errors: GitHubGraphQLErrorBody[] } {
  return { errors };
}

function pickOperation(
  document: DocumentNode,
  operationName: string | null,
): OperationDefinitionNode | GitHubGraphQLErrorBody {
  const operations = document.definitions.filter(
    (d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION,
  );
  if (operationName) {
    const named = operations.find((op) => op.name?.value === operationName);
    return named ?? { message: `No operation named "${operationName}"` };
  }
  if (operations.length === 1) return operations[0]!;
  return { message: 'An operation name is required' };
}

export async function handleGraphQL(request: GraphQLRequest): Promise<GraphQLResponse> {
  const { world, viewer, limiter, body } = request;
  const userKey = viewer.login;
  const headersFor = (state: RateLimitState) => rateLimitHeaders(state);
  const record =
    typeof body === 'object' && body !== null && !Array.isArray(body)
      ? (body as Record<string, unknown>)
      : {};
  const query = typeof record.query === 'string' ? record.query : null;
  const requestedName =
    typeof record.operationName === 'string' && record.operationName !== '' ? record.operationName : null;
  const variables =
    typeof record.variables === 'object' && record.variables !== null && !Array.isArray(record.variables)
      ? (record.variables as Record<string, unknown>)
      : {};
  const answer = (
    status: number,
    payload: unknown,
    state: RateLimitState,
    extra: { operationName?: string | null; cost?: number } = {},
  ): GraphQLResponse => ({
    status,
    body: payload,
    headers: headersFor(state),
    operationName: extra.operationName ?? requestedName,
    query,
    variables: query === null ? null : variables,
    cost: extra.cost ?? 0,
  });

  if (query === null) {
    return answer(
      400,
      {
        message: 'A query attribute must be specified and must be a string.',
        documentation_url: GRAPHQL_DOCS,
      },
      limiter.peek(userKey),
    );
  }

  const schema = githubSchema();
  let document = validDocuments.get(query);
  if (document === undefined) {
    try {
      document = parse(query);
    } catch (error) {
      if (!(error instanceof GraphQLError)) throw error;
      return answer(200, errorsOnly([githubParseError(query, error)]), limiter.peek(userKey));
    }
    const invalid = githubValidationErrors(schema, document);
    if (invalid.length > 0) return answer(200, errorsOnly(invalid), limiter.peek(userKey));
    rememberValid(query, document);
  }

  const operation = pickOperation(document, requestedName);
  if (!('kind' in operation)) return answer(200, errorsOnly([operation]), limiter.peek(userKey));
  const operationName = operation.name?.value ?? requestedName;

  const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], variables, {
    maxErrors: 50,
  });
  if (coerced.errors) {
    return answer(
      200,
      errorsOnly(coerced.errors.map((e) => githubVariableError(document, e, variables))),
      limiter.peek(userKey),
      { operationName },
    );
  }

  const analysis = analyzeOperation(schema, document, operation, coerced.coerced);
  if (analysis.errors.length > 0) {
    return answer(200, errorsOnly(analysis.errors), limiter.peek(userKey), { operationName });
  }

  if (!analysis.dryRun && !limiter.allows(userKey, analysis.cost)) {
    return answer(
      request.rateLimitedStatus ?? 200,
      errorsOnly([
        { type: 'RATE_LIMITED', message: `API rate limit exceeded for user ID ${viewer.databaseId}.` },
      ]),
      limiter.peek(userKey),
      { operationName },
    );
  }
  const state = analysis.dryRun ? limiter.peek(userKey) : limiter.charge(userKey, analysis.cost);

  const result = await execute({
    schema,
    document,
    operationName: operation.name?.value,
    rootValue: {},
    contextValue: {
      world,
      viewer,
      rateLimit: { ...state, cost: analysis.cost, nodeCount: analysis.nodeCount },
    },
    variableValues: variables,
    fieldResolver,
    typeResolver,
  });
  const payload: Record<string, unknown> = { data: result.data ?? null };
  if (result.errors && result.errors.length > 0) payload.errors = result.errors.map(githubExecutionError);
  return answer(200, payload, state, { operationName, cost: analysis.dryRun ? 0 : analysis.cost });
}
