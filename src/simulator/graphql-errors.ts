/**
 * GitHub's GraphQL error shapes. graphql-js finds the problems (parse, validation, variables); this
 * module rewrites each into the message, `extensions.code` and `path` GitHub's server produces, so
 * a client's error handling is exercised against what it will really see. The forms:
 *
 *   {"path":["query","repository","issue","titel"],
 *    "extensions":{"code":"undefinedField","typeName":"Issue","fieldName":"titel"},
 *    "locations":[{"line":1,"column":40}],"message":"Field 'titel' doesn't exist on type 'Issue'"}
 *
 * Validation paths start with the operation (`query` or `query Name`) and name fields by alias or
 * name, arguments by name, inline fragments as `... on Type`. Execution errors carry a `type`
 * (`NOT_FOUND`, `EXCESSIVE_PAGINATION`…) and the response path instead.
 */
import {
  type ASTNode,
  BREAK,
  type DocumentNode,
  type FieldNode,
  type GraphQLError,
  type GraphQLSchema,
  Kind,
  Lexer,
  print,
  Source,
  specifiedRules,
  TokenKind,
  TypeInfo,
  type ValidationRule,
  validate,
  visit,
  visitWithTypeInfo,
} from 'graphql';

export interface ErrorLocation {
  line: number;
  column: number;
}

/** One entry of a GraphQL response's `errors`, in GitHub's key order. */
export interface GitHubGraphQLErrorBody {
  type?: string;
  path?: (string | number)[];
  extensions?: Record<string, unknown>;
  locations?: ErrorLocation[];
  message: string;
}

interface Located {
  path: string[];
  ancestors: ASTNode[];
}

function segment(node: ASTNode): string | undefined {
  switch (node.kind) {
    case Kind.OPERATION_DEFINITION:
      return `${node.operation}${node.name ? ` ${node.name.value}` : ''}`;
    case Kind.FRAGMENT_DEFINITION:
      return `fragment ${node.name.value}`;
    case Kind.FIELD:
      return node.alias?.value ?? node.name.value;
    case Kind.ARGUMENT:
      return node.name.value;
    case Kind.INLINE_FRAGMENT:
      return node.typeCondition ? `... on ${node.typeCondition.name.value}` : '...';
    case Kind.FRAGMENT_SPREAD:
      return `... ${node.name.value}`;
    default:
      return undefined;
  }
}

function isAstNode(value: unknown): value is ASTNode {
  return typeof value === 'object' && value !== null && 'kind' in value && !Array.isArray(value);
}

/** The GitHub-style path to `target` and the AST nodes enclosing it (outermost first). */
function locate(document: DocumentNode, target: ASTNode | undefined): Located {
  if (!target) return { path: [], ancestors: [] };
  const stack: string[] = [];
  const pushed: boolean[] = [];
  let found: Located | undefined;
  visit(document, {
    enter(node, _key, parent, _path, ancestors) {
      const label = segment(node);
      pushed.push(label !== undefined);
      if (label !== undefined) stack.push(label);
      if (node === target) {
        const enclosing = [...ancestors, parent].filter(isAstNode);
        found = { path: [...stack], ancestors: [...enclosing, node] };
        return BREAK;
      }
      return undefined;
    },
    leave() {
      if (pushed.pop()) stack.pop();
    },
  });
  return found ?? { path: [], ancestors: [] };
}

function nearest<K extends ASTNode['kind']>(
  ancestors: readonly ASTNode[],
  kind: K,
): Extract<ASTNode, { kind: K }> | undefined {
  for (let i = ancestors.length - 1; i >= 0; i -= 1) {
    const node = ancestors[i]!;
    if (node.kind === kind) return node as Extract<ASTNode, { kind: K }>;
  }
  return undefined;
}

function locationOf(node: ASTNode | undefined, fallback: GraphQLError): ErrorLocation[] | undefined {
  if (node?.loc) return [{ line: node.loc.startToken.line, column: node.loc.startToken.column }];
  return fallback.locations ? fallback.locations.map((l) => ({ line: l.line, column: l.column })) : undefined;
}

/** The declared type (as written in the schema) of an argument node. */
function argumentTypeOf(
  schema: GraphQLSchema,
  document: DocumentNode,
  argument: ASTNode,
): string | undefined {
  const typeInfo = new TypeInfo(schema);
  let found: string | undefined;
  visit(
    document,
    visitWithTypeInfo(typeInfo, {
      Argument(node) {
        if (node !== argument) return undefined;
        found = typeInfo.getArgument()?.type.toString();
        return BREAK;
      },
    }),
  );
  return found;
}

