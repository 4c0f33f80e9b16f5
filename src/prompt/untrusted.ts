/**
 * What a prompt sees of text written by strangers. Every field a trigger declares untrusted
 * (`TriggerDefinition.untrustedFields`: titles, bodies, comments, branch names, labels…) is
 * fenced before any template reads it, in both syntaxes, so a new field is fenced by declaring it
 * untrusted. Each body is capped first (`BODY_CAP_CHARS`), with a visible note of what was cut.
 *
 * - `${…}` templates: the field's text (lists and objects flattened to JSON first) in one block.
 * - Jinja: strings are blocks; lists and objects keep their shape with every string inside fenced,
 *   so `{% for %}`, `length` and `'bug' in issue_labels` (matched against the original values)
 *   still work; printing a whole list prints one block around its JSON, and `| join` one block
 *   around the joined values.
 *
 * Before either, hidden text (hidden.ts: invisible characters, HTML and markdown comments, hidden
 * elements) is removed from every untrusted string, whatever screening decided.
 *
 * With `untrusted_text = "raw"` nothing is fenced (unsafe: the text reads as instructions); bodies
 * are still capped and hidden text still removed.
 */

import type { FieldValue } from '../core/types.js';
import type { Fence } from './fence.js';
import { compactJson, flattenValue } from './fields.js';
import { revealHidden } from './hidden.js';

/** `value` with hidden text removed from every string in it (hidden.ts). */
export function revealDeep(value: FieldValue): FieldValue {
  if (typeof value === 'string') return revealHidden(value).text;
  if (Array.isArray(value)) return value.map(revealDeep);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, revealDeep(v as FieldValue)]));
  return value;
}

/** The longest body a prompt holds (seed 004); screening reads the whole text. */
export const BODY_CAP_CHARS = 6000;

/**
 * Field names holding bodies: `issue_body`, `task_body`…, `body` inside a comment object, and the
 * texts of a list of comments given as strings.
 */
function isBodyName(name: string): boolean {
  return name === 'body' || name.endsWith('_body') || name === 'comments' || name.endsWith('_comments');
}

/**
 * `text` cut to `max` characters (code points, so no character is split) followed by a line
 * `[… N characters cut]`, where N is the number of characters left out; shorter text as it is.
 */
export function capText(text: string, max: number = BODY_CAP_CHARS): string {
  if (text.length <= max) return text;
  const chars = Array.from(text);
  if (chars.length <= max) return text;
  return `${chars.slice(0, max).join('')}\n[… ${chars.length - max} characters cut]`;
}

function capBodies(name: string, value: FieldValue): FieldValue {
  if (typeof value === 'string') return isBodyName(name) ? capText(value) : value;
  if (Array.isArray(value)) return value.map((entry) => capBodies(name, entry));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, capBodies(k, v as FieldValue)]));
  }
  return value;
}

/** The original value of a fenced Jinja list or object, and where it came from. */
interface Origin {
  raw: FieldValue;
  label: string;
  fence: Fence;
}

const origins = new WeakMap<object, Origin>();

/**
 * A list whose strings are fenced, for Jinja. `in` (nunjucks calls `indexOf`) also finds the
 * original values, so `{% if 'bug' in issue_labels %}` keeps working; lists derived from it
 * (`map`, `slice`…) are plain lists of fenced values.
 */
class FencedList extends Array<FieldValue> {
  static override get [Symbol.species](): ArrayConstructor {
    return Array;
  }

  override indexOf(search: FieldValue, from?: number): number {
    const index = super.indexOf(search, from);
    if (index !== -1) return index;
    const raw = origins.get(this)?.raw;
    return Array.isArray(raw) ? raw.indexOf(search, from) : -1;
  }

  override includes(search: FieldValue, from?: number): boolean {
    return this.indexOf(search, from) !== -1;
  }

  /** `{{ issue_labels | join(", ") }}`: one block around the joined original values. */
  override join(separator?: string): string {
    const origin = origins.get(this);
    const raw = origin?.raw;
    if (!origin || !Array.isArray(raw) || raw.some((entry) => entry !== null && typeof entry === 'object')) {
      return super.join(separator);
    }
    return origin.fence.fence(raw.map((entry) => flattenValue(entry)).join(separator ?? ','), origin.label);
  }
}

/** The original (capped, unfenced) value behind a fenced Jinja list or object, if `value` is one. */
export function fencedOrigin(value: unknown): Origin | undefined {
  return value !== null && typeof value === 'object' ? origins.get(value) : undefined;
}

function fenceDeep(value: FieldValue, label: string, fence: Fence): FieldValue {
  if (typeof value === 'string') return value.trim() === '' ? value : fence.fence(value, label);
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    if (value.length === 0) return value;
    const list = new FencedList();
    for (const entry of value) list.push(fenceDeep(entry, label, fence));
    origins.set(list, { raw: value, label, fence });
    return list as FieldValue[];
  }
  const object = Object.fromEntries(
    Object.entries(value).map(([k, v]) => [k, fenceDeep(v as FieldValue, label, fence)]),
  );
  origins.set(object, { raw: value, label, fence });
  return object;
}

function fenceFlat(value: FieldValue, label: string, fence: Fence): FieldValue {
  if (value === null || typeof value === 'number' || typeof value === 'boolean') return value;
  const text = flattenValue(value);
  if (text.trim() === '' || text === '[]' || text === '{}') return text;
  return fence.fence(text, label);
}

/** A fenced Jinja list or object printed whole: one block around its original JSON. */
export function fenceContainer(value: unknown, fence: Fence): string | undefined {
  const origin = fencedOrigin(value);
  return origin ? fence.fence(compactJson(origin.raw), origin.label) : undefined;
}

export interface GuardOptions {
  /** The fields written by strangers (the trigger's `untrustedFields`). */
  fields: readonly string[];
  syntax: 'template' | 'jinja';
  /** `raw` leaves the text unfenced (bodies are still capped). */
  mode: 'fenced' | 'raw';
  /** The run's fence. */
  fence: Fence;
  /** Where a field's text comes from, for the fence's notice (`issue title of acme/api#12`). */
  describe(field: string): string;
}

/** `context` with every untrusted field capped and, unless `raw`, fenced (see the module comment). */
export function guardUntrusted(
  context: Readonly<Record<string, FieldValue>>,
  options: GuardOptions,
): Record<string, FieldValue> {
  const guarded: Record<string, FieldValue> = { ...context };
  for (const field of options.fields) {
    if (!Object.hasOwn(guarded, field)) continue;
    const value = capBodies(field, revealDeep(guarded[field] as FieldValue));
    if (options.mode === 'raw') guarded[field] = value;
    else if (options.syntax === 'jinja')
      guarded[field] = fenceDeep(value, options.describe(field), options.fence);
    else guarded[field] = fenceFlat(value, options.describe(field), options.fence);
  }
  contextFences.set(guarded, options.fence);
  return guarded;
}

const contextFences = new WeakMap<object, Fence>();

/**
 * The fence `guardUntrusted` used for this context, so that rendering (Jinja's `| fence`, a whole
 * list printed) fences with the same run nonce; undefined for a context it did not make.
 */
export function fenceOfContext(context: object): Fence | undefined {
  return contextFences.get(context);
}
