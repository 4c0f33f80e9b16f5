/**
 * What the conflict, moving-base and merge steps read of a pull request over GitHub's REST API:
 * its mergeability (`mergeable` is null while GitHub computes it), how far its head is behind its
 * base (`compareCommits` in src/github/rest.ts), its changed files, and whether the automation
 * may act on the delivery's repository at all.
 */
import { GitHubError } from '../../core/errors.js';
import type { GitHubClient } from '../../github/client.js';
import { compareCommits, listPullFiles, type Schemas } from '../../github/rest.js';
import type { FollowContext } from '../follow.js';
import type { PullJson } from '../pull-request.js';

/** The fields of GitHub's full `pull-request` these steps read (the follower's GET returns them). */
export interface MergeFields {
  mergeable: boolean | null;
  /** `clean`, `dirty`, `behind`, `blocked`, `unstable`, `draft`, `has_hooks` or `unknown`. */
  mergeableState: string;
  draft: boolean;
  title: string;
}

export function mergeFields(pr: PullJson): MergeFields {
  // The follower reads `GET pulls/{n}`, GitHub's full `pull-request`; PullJson names only its
  // common fields.
  const full = pr as PullJson &
    Partial<Pick<Schemas['pull-request'], 'mergeable' | 'mergeable_state' | 'title'>>;
  return {
    mergeable: typeof full.mergeable === 'boolean' ? full.mergeable : null,
    mergeableState: full.mergeable_state ?? 'unknown',
    draft: pr.draft === true,
    title: full.title ?? '',
  };
}

type CommitJson = Pick<Schemas['commit'], 'sha'> & { parents: { sha: string }[] };
export type Comparison = Pick<Schemas['commit-comparison'], 'status' | 'ahead_by' | 'behind_by'> & {
  base_commit: Pick<Schemas['commit'], 'sha'>;
  commits: CommitJson[];
  files?: Pick<Schemas['diff-entry'], 'filename'>[];
};

/** `GET compare/{base}...{head}`: `base` and `head` are branch names or commits. */
export function compareRefs(
  client: GitHubClient,
  repo: string,
  base: string,
  head: string,
): Promise<Comparison> {
  return compareCommits<Comparison>(client, repo, base, head);
}

/** Every file the pull request changes (`GET pulls/{n}/files`, up to GitHub's 3000). */
export async function pullRequestFiles(
  client: GitHubClient,
  repo: string,
  number: number,
): Promise<string[]> {
  const out: string[] = [];
  for (let page = 1; page <= 30; page += 1) {
    const files = await listPullFiles(client, repo, number, page);
    out.push(...files.map((f) => f.filename));
    if (files.length < 100) break;
  }
  return out;
}

const ESCAPES = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[@-Z\\-_]/g;
const CONTROLS = /[\u0000-\u001f\u007f-\u009f]/g;

/** Text from GitHub (a file name, an error message) as a gate's detail: one line, no terminal escapes, short. */
export function plain(text: string, max = 200): string {
  const line = text.replace(ESCAPES, '').replace(CONTROLS, ' ').replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** GitHub's message of a refused request (405, 409, 422), for a gate's detail. */
export function refusalMessage(error: unknown): string | undefined {
  if (!(error instanceof GitHubError) || error.status === undefined || error.status >= 500) return undefined;
  return plain(error.message);
}

/**
 * Why curupira must not act (update the branch, merge) on this delivery's pull request, if it
 * must not: those actions go through the API with the engine's token, on the pull request's own
 * repository, and no checkout is involved, so the check is that the repository is the one the
 * automation works on (its `repo`, when it names one). The remediator checks its checkout's origin.
 */
export function actionRefusal(context: FollowContext): string | undefined {
  const repo = context.deps.config?.(context.record.automationId)?.repo;
  if (repo === undefined || repo.toLowerCase() === context.record.repo.toLowerCase()) return undefined;
  return `refused: the automation works on ${repo}, the pull request is in ${context.record.repo}`;
}

/**
 * A `human_merge_paths` glob as a regular expression, with gitignore's reading: `*` and `?` stay
 * within a path segment, `**` crosses them, `{a,b}` is either; a pattern without a slash matches
 * a file name at any depth (`*.sql`), a trailing slash a folder's whole contents (`migrations/`),
 * a leading slash anchors at the root (`/infra/**`), any other slash anchors too (`db/schema.rb`).
 */
export function globRegExp(glob: string): RegExp {
  let pattern = glob.trim();
  const folder = pattern.endsWith('/');
  if (folder) pattern = pattern.replace(/\/+$/, '');
  const anchored = pattern.startsWith('/') || pattern.includes('/');
  pattern = pattern.replace(/^\/+/, '');
  let out = '';
  for (let i = 0; i < pattern.length; i += 1) {
    const c = pattern[i]!;
    if (c === '*' && pattern[i + 1] === '*') {
      const slash = pattern[i + 2] === '/';
      out += slash ? '(?:.*/)?' : '.*';
      i += slash ? 2 : 1;
    } else if (c === '*') out += '[^/]*';
    else if (c === '?') out += '[^/]';
    else if (c === '{') {
      const end = pattern.indexOf('}', i);
      if (end < 0) out += '\\{';
      else {
        const options = pattern.slice(i + 1, end).split(',');
        out += `(?:${options.map((o) => o.replace(/[.+^${}()|[\]\\*?]/g, '\\$&')).join('|')})`;
        i = end;
      }
    } else out += c.replace(/[.+^${}()|[\]\\]/g, '\\$&');
  }
  const prefix = anchored ? '^' : '^(?:.*/)?';
  return new RegExp(`${prefix}${out}${folder ? '/.*' : '(?:/.*)?'}$`);
}

/** The first file that matches one of the globs, with the glob. */
export function firstMatch(
  files: readonly string[],
  globs: readonly string[],
): { file: string; glob: string } | undefined {
  const compiled = globs.map((glob) => ({ glob, re: globRegExp(glob) }));
  for (const file of files) {
    const hit = compiled.find(({ re }) => re.test(file));
    if (hit) return { file, glob: hit.glob };
  }
  return undefined;
}