function ruleName(rule: ValidationRule): string {
  return rule.name.replace(/Rule$/, '');
}

/** Rewrites one graphql-js validation error found by `rule` into GitHub's form. */
function mapValidationError(
  schema: GraphQLSchema,
  document: DocumentNode,
  rule: ValidationRule,
  error: GraphQLError,
): GitHubGraphQLErrorBody {
  const node = error.nodes?.[0];
  const where = locate(document, node);
  const message = error.message;
  const base = (extensions: Record<string, unknown>, text: string, at: ASTNode | undefined = node) => ({
    path: where.path,
    extensions,
    locations: locationOf(at, error),
    message: text,
  });
  let match: RegExpExecArray | null;
  switch (ruleName(rule)) {
    case 'FieldsOnCorrectType':
      match = /^Cannot query field "(.+?)" on type "(.+?)"/.exec(message);
      if (match) {
        return base(
          { code: 'undefinedField', typeName: match[2], fieldName: match[1] },
          `Field '${match[1]}' doesn't exist on type '${match[2]}'`,
        );
      }
      break;
    case 'KnownArgumentNames':
      match = /^Unknown argument "(.+?)" on field "(?:.+?)\.(.+?)"/.exec(message);
      if (match) {
        return base(
          { code: 'argumentNotAccepted', name: match[2], typeName: 'Field', argumentName: match[1] },
          `Field '${match[2]}' doesn't accept argument '${match[1]}'`,
        );
      }
      match = /^Unknown argument "(.+?)" on directive "@(.+?)"/.exec(message);
      if (match) {
        return base(
          { code: 'argumentNotAccepted', name: match[2], typeName: 'Directive', argumentName: match[1] },
          `Directive '${match[2]}' doesn't accept argument '${match[1]}'`,
        );
      }
      break;
    case 'KnownTypeNames': {
      match = /^Unknown type "(.+?)"/.exec(message);
      if (!match) break;
      const variable = nearest(where.ancestors, Kind.VARIABLE_DEFINITION);
      if (variable) {
        return base(
          {
            code: 'variableRequiresValidType',
            typeName: match[1],
            variableName: variable.variable.name.value,
          },
          `${match[1]} isn't a defined input type (on $${variable.variable.name.value})`,
          variable,
        );
      }
      return base(
        { code: 'undefinedType', typeName: match[1] },
        `No such type ${match[1]}, so it can't be a fragment condition`,
      );
    }
    case 'VariablesAreInputTypes':
      match = /^Variable "\$(.+?)" cannot be non-input type "(.+?)"/.exec(message);
      if (match) {
        return base(
          { code: 'variableRequiresValidType', typeName: match[2], variableName: match[1] },
          `${match[2]} isn't a valid input type (on $${match[1]})`,
        );
      }
      break;
    case 'ScalarLeafs': {
      const field = node?.kind === Kind.FIELD ? (node as FieldNode) : undefined;
      match = /^Field "(.+?)" must not have a selection since type "(.+?)"/.exec(message);
      if (match && field) {
        const names = (field.selectionSet?.selections ?? []).map((s) =>
          s.kind === Kind.FIELD ? s.name.value : s.kind === Kind.FRAGMENT_SPREAD ? s.name.value : '...',
        );
        const typeName = match[2]!.replace(/[[\]!]/g, '');
        return base(
          { code: 'selectionMismatch', nodeName: `field '${match[1]}'`, typeName },
          `Selections can't be made on scalars (field '${match[1]}' returns ${typeName} but has selections [${names.join(', ')}])`,
        );
      }
      match = /^Field "(.+?)" of type "(.+?)" must have a selection of subfields/.exec(message);
      if (match) {
        const typeName = match[2]!.replace(/[[\]!]/g, '');
        return base(
          { code: 'selectionMismatch', nodeName: `field '${match[1]}'`, typeName },
          `Field must have selections (field '${match[1]}' returns ${typeName} but has no selections. Did you mean '${match[1]} { ... }'?)`,
        );
      }
      break;
    }
    case 'ProvidedRequiredArguments':
      // Grouped per field by `githubValidationErrors`; a lone error still reads right.
      match = /^(Field|Directive) "@?(.+?)" argument "(.+?)" of type/.exec(message);
      if (match) {
        return base(
          { code: 'missingRequiredArguments', className: match[1], name: match[2], arguments: match[3] },
          `${match[1]} '${match[2]}' is missing required arguments: ${match[3]}`,
        );
      }
      break;
    case 'VariablesInAllowedPosition': {
      match = /^Variable "\$(.+?)" of type "(.+?)" used in position expecting type "(.+?)"/.exec(message);
      if (!match) break;
      const usage = error.nodes?.[1] ?? node;
      const at = locate(document, usage);
      const argument = nearest(at.ancestors, Kind.ARGUMENT);
      const argumentName = argument?.name.value ?? match[1];
      return {
        path: argument ? at.path.slice(0, at.path.lastIndexOf(argumentName) + 1) : at.path,
        extensions: {
          code: 'variableMismatch',
          variableName: match[1],
          typeName: match[2],
          argumentName,
          errorMessage: 'Type mismatch',
        },
        locations: locationOf(argument ?? usage, error),
        message: `Type mismatch on variable $${match[1]} and argument ${argumentName} (${match[2]} / ${match[3]})`,
      };
    }
    case 'ValuesOfCorrectType': {
      const argument = nearest(where.ancestors, Kind.ARGUMENT);
      const field = nearest(where.ancestors, Kind.FIELD);
      if (!argument || !field) break;
      const expected = argumentTypeOf(schema, document, argument) ?? 'unknown';
      const argWhere = locate(document, argument);
      return {
        path: argWhere.path,
        extensions: {
          code: 'argumentLiteralsIncompatible',
          typeName: 'Field',
          argumentName: argument.name.value,
        },
        locations: locationOf(argument, error),
        message: `Argument '${argument.name.value}' on Field '${field.name.value}' has an invalid value (${print(argument.value)}). Expected type '${expected}'.`,
      };
    }
    case 'NoUnusedVariables':
      match = /^Variable "\$(.+?)" is never used(?: in operation "(.+?)")?/.exec(message);
      if (match) {
        return base(
          { code: 'variableNotUsed', variableName: match[1] },
          `Variable $${match[1]} is declared by ${match[2] ?? 'anonymous query'} but not used`,
        );
      }
      break;
    case 'NoUndefinedVariables':
      match = /^Variable "\$(.+?)" is not defined(?: by operation "(.+?)")?/.exec(message);
      if (match) {
        return base(
          { code: 'variableNotDefined', variableName: match[1] },
          `Variable $${match[1]} is used by ${match[2] ?? 'anonymous query'} but not declared`,
        );
      }
      break;
    case 'PossibleFragmentSpreads':
      match =
        /^Fragment (?:"(.+?)" )?cannot be spread here as objects of type "(.+?)" can never be of type "(.+?)"/.exec(
          message,
        );
      if (match) {
        return base(
          {
            code: 'cannotSpreadFragment',
            typeName: match[3],
            fragmentName: match[1] ?? 'unknown',
            parentName: match[2],
          },
          `Fragment ${match[1] ?? `on ${match[3]}`} can't be spread inside ${match[2]}`,
        );
      }
      break;
    case 'KnownFragmentNames':
      match = /^Unknown fragment "(.+?)"/.exec(message);
      if (match) {
        return base(
          { code: 'useAndDefineFragment', fragmentName: match[1] },
          `Fragment ${match[1]} was used, but not defined`,
        );
      }
      break;
    case 'NoUnusedFragments':
      match = /^Fragment "(.+?)" is never used/.exec(message);
      if (match) {
        return base(
          { code: 'useAndDefineFragment', fragmentName: match[1] },
          `Fragment ${match[1]} was defined, but not used`,
        );
      }
      break;
    case 'KnownDirectives':
      match = /^Unknown directive "@(.+?)"/.exec(message);
      if (match) {
        return base(
          { code: 'undefinedDirective', directiveName: match[1] },
          `Directive @${match[1]} is not defined`,
        );
      }
      break;
    default:
      break;
  }
  return { path: where.path, locations: locationOf(node, error), message };
}

