/**
 * Jinja-syntax prompt templates, rendered by nunjucks in a dedicated environment.
 *
 * What differs from a plain nunjucks render, and why:
 * - Printing (`{{ value }}`) flattens the value the way `${…}` templates do: null/undefined → empty,
 *   booleans `true`/`false`, lists and objects compact JSON. Inside expressions values keep their
 *   type, so `join`, `length` and `{% for %}` see real lists.
 * - `default` (and its alias `d`) also replaces `null`: every prompt field is always defined, so a
 *   field without a value (no milestone, no assignee) arrives as `null`, and that is what a prompt
 *   author means by "missing".
 * - `True`, `False` and `None` are accepted as Jinja spells them, and the tests `true`, `false`,
 *   `none` and `boolean` exist.
 * - There is no template loader: `include`, `import`, `from` and `extends` are rejected, so a prompt
 *   can never read a file.
 * - Unknown filters and tests are syntax errors found when the template is analyzed (Jinja does the
 *   same at compile time), not surprises at render time.
 */

import { createRequire } from 'node:module';
import type nunjucksModule from 'nunjucks';
import type { Environment } from 'nunjucks';
import { errorMessage, PromptRenderError } from '../core/errors.js';
import type { FieldValue } from '../core/types.js';
import { createFence, type Fence } from './fence.js';
import { compactJson } from './fields.js';
import { fenceContainer } from './untrusted.js';

/** A Jinja template that does not parse or uses something this environment does not have. */
export class JinjaSyntaxError extends Error {
  /** What is wrong, without the location. */
  readonly detail: string;
  /** 1-based line of the problem in the template, when known. */
  readonly line: number | undefined;
  /** 1-based column of the problem in the template, when known. */
  readonly column: number | undefined;

  constructor(detail: string, line?: number, column?: number) {
    super(line === undefined ? detail : `${detail} (${describePosition(line, column)})`);
    this.name = 'JinjaSyntaxError';
    this.detail = detail;
    this.line = line;
    this.column = column;
  }
}

function describePosition(line: number, column: number | undefined): string {
  return column === undefined ? `line ${line}` : `line ${line}, column ${column}`;
}

export interface JinjaAnalysis {
  /** Top-level names the template reads from its context, each once, in first-seen order. */
  identifiers: string[];
}

// --- the parts of nunjucks' (untyped) internals used here -------------------------------------

interface NjNode {
  readonly typename: string;
  readonly lineno: number;
  readonly colno: number;
  readonly fields: readonly string[];
  [field: string]: unknown;
}

type NjNodeClass = new (lineno: number, colno: number, ...fields: unknown[]) => NjNode;

interface NjTemplate {
  render(context: object): string | null;
}

interface NunjucksInternals {
  parser: { parse(src: string, extensions: unknown[], opts: object): NjNode };
  nodes: { Symbol: NjNodeClass; Literal: NjNodeClass; Filter: NjNodeClass; NodeList: NjNodeClass };
  compiler: { Compiler: new (name: string, throwOnUndefined: boolean) => NjCompiler };
  runtime: { SafeString: abstract new (...args: never[]) => object };
  Template: new (src: { type: 'code'; obj: unknown }, env: Environment, path: string) => NjTemplate;
}

interface NjCompiler {
  compile(node: NjNode): void;
  getCode(): string;
}

interface NjEnvironmentInternals {
  addTest(name: string, test: (value: unknown) => boolean): void;
  globals: Record<string, unknown>;
  filters: Record<string, unknown>;
  tests: Record<string, unknown>;
}

/**
 * nunjucks (about 8 MiB) is loaded the first time a Jinja prompt is analyzed or rendered: a daemon
 * whose prompts are all `${…}` templates never loads it. It is CommonJS, so `require` loads it
 * synchronously and the API stays synchronous.
 */
let loaded: typeof nunjucksModule | undefined;
function nunjucks(): typeof nunjucksModule {
  loaded ??= createRequire(import.meta.url)('nunjucks') as typeof nunjucksModule;
  return loaded;
}
const nj = (): NunjucksInternals => nunjucks() as unknown as NunjucksInternals;

// --- the environment --------------------------------------------------------------------------

const TEMPLATE_NAME = 'prompt';
const PRINT_FILTER = '__curupira_print';
// `dev` keeps nunjucks' own error objects, whose line numbers we report.
const ENVIRONMENT_OPTIONS = { autoescape: false, throwOnUndefined: false, dev: true } as const;
const CONSTANTS: ReadonlyMap<string, boolean | null> = new Map([
  ['True', true],
  ['False', false],
  ['None', null],
]);
const UNSUPPORTED_TAGS: Readonly<Record<string, string>> = {
  Include: 'include',
  Import: 'import',
  FromImport: 'from',
  Extends: 'extends',
  AsyncEach: 'asyncEach',
  AsyncAll: 'asyncAll',
  IfAsync: 'ifAsync',
};

