/**
 * What every resolver module shares: the execution context, GitHub's typed errors and Relay
 * pagination. Apart from resolvers.ts so that pr-graphql.ts and resolvers.ts do not import each other.
 */
import { GraphQLError } from 'graphql';
import { decodeCursor, encodeCursor } from './ids.js';
import type { SimActor, SimWorld } from './world.js';

export interface RateLimitSnapshot {
  readonly limit: number;
  readonly cost: number;
  readonly remaining: number;
  readonly used: number;
  readonly resetAt: number;
  readonly nodeCount: number;
}

export interface ResolverContext {
  readonly world: SimWorld;
  readonly viewer: SimActor;
  readonly rateLimit: RateLimitSnapshot;
}

/** An execution error with GitHub's `type` (`NOT_FOUND`, `INVALID_CURSOR_ARGUMENTS`…). */
export function typedError(type: string, message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { type } });
}

interface PageArgs {
  first?: number | null;
  last?: number | null;
  after?: string | null;
  before?: string | null;
}

interface Connection<T> {
  totalCount: number;
  nodes: T[];
  edges: { cursor: string; node: T }[];
  pageInfo: {
    hasNextPage: boolean;
    hasPreviousPage: boolean;
    startCursor: string | null;
    endCursor: string | null;
  };
}

function cursorPosition(cursor: string): number {
  const position = decodeCursor(cursor);
  if (position === undefined)
    throw typedError('INVALID_CURSOR_ARGUMENTS', `\`${cursor}\` does not appear to be a valid cursor.`);
  return position;
}

/** Relay pagination over `all` with opaque cursors (`cursor:N`, base64), as GitHub's search uses. */
export function paginate<T>(all: readonly T[], args: PageArgs): Connection<T> {
  let start = 0;
  let end = all.length;
  if (typeof args.after === 'string') start = Math.min(all.length, cursorPosition(args.after));
  if (typeof args.before === 'string') end = Math.max(start, Math.min(end, cursorPosition(args.before) - 1));
  const windowEnd = end;
  if (typeof args.first === 'number') end = Math.min(end, start + Math.max(0, args.first));
  if (typeof args.last === 'number') start = Math.max(start, end - Math.max(0, args.last));
  if (args.first == null && args.last == null) end = start;
  const nodes = all.slice(start, end);
  const edges = nodes.map((node, index) => ({ cursor: encodeCursor(start + index + 1), node }));
  return {
    totalCount: all.length,
    nodes,
    edges,
    pageInfo: {
      hasNextPage: end < windowEnd || (typeof args.before !== 'string' && end < all.length),
      hasPreviousPage: start > 0,
      startCursor: edges[0]?.cursor ?? null,
      endCursor: edges.at(-1)?.cursor ?? null,
    },
  };
}