/**
 * Validates `document` against the schema and returns GitHub-shaped errors (empty when valid).
 * Runs every rule at once; only when something fails does it re-run rule by rule to name the
 * problem the way GitHub does.
 */
export function githubValidationErrors(
  schema: GraphQLSchema,
  document: DocumentNode,
): GitHubGraphQLErrorBody[] {
  if (validate(schema, document).length === 0) return [];
  const out: GitHubGraphQLErrorBody[] = [];
  const missing = new Map<string, GitHubGraphQLErrorBody>();
  for (const rule of specifiedRules) {
    for (const error of validate(schema, document, [rule])) {
      const mapped = mapValidationError(schema, document, rule, error);
      if (mapped.extensions?.code === 'missingRequiredArguments') {
        const key = `${mapped.path?.join('.')}@${mapped.locations?.[0]?.line}:${mapped.locations?.[0]?.column}`;
        const earlier = missing.get(key);
        if (earlier?.extensions) {
          const names = `${earlier.extensions.arguments}, ${mapped.extensions.arguments}`;
          earlier.extensions.arguments = names;
          earlier.message = `${earlier.extensions.className} '${earlier.extensions.name}' is missing required arguments: ${names}`;
          continue;
        }
        missing.set(key, mapped);
      }
      out.push(mapped);
    }
  }
  return out;
}