/**
 * The fence of the render in progress (rendering is synchronous): `| fence` and whole fenced lists
 * printed use the run's nonce.
 */
let activeFence: Fence | undefined;

function currentFence(): Fence {
  activeFence ??= createFence();
  return activeFence;
}

function printValue(value: unknown): unknown {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string' || value instanceof nj().runtime.SafeString) return value;
  if (typeof value === 'function') return '';
  if (typeof value === 'object') return fenceContainer(value, currentFence()) ?? compactJson(value);
  return String(value);
}

/** `| fence(label)`: fences by hand (in `raw` mode, or after shaping); a fenced value stays as it is. */
function fenceFilter(value: unknown, label: unknown = 'an issue or pull request'): string {
  if (value === undefined || value === null || value === '') return '';
  const fence = currentFence();
  const text = String(printValue(value));
  return fence.produced(text) ? text : fence.fence(text, String(label));
}

function defaultFilter(value: unknown, fallback: unknown = '', boolean = false): unknown {
  if (boolean) return value || fallback;
  return value === undefined || value === null ? fallback : value;
}

function createEnvironment(): Environment {
  // An empty loader list, not null: null would make nunjucks read templates from ./views.
  const env = new (nunjucks().Environment)([], { ...ENVIRONMENT_OPTIONS });
  env.addFilter(PRINT_FILTER, printValue);
  env.addFilter('default', defaultFilter);
  env.addFilter('d', defaultFilter);
  // With `untrusted_text = "raw"`: `{{ issue_body | truncate(4000) | fence('issue body') }}` shapes
  // the text first, then fences it (by default, untrusted fields arrive fenced already).
  env.addFilter('fence', fenceFilter);
  const internals = env as unknown as NjEnvironmentInternals;
  internals.addTest('true', (value) => value === true);
  internals.addTest('false', (value) => value === false);
  internals.addTest('none', (value) => value === null);
  internals.addTest('boolean', (value) => typeof value === 'boolean');
  return env;
}

let environment: Environment | undefined;

function promptEnvironment(): Environment {
  environment ??= createEnvironment();
  return environment;
}

// --- analysis and preparation -----------------------------------------------------------------

interface Scope {
  readonly names: Set<string>;
  readonly parent: Scope | undefined;
}

function childScope(parent: Scope): Scope {
  return { names: new Set(), parent };
}

function isBound(scope: Scope | undefined, name: string): boolean {
  for (let s = scope; s; s = s.parent) if (s.names.has(name)) return true;
  return false;
}

function isNode(value: unknown): value is NjNode {
  return typeof value === 'object' && value !== null && typeof (value as NjNode).typename === 'string';
}

function failAt(node: NjNode, message: string): never {
  throw new JinjaSyntaxError(message, node.lineno + 1, node.colno + 1);
}

type Replace = (node: NjNode) => void;

/**
 * One walk over the parsed template that (1) collects the free names it reads, (2) rejects what
 * this environment cannot run, and (3) rewrites the tree for rendering: every printed expression
 * goes through the print filter, and `True`/`False`/`None` become literals.
 */
