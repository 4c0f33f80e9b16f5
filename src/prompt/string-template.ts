/**
 * `${name}` / `$name` templates with the semantics of Python's `string.Template`, so prompts written
 * for the reference implementation render identically:
 *
 * - `$$` is a literal `$`;
 * - `$name` and `${name}` name a placeholder, where a name is ASCII `[_a-zA-Z][_a-zA-Z0-9]*`
 *   (`$name` takes the longest such run: `$ab-c` is `ab` followed by `-c`);
 * - every other `$` (a lone or trailing `$`, `$1`, `${}`, `${a-b}`, `${ a }`) is an invalid placeholder.
 */

import { PromptRenderError } from '../core/errors.js';

/** Where an invalid placeholder is: 1-based line and column of its `$`, counted as Python counts them. */
export interface TemplatePosition {
  line: number;
  column: number;
}

export interface StringTemplateAnalysis {
  /** False when the template holds an invalid placeholder (Python's `Template.is_valid()`). */
  valid: boolean;
  /** Placeholder names, each once, in first-seen order (Python's `Template.get_identifiers()`). */
  identifiers: string[];
  /** The first invalid placeholder, when there is one. */
  invalidAt?: TemplatePosition;
}

/** Groups: 1 escaped `$`, 2 `$name`, 3 `${name}`; a match with none of them is invalid. */
const PLACEHOLDER = /\$(?:(\$)|([_a-zA-Z][_a-zA-Z0-9]*)|\{([_a-zA-Z][_a-zA-Z0-9]*)\}|)/g;

/** Line boundaries of Python's `str.splitlines()` (`\r\n` counts once). */
const LINE_BREAK = /\r\n|[\n\r\u000b\u000c\u001c\u001d\u001e\u0085\u2028\u2029]/g;

type Token =
  | { kind: 'escaped'; index: number }
  | { kind: 'name'; index: number; name: string; length: number }
  | { kind: 'invalid'; index: number };

function* tokens(template: string): Generator<Token> {
  for (const match of template.matchAll(PLACEHOLDER)) {
    const index = match.index;
    if (match[1] !== undefined) {
      yield { kind: 'escaped', index };
      continue;
    }
    const name = match[2] ?? match[3];
    if (name !== undefined) {
      yield { kind: 'name', index, name, length: match[0].length };
      continue;
    }
    yield { kind: 'invalid', index };
  }
}

/** The position of the `$` at `index`: lines and columns as Python reports them (code points, 1-based). */
function positionOf(template: string, index: number): TemplatePosition {
  const before = template.slice(0, index + 1);
  let line = 1;
  let lineStart = 0;
  for (const brk of before.matchAll(LINE_BREAK)) {
    line += 1;
    lineStart = brk.index + brk[0].length;
  }
  return { line, column: [...before.slice(lineStart)].length };
}

function invalidPlaceholderMessage(position: TemplatePosition): string {
  return `Invalid placeholder in string: line ${position.line}, col ${position.column}`;
}

export function analyzeStringTemplate(template: string): StringTemplateAnalysis {
  const identifiers: string[] = [];
  let invalidAt: TemplatePosition | undefined;
  for (const token of tokens(template)) {
    if (token.kind === 'name' && !identifiers.includes(token.name)) identifiers.push(token.name);
    if (token.kind === 'invalid' && invalidAt === undefined) invalidAt = positionOf(template, token.index);
  }
  return invalidAt === undefined ? { valid: true, identifiers } : { valid: false, identifiers, invalidAt };
}

/**
 * Python's `Template.substitute`: left to right, failing at the first placeholder that is invalid
 * or has no value.
 */
export function renderStringTemplate(template: string, values: Readonly<Record<string, string>>): string {
  let output = '';
  let cursor = 0;
  for (const token of tokens(template)) {
    output += template.slice(cursor, token.index);
    if (token.kind === 'invalid') {
      throw new PromptRenderError(invalidPlaceholderMessage(positionOf(template, token.index)));
    }
    if (token.kind === 'escaped') {
      output += '$';
      cursor = token.index + 2;
      continue;
    }
    if (!Object.hasOwn(values, token.name)) {
      throw new PromptRenderError(`no value for placeholder '${token.name}'`);
    }
    output += values[token.name];
    cursor = token.index + token.length;
  }
  return output + template.slice(cursor);
}
