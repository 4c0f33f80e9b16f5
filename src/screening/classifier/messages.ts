/**
 * The wording every classifier failure ends with: what the user can do about it. Screening blocks
 * event-triggered runs while a required classifier cannot answer, so each message names the two
 * ways to get one working.
 */

export const FIX_HINT =
  'To fix it, either put a Prompt Guard model (a directory with model.onnx and tokenizer.json, ' +
  'e.g. Llama Prompt Guard 2 exported to ONNX) on this machine and set `classifier_model` to that ' +
  'directory, or set `classifier_command` to a program that reads {"texts": [...]} as JSON on stdin ' +
  'and prints {"scores": [...]}; see docs/screening.md#classifier. Setting `required = false` in ' +
  '[settings.screening] lets runs go ahead on the scanners alone. `classifier_agent = true` asks ' +
  "the automation's own agent CLI instead (claude, codex, gemini, opencode, kilo).";

/** `message` followed by the fix hint. */
export function withHint(message: string): string {
  return `${message}. ${FIX_HINT}`;
}

/** The last `max` characters of `text`, trimmed, on one line; empty when there is nothing. */
export function tailOf(text: string, max = 600): string {
  const trimmed = text.trim();
  const tail = trimmed.length > max ? `…${trimmed.slice(-max)}` : trimmed;
  return tail.replace(/\s*\n\s*/g, ' ⏎ ');
}