const TOKEN_NAMES: Partial<Record<string, string>> = {
  [TokenKind.BANG]: 'BANG',
  [TokenKind.DOLLAR]: 'VAR_SIGN',
  [TokenKind.AMP]: 'AMP',
  [TokenKind.PAREN_L]: 'LPAREN',
  [TokenKind.PAREN_R]: 'RPAREN',
  [TokenKind.SPREAD]: 'ELLIPSIS',
  [TokenKind.COLON]: 'COLON',
  [TokenKind.EQUALS]: 'EQUALS',
  [TokenKind.AT]: 'DIR_SIGN',
  [TokenKind.BRACKET_L]: 'LBRACKET',
  [TokenKind.BRACKET_R]: 'RBRACKET',
  [TokenKind.BRACE_L]: 'LCURLY',
  [TokenKind.BRACE_R]: 'RCURLY',
  [TokenKind.PIPE]: 'PIPE',
  [TokenKind.INT]: 'INT',
  [TokenKind.FLOAT]: 'FLOAT',
  [TokenKind.STRING]: 'STRING',
  [TokenKind.BLOCK_STRING]: 'STRING',
};

const KEYWORDS = new Set(['query', 'mutation', 'subscription', 'fragment', 'on', 'true', 'false', 'null']);

/** GitHub's parse error: `Parse error on "}" (RCURLY) at [1, 10]`, or the end-of-document form. */
export function githubParseError(query: string, error: GraphQLError): GitHubGraphQLErrorBody {
  const location = error.locations?.[0];
  if (!location) return { message: 'Parse error' };
  const locations = [{ line: location.line, column: location.column }];
  try {
    const lexer = new Lexer(new Source(query));
    for (let token = lexer.advance(); ; token = lexer.advance()) {
      if (token.kind === TokenKind.EOF) return { message: 'Unexpected end of document', locations };
      if (token.line === location.line && token.column === location.column) {
        const value = token.value ?? token.kind;
        let name = TOKEN_NAMES[token.kind] ?? 'IDENTIFIER';
        if (token.kind === TokenKind.NAME && KEYWORDS.has(token.value)) name = token.value.toUpperCase();
        return {
          message: `Parse error on ${JSON.stringify(value)} (${name}) at [${location.line}, ${location.column}]`,
          locations,
        };
      }
      if (token.line > location.line || (token.line === location.line && token.column > location.column))
        break;
    }
  } catch {
    // a lexical error: the character itself is the problem
  }
  const lines = query.split('\n');
  const char = lines[location.line - 1]?.[location.column - 1] ?? '';
  return {
    message: `Parse error on ${JSON.stringify(char)} (error) at [${location.line}, ${location.column}]`,
    locations,
  };
}

/**
 * GitHub's form for a variable that is missing or of the wrong type:
 * `Variable $number of type Int! was provided invalid value`, with the value and the problem.
 */
export function githubVariableError(
  document: DocumentNode,
  error: GraphQLError,
  inputs: Record<string, unknown>,
): GitHubGraphQLErrorBody {
  const match = /^Variable "\$(.+?)"/.exec(error.message);
  if (!match) return { message: error.message, locations: locationOf(undefined, error) };
  const name = match[1]!;
  let typeName = 'unknown';
  let definition: ASTNode | undefined;
  visit(document, {
    VariableDefinition(node) {
      if (node.variable.name.value !== name) return undefined;
      typeName = print(node.type);
      definition = node;
      return BREAK;
    },
  });
  let explanation = 'Expected value to not be null';
  const detail = /; (.+)$/s.exec(error.message);
  if (detail) explanation = detail[1]!;
  return {
    extensions: { value: inputs[name] ?? null, problems: [{ path: [], explanation }] },
    locations: locationOf(definition, error),
    message: `Variable $${name} of type ${typeName} was provided invalid value`,
  };
}

/** An execution error: `{ type, path, locations, message }` (type only when we set one). */
export function githubExecutionError(error: GraphQLError): GitHubGraphQLErrorBody {
  const type = error.extensions?.type;
  return {
    ...(typeof type === 'string' ? { type } : {}),
    ...(error.path ? { path: [...error.path] } : {}),
    ...(error.locations
      ? { locations: error.locations.map((l) => ({ line: l.line, column: l.column })) }
      : {}),
    message: error.message,
  };
}
