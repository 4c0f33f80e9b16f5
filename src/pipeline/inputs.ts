/**
 * Inputs per run (issue 32, seed 001's `key=value` overrides): an automation declares its inputs
 * with defaults (`inputs = { focus = "" }`); `curupira run --set focus=docs` overrides one for the
 * runs of that invocation. The prompt reads each as `${name}`; the run record keeps the values.
 */
import { UsageError } from '../core/errors.js';
import { INPUT_NAME } from './schema.js';

/** `["focus=docs", "base=main"]` → `{ focus: "docs", base: "main" }`; a bad pair is a usage error. */
export function parseSetPairs(pairs: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    const key = at < 0 ? pair : pair.slice(0, at);
    if (at < 0 || !INPUT_NAME.test(key))
      throw new UsageError(`--set takes key=value with a lowercase key (letters, digits, _), got '${pair}'`);
    if (key in out) throw new UsageError(`--set ${key} is given twice`);
    out[key] = pair.slice(at + 1);
  }
  return out;
}

/**
 * Inputs given as JSON (the API's `{"inputs": {"focus": "docs"}}`): an object of strings with the
 * names `--set` takes; anything else is a usage error naming what is wrong.
 */
export function inputsFromJson(value: unknown): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (typeof value !== 'object' || Array.isArray(value))
    throw new UsageError('inputs must be an object of strings (inputs = { "key": "value" })');
  const out: Record<string, string> = {};
  for (const [key, text] of Object.entries(value)) {
    if (!INPUT_NAME.test(key))
      throw new UsageError(`inputs: '${key}' is not an input name (lowercase letters, digits and _)`);
    if (typeof text !== 'string')
      throw new UsageError(`inputs: '${key}' must be a string (inputs = { "key": "value" })`);
    out[key] = text;
  }
  return out;
}

/**
 * Given inputs checked against what the automations declare: each key must be an input of at least
 * one of them (each automation then takes only its own). A problem names the declared inputs.
 */
export function checkInputs(
  given: Readonly<Record<string, string>>,
  automations: readonly { id: string; config: { inputs?: Readonly<Record<string, string>> | undefined } }[],
): void {
  const declared = new Set(automations.flatMap((a) => Object.keys(a.config.inputs ?? {})));
  const unknown = Object.keys(given).filter((key) => !declared.has(key));
  if (unknown.length === 0) return;
  const list = declared.size > 0 ? [...declared].sort().join(', ') : 'none';
  throw new UsageError(
    `unknown input${unknown.length === 1 ? '' : 's'} ${unknown.map((k) => `'${k}'`).join(', ')}: ${
      automations.length === 1 ? `'${automations[0]!.id}' declares` : 'the automations declare'
    } ${list} (inputs = { … } in the automation's table)`,
  );
}

/** One run's inputs: the automation's declared defaults, overridden by the given ones it declares. */
export function runInputs(
  declared: Readonly<Record<string, string>> | undefined,
  given: Readonly<Record<string, string>> | undefined,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(declared ?? {})) out[key] = given?.[key] ?? value;
  return out;
}
