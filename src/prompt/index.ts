/**
 * Prompt templates: the API the rest of curupira uses.
 *
 * Two syntaxes, as the settings documentation allows: `${name}` templates with Python
 * `string.Template` semantics (`template`), and Jinja syntax (`jinja`). With `auto`, a prompt that
 * contains `{{`, `{%` or `{#` is Jinja, anything else is a `${…}` template.
 *
 * Checked when the settings file loads (`analyzePrompt` + `unknownPlaceholders`), rendered for each
 * run (`renderPrompt`).
 */

import { errorMessage, PromptRenderError } from '../core/errors.js';
import type { FieldValue } from '../core/types.js';
import { flattenFields } from './fields.js';
import { analyzeJinjaTemplate, JinjaSyntaxError, renderJinjaTemplate } from './jinja.js';
import { analyzeStringTemplate, renderStringTemplate } from './string-template.js';
import { fenceOfContext } from './untrusted.js';

export { createFence, type Fence, fenceUntrusted } from './fence.js';
export { flattenFields, flattenValue } from './fields.js';
export { JinjaSyntaxError } from './jinja.js';
export { BODY_CAP_CHARS, capText, type GuardOptions, guardUntrusted } from './untrusted.js';

export type PromptSyntax = 'template' | 'jinja';
export type PromptSyntaxSetting = 'auto' | PromptSyntax;

export interface PromptAnalysis {
  syntax: PromptSyntax;
  /** Names the prompt reads, each once, in first-seen order. */
  placeholders: string[];
}

/** A prompt that cannot be used: empty, an invalid `$` placeholder, or a Jinja syntax error. */
export class PromptTemplateError extends Error {
  /** 1-based line in the prompt text, when known. */
  readonly line: number | undefined;
  /** 1-based column in the prompt text, when known. */
  readonly column: number | undefined;

  constructor(message: string, position?: { line?: number; column?: number }) {
    super(message);
    this.name = 'PromptTemplateError';
    this.line = position?.line;
    this.column = position?.column;
  }
}

const JINJA_MARKERS = ['{{', '{%', '{#'] as const;

export function resolveSyntax(template: string, setting: PromptSyntaxSetting): PromptSyntax {
  if (setting !== 'auto') return setting;
  return JINJA_MARKERS.some((marker) => template.includes(marker)) ? 'jinja' : 'template';
}

/** Checks a prompt and lists the placeholders it reads; throws `PromptTemplateError` when it is unusable. */
export function analyzePrompt(template: string, setting: PromptSyntaxSetting = 'auto'): PromptAnalysis {
  if (template.trim() === '') throw new PromptTemplateError('prompt must not be empty');
  const syntax = resolveSyntax(template, setting);
  if (syntax === 'template') {
    const analysis = analyzeStringTemplate(template);
    if (analysis.invalidAt) {
      const { line, column } = analysis.invalidAt;
      throw new PromptTemplateError(
        `prompt contains an invalid template placeholder at line ${line}, column ${column} (write $$ for a literal $)`,
        analysis.invalidAt,
      );
    }
    return { syntax, placeholders: analysis.identifiers };
  }
  try {
    return { syntax, placeholders: analyzeJinjaTemplate(template).identifiers };
  } catch (error) {
    if (!(error instanceof JinjaSyntaxError)) throw error;
    throw new PromptTemplateError(`prompt has a Jinja syntax error: ${error.message}`, {
      line: error.line,
      column: error.column,
    });
  }
}

/**
 * Renders a prompt for one task. `${…}` templates get every value flattened to text; Jinja gets the
 * values as they are (lists stay lists) and flattens only what it prints. A context made by
 * `guardUntrusted` renders with its run's fence (Jinja's `| fence` uses the same nonce).
 */
export function renderPrompt(
  template: string,
  context: Readonly<Record<string, FieldValue>>,
  setting: PromptSyntaxSetting = 'auto',
  automationId?: string,
): string {
  try {
    if (resolveSyntax(template, setting) === 'jinja')
      return renderJinjaTemplate(template, context, fenceOfContext(context));
    return renderStringTemplate(template, flattenFields(context));
  } catch (error) {
    const subject = automationId === undefined ? 'prompt' : `prompt for ${automationId}`;
    throw new PromptRenderError(`could not render ${subject}: ${errorMessage(error)}`, { cause: error });
  }
}

/** Placeholders the prompt reads that are not among `allowed`, each once, sorted. */
export function unknownPlaceholders(analysis: PromptAnalysis, allowed: ReadonlySet<string>): string[] {
  return [...new Set(analysis.placeholders.filter((name) => !allowed.has(name)))].sort();
}

/** Python's `repr(str)`: single quotes unless the text has `'` and no `"`; escapes as Python does. */
function pythonRepr(text: string): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let body = '';
  for (const char of text) {
    const code = char.codePointAt(0)!;
    if (char === '\\' || char === quote) body += `\\${char}`;
    else if (char === '\n') body += '\\n';
    else if (char === '\r') body += '\\r';
    else if (char === '\t') body += '\\t';
    else if (code < 0x20 || (code >= 0x7f && code <= 0xa0) || code === 0xad) {
      body += `\\x${code.toString(16).padStart(2, '0')}`;
    } else body += char;
  }
  return `${quote}${body}${quote}`;
}

/** A list of names as Python prints it, e.g. `['a', 'b']`, for messages that match the reference. */
export function formatPlaceholderList(names: readonly string[]): string {
  return `[${names.map(pythonRepr).join(', ')}]`;
}
