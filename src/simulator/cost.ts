/**
 * What GitHub works out before it runs a query: the pagination rules (every connection that selects
 * `nodes` or `edges` needs `first` or `last`, at most 100), the node limit (500,000) and the
 * rate-limit cost. The cost follows GitHub's documented formula: add up the requests needed to
 * fulfil each connection, assuming every `first`/`last` is reached (a connection nested under
 * connections of 100 and 50 needs 100 × 50 requests), divide by 100, round, and charge at least 1.
 */
import {
  type DocumentNode,
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  GraphQLIncludeDirective,
  type GraphQLNamedType,
  type GraphQLSchema,
  GraphQLSkipDirective,
  getArgumentValues,
  getDirectiveValues,
  getNamedType,
  isInterfaceType,
  isObjectType,
  Kind,
  type OperationDefinitionNode,
  type SelectionNode,
  type SelectionSetNode,
} from 'graphql';
import type { GitHubGraphQLErrorBody } from './graphql-errors.js';

export const MAX_PAGE_SIZE = 100;
export const MAX_NODE_COUNT = 500_000;

export interface QueryAnalysis {
  /** Connection fetches the query may need. */
  readonly requests: number;
  /** Rate-limit points: max(1, round(requests / 100)). */
  readonly cost: number;
  /** Nodes the query may return, for the 500,000 limit. */
  readonly nodeCount: number;
  /** Pagination and node-limit violations; the query is not run when there are any. */
  readonly errors: GitHubGraphQLErrorBody[];
  /** The query asked `rateLimit(dryRun: true)`: report the cost without charging it. */
  readonly dryRun: boolean;
}

export function isConnectionType(type: GraphQLNamedType): boolean {
  return isObjectType(type) && type.name.endsWith('Connection') && 'pageInfo' in type.getFields();
}

function locationOf(node: FieldNode): { line: number; column: number }[] | undefined {
  return node.loc ? [{ line: node.loc.startToken.line, column: node.loc.startToken.column }] : undefined;
}

export function analyzeOperation(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  variables: Record<string, unknown>,
): QueryAnalysis {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
  }
  const errors: GitHubGraphQLErrorBody[] = [];
  let requests = 0;
  let nodeCount = 0;
  let dryRun = false;

  const included = (node: SelectionNode) => {
    if (getDirectiveValues(GraphQLSkipDirective, node, variables)?.if === true) return false;
    return getDirectiveValues(GraphQLIncludeDirective, node, variables)?.if !== false;
  };

  const fieldDef = (parent: GraphQLNamedType, name: string): GraphQLField<unknown, unknown> | undefined => {
    if (!isObjectType(parent) && !isInterfaceType(parent)) return undefined;
    return parent.getFields()[name];
  };

  /** True when the selection (fragments included) asks for `nodes` or `edges`. */
  const selectsItems = (selectionSet: SelectionSetNode | undefined, seen: Set<string>): boolean => {
    for (const selection of selectionSet?.selections ?? []) {
      if (selection.kind === Kind.FIELD && ['nodes', 'edges'].includes(selection.name.value)) return true;
      if (selection.kind === Kind.INLINE_FRAGMENT && selectsItems(selection.selectionSet, seen)) return true;
      if (selection.kind === Kind.FRAGMENT_SPREAD && !seen.has(selection.name.value)) {
        const fragment = fragments.get(selection.name.value);
        if (fragment && selectsItems(fragment.selectionSet, new Set([...seen, fragment.name.value])))
          return true;
      }
    }
    return false;
  };

  const walk = (
    selectionSet: SelectionSetNode | undefined,
    parent: GraphQLNamedType,
    multiplier: number,
    path: string[],
    seen: ReadonlySet<string>,
  ): void => {
    for (const selection of selectionSet?.selections ?? []) {
      if (!included(selection)) continue;
      if (selection.kind === Kind.INLINE_FRAGMENT) {
        const type = selection.typeCondition ? schema.getType(selection.typeCondition.name.value) : parent;
        if (type) walk(selection.selectionSet, type, multiplier, path, seen);
        continue;
      }
      if (selection.kind === Kind.FRAGMENT_SPREAD) {
        const fragment = fragments.get(selection.name.value);
        if (!fragment || seen.has(fragment.name.value)) continue;
        const type = schema.getType(fragment.typeCondition.name.value);
        if (type)
          walk(fragment.selectionSet, type, multiplier, path, new Set([...seen, fragment.name.value]));
        continue;
      }
      const field = fieldDef(parent, selection.name.value);
      if (!field) continue;
      const key = selection.alias?.value ?? selection.name.value;
      const args = getArgumentValues(field, selection, variables);
      if (field.name === 'rateLimit' && args.dryRun === true) dryRun = true;
      const type = getNamedType(field.type);
      if (!isConnectionType(type)) {
        if (selection.selectionSet) walk(selection.selectionSet, type, multiplier, [...path, key], seen);
        continue;
      }
      const first = typeof args.first === 'number' ? args.first : undefined;
      const last = typeof args.last === 'number' ? args.last : undefined;
      const fieldPath = [...path, key];
      if (first === undefined && last === undefined) {
        if (selectsItems(selection.selectionSet, new Set())) {
          errors.push({
            type: 'MISSING_PAGINATION_BOUNDARIES',
            path: fieldPath,
            locations: locationOf(selection),
            message: `You must provide a \`first\` or \`last\` value to properly paginate the \`${field.name}\` connection.`,
          });
        }
        requests += multiplier;
        continue;
      }
      for (const [name, value] of [
        ['first', first],
        ['last', last],
      ] as const) {
        if (value !== undefined && value > MAX_PAGE_SIZE) {
          errors.push({
            type: 'EXCESSIVE_PAGINATION',
            path: fieldPath,
            locations: locationOf(selection),
            message: `Requesting ${value} records on the \`${field.name}\` connection exceeds the \`${name}\` limit of ${MAX_PAGE_SIZE} records.`,
          });
        }
      }
      const limit = Math.max(
        0,
        Math.min(first ?? Number.POSITIVE_INFINITY, last ?? Number.POSITIVE_INFINITY),
      );
      requests += multiplier;
      nodeCount += multiplier * limit;
      walk(selection.selectionSet, type, multiplier * limit, fieldPath, seen);
    }
  };

  const root = operation.operation === 'mutation' ? schema.getMutationType() : schema.getQueryType();
  if (root) walk(operation.selectionSet, root, 1, [], new Set());
  if (nodeCount > MAX_NODE_COUNT) {
    errors.push({
      type: 'MAX_NODE_LIMIT_EXCEEDED',
      message: `This query requests up to ${nodeCount.toLocaleString('en-US')} possible nodes which exceeds the maximum limit of ${MAX_NODE_COUNT.toLocaleString('en-US')}.`,
    });
  }
  return { requests, cost: Math.max(1, Math.round(requests / 100)), nodeCount, errors, dryRun };
}
