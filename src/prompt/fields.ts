/**
 * Turning prompt field values into text, the way the reference implementation does: `null` is
 * empty, booleans are `true`/`false`, strings stay as they are, numbers print as numbers, and lists
 * and objects become compact JSON with non-ASCII characters escaped (Python's
 * `json.dumps(value, separators=(",", ":"))`).
 */

import type { Fields, FieldValue } from '../core/types.js';

function hex4(code: number): string {
  return `\\u${code.toString(16).padStart(4, '0')}`;
}

/** A JSON string literal escaped like Python's `ensure_ascii=True`: only printable ASCII stays raw. */
function jsonString(text: string): string {
  // JSON.stringify already escapes `"`, `\` and control characters (and lone surrogates).
  return JSON.stringify(text).replace(/[\u007f-\uffff]/g, (char) => hex4(char.charCodeAt(0)));
}

function jsonNumber(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Number.POSITIVE_INFINITY) return 'Infinity';
  if (value === Number.NEGATIVE_INFINITY) return '-Infinity';
  return String(value);
}

/**
 * Compact JSON of any value a template may hold. Values JSON cannot hold (`undefined`, functions)
 * become `null` inside lists and are left out of objects, as `JSON.stringify` does.
 */
export function compactJson(value: unknown): string {
  return toJson(value) ?? 'null';
}

function toJson(value: unknown): string | undefined {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
      return jsonString(value);
    case 'number':
      return jsonNumber(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'bigint':
      return value.toString();
    case 'object':
      break;
    default:
      return undefined;
  }
  if (Array.isArray(value)) {
    return `[${value.map((entry) => toJson(entry) ?? 'null').join(',')}]`;
  }
  const members: string[] = [];
  for (const [key, entry] of Object.entries(value as Record<string, unknown>)) {
    const encoded = toJson(entry);
    if (encoded !== undefined) members.push(`${jsonString(key)}:${encoded}`);
  }
  return `{${members.join(',')}}`;
}

/** One field value as prompt text. */
export function flattenValue(value: FieldValue): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number') return String(value);
  return compactJson(value);
}

/** Every field as prompt text, in the same order. */
export function flattenFields(fields: Fields): Record<string, string> {
  const flat: Record<string, string> = {};
  for (const [name, value] of Object.entries(fields)) flat[name] = flattenValue(value);
  return flat;
}