function inspect(root: NjNode, env: NjEnvironmentInternals): string[] {
  const identifiers: string[] = [];

  function read(symbol: NjNode, scope: Scope, replace: Replace): void {
    const name = String(symbol.value);
    if (isBound(scope, name)) return;
    const constant = CONSTANTS.get(name);
    if (constant !== undefined) {
      replace(new (nj().nodes.Literal)(symbol.lineno, symbol.colno, constant));
      return;
    }
    if (Object.hasOwn(env.globals, name)) return;
    if (!identifiers.includes(name)) identifiers.push(name);
  }

  function visitField(node: NjNode, field: string, scope: Scope): void {
    const value = node[field];
    if (Array.isArray(value)) {
      value.forEach((child, index) => {
        visit(child, scope, (next) => {
          value[index] = next;
        });
      });
      return;
    }
    visit(value, scope, (next) => {
      node[field] = next;
    });
  }

  function visitAll(node: NjNode, scope: Scope): void {
    for (const field of node.fields) visitField(node, field, scope);
  }

  function children(node: unknown): NjNode[] {
    if (!isNode(node)) return [];
    const list = node.children;
    return Array.isArray(list) ? list.filter(isNode) : [];
  }

  function bindTargets(target: unknown, scope: Scope): void {
    if (!isNode(target)) return;
    if (target.typename === 'Symbol') {
      scope.names.add(String(target.value));
      return;
    }
    if (target.typename === 'Array') {
      for (const child of children(target)) bindTargets(child, scope);
      return;
    }
    failAt(target, 'can only assign to names');
  }

  function bindSignature(args: unknown, outer: Scope, inner: Scope): void {
    for (const arg of children(args)) {
      if (arg.typename === 'KeywordArgs') {
        for (const pair of children(arg)) {
          visitField(pair, 'value', outer);
          bindTargets(pair.key, inner);
        }
        continue;
      }
      bindTargets(arg, inner);
    }
  }

  function testName(node: NjNode): string {
    const named = node.typename === 'FunCall' && isNode(node.name) ? node.name : node;
    return String(named.value);
  }

  /** Visits branches in their own scopes; afterwards a name counts as set only if every branch set it. */
  function visitBranches(
    branches: readonly { node: NjNode; field: string }[],
    exhaustive: boolean,
    scope: Scope,
  ) {
    const branchScopes = branches.map(({ node, field }) => {
      const branchScope = childScope(scope);
      visitField(node, field, branchScope);
      return branchScope;
    });
    if (!exhaustive || branchScopes.length === 0) return;
    const [first, ...rest] = branchScopes;
    for (const name of first!.names) {
      if (rest.every((other) => other.names.has(name))) scope.names.add(name);
    }
  }

  function visit(value: unknown, scope: Scope, replace: Replace): void {
    if (Array.isArray(value)) {
      value.forEach((child, index) => {
        visit(child, scope, (next) => {
          value[index] = next;
        });
      });
      return;
    }
    if (!isNode(value)) return;
    const node = value;
    const unsupported = UNSUPPORTED_TAGS[node.typename];
    if (unsupported) failAt(node, `the '${unsupported}' tag is not available in prompt templates`);

    switch (node.typename) {
      case 'Symbol':
        read(node, scope, replace);
        return;
      case 'Literal':
      case 'TemplateData':
        return;
      case 'Output': {
        visitAll(node, scope);
        const list = node.children as unknown[];
        list.forEach((child, index) => {
          if (!isNode(child) || child.typename === 'TemplateData') return;
          const name = new (nj().nodes.Symbol)(child.lineno, child.colno, PRINT_FILTER);
          const args = new (nj().nodes.NodeList)(child.lineno, child.colno, [child]);
          list[index] = new (nj().nodes.Filter)(child.lineno, child.colno, name, args);
        });
        return;
      }
      case 'Pair':
        // A dict key or keyword-argument name written as a bare word is a string, not a read.
        if (isNode(node.key) && node.key.typename !== 'Symbol') visitField(node, 'key', scope);
        visitField(node, 'value', scope);
        return;
      case 'Filter': {
        const name = String((node.name as NjNode).value);
        if (!Object.hasOwn(env.filters, name)) failAt(node, `no filter named '${name}'`);
        visitField(node, 'args', scope);
        return;
      }
      case 'Is': {
        visitField(node, 'left', scope);
        const right = node.right as NjNode;
        const name = testName(right);
        if (!Object.hasOwn(env.tests, name)) failAt(right, `no test named '${name}'`);
        if (right.typename === 'FunCall') visitField(right, 'args', scope);
        return;
      }
      case 'For': {
        visitField(node, 'arr', scope);
        const body = childScope(scope);
        bindTargets(node.name, body);
        body.names.add('loop');
        visitField(node, 'body', body);
        visitField(node, 'else_', scope);
        return;
      }
      case 'Set':
        if (node.value) visitField(node, 'value', scope);
        else visitField(node, 'body', scope);
        for (const target of node.targets as unknown[]) bindTargets(target, scope);
        return;
      case 'Macro':
      case 'Caller': {
        if (node.typename === 'Macro') bindTargets(node.name, scope);
        const body = childScope(scope);
        bindSignature(node.args, scope, body);
        body.names.add('caller');
        visitField(node, 'body', body);
        return;
      }
      case 'InlineIf':
        // `a if cond else b`: visited in reading order.
        visitField(node, 'body', scope);
        visitField(node, 'cond', scope);
        visitField(node, 'else_', scope);
        return;
      case 'Block':
        visitField(node, 'body', childScope(scope));
        return;
      case 'If':
        visitField(node, 'cond', scope);
        visitBranches(
          [{ node, field: 'body' }, ...(node.else_ ? [{ node, field: 'else_' }] : [])],
          Boolean(node.else_),
          scope,
        );
        return;
      case 'Switch': {
        visitField(node, 'expr', scope);
        const cases = (node.cases as NjNode[]).filter(isNode);
        for (const c of cases) visitField(c, 'cond', scope);
        visitBranches(
          [
            ...cases.map((c) => ({ node: c, field: 'body' })),
            ...(node.default ? [{ node, field: 'default' }] : []),
          ],
          Boolean(node.default),
          scope,
        );
        return;
      }
      default:
        visitAll(node, scope);
    }
  }

  visit(root, { names: new Set(), parent: undefined }, () => {
    throw new JinjaSyntaxError('unexpected template structure');
  });
  return identifiers;
}

