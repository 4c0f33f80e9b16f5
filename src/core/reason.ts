/** One line for a run record, from a tool's output (pure: the outcome map and the runs share it). */
/** Words that mark the line of a tool's output saying what went wrong. */
const ERROR_LINE =
  /\b(?:error|fatal|failed|failure|unexpected|not found|denied|invalid|refused|unauthori[sz]ed|forbidden|panic|exception|cannot|could not|unable|no such)\b/i;

/**
 * One line for a run record from a tool's output: the first line (what failed), the line that says
 * what went wrong (`fatal: …`, `error: …`, else the first carrying an error word), then the last
 * lines for context, joined by ` | `, at most `max` characters.
 */
export function oneLineReason(text: string, max = 500): string {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
  if (lines.length <= 1) return (lines[0] ?? '').slice(0, max);
  const strong = lines.findIndex((l, i) => i > 0 && /^(?:fatal|error|panic)\b/i.test(l));
  const key = strong >= 0 ? strong : lines.findIndex((l) => ERROR_LINE.test(l));
  // No line names an error: the last three say the most.
  if (key < 0) return clip(lines.slice(-3).join(' | '), max);
  const chosen = new Set<number>([0, key]);
  for (let i = lines.length - 1; i > key && chosen.size < 3; i -= 1) chosen.add(i);
  const line = [...chosen]
    .sort((a, b) => a - b)
    .map((i) => lines[i]!)
    .join(' | ');
  return clip(line, max);
}

function clip(line: string, max: number): string {
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
