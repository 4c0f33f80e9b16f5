/**
 * What a delivered pull request says about the change (issue 25): the commits and files it carries
 * (read from git) and the agent's final message (read back from the run's transcript with its
 * provider's parser, so it is there after a restart too). Only text the run produced: never the
 * item's own text, which strangers write. The caller redacts the rendered body.
 */
import { open } from 'node:fs/promises';
import { loadDriver } from '../agents/registry.js';
import type { AgentStreamParser } from '../agents/types.js';
import { git } from '../workspace/git.js';

/** The most of a transcript read back (its end), and of the message quoted. */
const TRANSCRIPT_TAIL_BYTES = 4 * 1024 * 1024;
const MESSAGE_CHARS = 4000;
const FILES_SHOWN = 30;
const COMMITS_SHOWN = 20;

/** The last thing the agent said: its closing result, else its last message; '' when none. */
export async function finalAgentMessage(
  transcriptPath: string | null,
  provider: string | null,
): Promise<string> {
  if (!transcriptPath || !provider) return '';
  let text: string;
  try {
    const file = await open(transcriptPath, 'r');
    try {
      const { size } = await file.stat();
      const start = Math.max(0, size - TRANSCRIPT_TAIL_BYTES);
      const buffer = Buffer.alloc(size - start);
      await file.read(buffer, 0, buffer.length, start);
      text = buffer.toString('utf8');
      // A tail that starts mid-line: drop the partial first line.
      if (start > 0) text = text.slice(text.indexOf('\n') + 1);
    } finally {
      await file.close();
    }
  } catch {
    return '';
  }
  let parser: AgentStreamParser;
  try {
    parser = (await loadDriver(provider)).createParser();
  } catch {
    return '';
  }
  let result = '';
  let assistant = '';
  const take = (events: ReturnType<AgentStreamParser['parseLine']>) => {
    for (const event of events) {
      if (event.kind === 'assistant' && event.text.trim()) assistant = event.text;
      else if (event.kind === 'done' && !event.isError && event.result?.trim()) result = event.result;
    }
  };
  for (const line of text.split('\n')) take(parser.parseLine(line));
  take(parser.end());
  const message = (result || assistant).trim();
  return message.length > MESSAGE_CHARS ? `${message.slice(0, MESSAGE_CHARS)}…` : message;
}

/** `text` as a Markdown block quote. */
export function quoted(text: string): string {
  return text
    .split('\n')
    .map((line) => (line ? `> ${line}` : '>'))
    .join('\n');
}

/** The commits (subjects) and changed files between `baseRef` and `sha`, as Markdown; '' when unknown. */
export async function changeSummary(cwd: string, baseRef: string, sha: string): Promise<string> {
  const range = `${baseRef}..${sha}`;
  try {
    const subjects = (await git(['log', '--no-merges', '--format=%s', range, '--'], { cwd }))
      .split('\n')
      .filter((line) => line.trim() !== '');
    const stat = (await git(['diff', '--numstat', '--no-renames', `${baseRef}...${sha}`, '--'], { cwd }))
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => {
        const [added, removed, ...path] = line.split('\t');
        return { added: added ?? '-', removed: removed ?? '-', path: path.join('\t') };
      });
    const lines: string[] = [];
    if (subjects.length > 0) {
      lines.push('**Commits:**', '');
      for (const subject of subjects.slice(0, COMMITS_SHOWN)) lines.push(`- ${subject}`);
      if (subjects.length > COMMITS_SHOWN) lines.push(`- … and ${subjects.length - COMMITS_SHOWN} more`);
    }
    if (stat.length > 0) {
      if (lines.length > 0) lines.push('');
      lines.push(`**Files changed (${stat.length}):**`, '');
      for (const file of stat.slice(0, FILES_SHOWN))
        lines.push(`- \`${file.path.replace(/`/g, "'")}\` (+${file.added} −${file.removed})`);
      if (stat.length > FILES_SHOWN) lines.push(`- … and ${stat.length - FILES_SHOWN} more`);
    }
    return lines.join('\n');
  } catch {
    return '';
  }
}