/** The position just after the last character: where a parser that ran out of input stopped. */
function endOf(template: string): { line: number; column: number } {
  const lines = template.split(/\r\n|\r|\n/);
  return { line: lines.length, column: [...lines[lines.length - 1]!].length + 1 };
}

/**
 * A nunjucks parse or compile error as a `JinjaSyntaxError`. The parser reports no position when it
 * ran out of input (an unclosed tag, block or string); the problem is then at the end.
 */
function syntaxError(template: string, error: unknown, atEndWhenUnknown: boolean): JinjaSyntaxError {
  const detail = errorMessage(error).replace(/^parse\w*: /, '');
  const { lineno, colno } = error as { lineno?: unknown; colno?: unknown };
  if (typeof lineno === 'number') {
    return new JinjaSyntaxError(detail, lineno, typeof colno === 'number' ? colno : undefined);
  }
  if (!atEndWhenUnknown) return new JinjaSyntaxError(detail);
  const end = endOf(template);
  return new JinjaSyntaxError(detail, end.line, end.column);
}

interface PreparedTemplate {
  readonly identifiers: string[];
  readonly template: NjTemplate;
}

const CACHE_LIMIT = 64;
const prepared = new Map<string, PreparedTemplate>();

function prepare(source: string): PreparedTemplate {
  const cached = prepared.get(source);
  if (cached) return cached;

  const env = promptEnvironment();
  let root: NjNode;
  try {
    root = nj().parser.parse(source, [], ENVIRONMENT_OPTIONS);
  } catch (error) {
    throw syntaxError(source, error, true);
  }
  const identifiers = inspect(root, env as unknown as NjEnvironmentInternals);

  let template: NjTemplate;
  try {
    const compiler = new (nj().compiler.Compiler)(TEMPLATE_NAME, false);
    compiler.compile(root);
    // nunjucks compiles every template to JavaScript source and loads it the same way.
    const props: unknown = new Function(compiler.getCode())();
    template = new (nj().Template)({ type: 'code', obj: props }, env, TEMPLATE_NAME);
  } catch (error) {
    throw syntaxError(source, error, false);
  }

  const entry = { identifiers, template };
  if (prepared.size >= CACHE_LIMIT) prepared.delete(prepared.keys().next().value!);
  prepared.set(source, entry);
  return entry;
}

/**
 * The names a Jinja template reads from its context: `issue.title` reads `issue`; names the
 * template binds itself (`{% for x in … %}`, `{% set y = … %}`, macro arguments) and built-in
 * globals (`range`, `cycler`, `joiner`) are not reads. Throws `JinjaSyntaxError` when the template
 * does not parse or uses a filter, test or tag this environment does not have.
 */
export function analyzeJinjaTemplate(template: string): JinjaAnalysis {
  return { identifiers: [...prepare(template).identifiers] };
}

/**
 * A render error as `line 3: Unable to call \`foo\`…`. nunjucks prefixes the message with
 * `(prompt) [Line 2, Column 5]` and counts runtime lines from 0 (and omits line 0).
 */
function renderErrorMessage(error: unknown): string {
  const message = errorMessage(error);
  const prefix = /^\([^)\n]*\)(?: \[Line \d+(?:, Column \d+)?\])?\n\s*/.exec(message);
  const detail = prefix ? message.slice(prefix[0].length).replace(/^Error: /, '') : message;
  const { lineno } = error as { lineno?: unknown };
  return typeof lineno === 'number' ? `line ${lineno + 1}: ${detail}` : detail;
}

/**
 * Renders a Jinja template; any problem, including a syntax error, is a `PromptRenderError`.
 * `fence` is the run's (default: a fresh one for this render).
 */
export function renderJinjaTemplate(
  template: string,
  context: Readonly<Record<string, FieldValue>>,
  fence: Fence = createFence(),
): string {
  let entry: PreparedTemplate;
  try {
    entry = prepare(template);
  } catch (error) {
    throw new PromptRenderError(`Jinja syntax error: ${errorMessage(error)}`, { cause: error });
  }
  let output: string | null;
  activeFence = fence;
  try {
    output = entry.template.render({ ...context });
  } catch (error) {
    throw new PromptRenderError(renderErrorMessage(error), { cause: error });
  } finally {
    activeFence = undefined;
  }
  if (typeof output !== 'string') throw new PromptRenderError('the template did not render synchronously');
  return output;
}
