/**
 * Which code a run's agent sees (issue 25): seed 000's default branch, the base a pull request
 * will target (`pr_base_branch`), or a pull request's own head commit (`worktree_from = "head"`).
 * Pure: the pipeline fetches what this names, and `validate --explain`, `run --dry-run` and the
 * run page say it in words.
 */
import type { Task } from './types.js';

/** The keys of an automation this reads. */
export interface CodeSourceConfig {
  checkout?: 'worktree' | 'main';
  worktree_from?: 'default_branch' | 'head';
  pr_base_branch?: string;
  deliver?: 'pr' | 'branch' | 'head';
}

export type CodeSource =
  | { kind: 'checkout' }
  | { kind: 'default_branch' }
  | { kind: 'base_branch'; branch: string }
  | {
      kind: 'pr_head';
      number: number;
      /** The head commit the item named when it was found (the prompt's `pull_request_head_sha`). */
      headSha: string | null;
      /** The head branch's name, when known (in a fork for `fromFork`). */
      headRef: string | null;
      /** The branch the pull request merges into, when known. */
      baseRef: string | null;
      fromFork: boolean;
    }
  | {
      kind: 'commit';
      /** The branch the commit was read from (fetched to find it). */
      branch: string;
      sha: string;
    };

/** The commit a task is pinned to (a review watch's fire, a commit trigger's commit): its branch and its sha. */
export type PinnedCommit = Omit<Extract<CodeSource, { kind: 'commit' }>, 'kind'>;

/** The pull request a task is about: its number and, when its item said, its head and base. */
export type PullRequestHead = Omit<Extract<CodeSource, { kind: 'pr_head' }>, 'kind'>;

/**
 * What a task's item is on GitHub: an issue or a pull request whose number is the task's id in its
 * repository, or a project card (an issue, a pull request or a draft).
 */
export type GitHubItemKind = 'issue' | 'pull-request' | 'card';

/** What this module asks of a task's trigger (its definition provides both). */
export interface CodeSourceTrigger {
  readonly githubItem?: GitHubItemKind | undefined;
  /** The pull request a task is about, or undefined (an issue, a draft card, a schedule). */
  pullRequest?(task: Task): PullRequestHead | undefined;
  /** The commit a task is pinned to, or undefined (triggers whose items are not commits). */
  pinnedCommit?(task: Task): PinnedCommit | undefined;
}

/** The code a task's worktree starts from. */
export function codeSource(config: CodeSourceConfig, task: Task, trigger: CodeSourceTrigger): CodeSource {
  if (config.checkout === 'main') return { kind: 'checkout' };
  const pinned = trigger.pinnedCommit?.(task);
  if (pinned) return { kind: 'commit', ...pinned };
  if (config.worktree_from === 'head') {
    const pr = trigger.pullRequest?.(task);
    if (pr) return { kind: 'pr_head', ...pr };
  }
  if (config.pr_base_branch) return { kind: 'base_branch', branch: config.pr_base_branch };
  return { kind: 'default_branch' };
}

/** What an automation's agents will see, before any task is known (`validate --explain`). */
export function describeCodeSetting(config: CodeSourceConfig, trigger: CodeSourceTrigger): string {
  if (config.checkout === 'main') return 'the shared checkout as it is (no fetch, no branch of its own)';
  if (trigger.pinnedCommit)
    return 'a new branch at the commit each task is pinned to (read from GitHub when it fires)';
  if (config.worktree_from === 'head') {
    const cards =
      trigger.githubItem === 'card' ? ' (a card that is not a pull request: the default branch)' : '';
    const push =
      config.deliver === 'head'
        ? '; its commits are pushed back to the pull request’s branch when it is in the same repository'
        : '';
    return `the pull request’s own code: a new branch at its head commit (fetched as pull/<number>/head, forks included)${cards}${push}`;
  }
  if (config.pr_base_branch)
    return `a new branch cut from ${config.pr_base_branch}, the branch the pull request targets`;
  const pr =
    trigger.githubItem === 'pull-request' || trigger.githubItem === 'card'
      ? ' — NOT the pull request’s own code (set worktree_from = "head" for that)'
      : '';
  return `a new branch cut from the repository’s default branch${pr}`;
}

/** One task's code in words (`run --dry-run`, the run page). */
export function describeCodeSource(
  source: CodeSource,
  commits?: { base?: string | null; head?: string | null },
): string {
  const short = (sha: string | null | undefined) => (sha ? ` ${sha.slice(0, 12)}` : '');
  switch (source.kind) {
    case 'checkout':
      return 'the shared checkout as it is';
    case 'default_branch':
      return `the default branch${short(commits?.base)}`;
    case 'base_branch':
      return `${source.branch}${short(commits?.base)} (the pull request’s base)`;
    case 'commit':
      return `${source.branch} at ${source.sha.slice(0, 12)} (the commit the task is pinned to)`;
    case 'pr_head': {
      const head = commits?.head ?? source.headSha;
      const from = source.headRef ? ` (${source.fromFork ? 'a fork’s ' : ''}${source.headRef})` : '';
      const base = source.baseRef ? `; base ${source.baseRef}${short(commits?.base)}` : '';
      return `pull request #${source.number}’s head${short(head)}${from}${base}`;
    }
  }
}

/**
 * Which code a finished or running run's agent saw, from its record (the run page); null when
 * unknown. `trigger`: the run's trigger, when it is still known.
 */
export function describeRunCode(
  run: { itemId: string; baseCommit?: string | null; headCommit?: string | null },
  trigger: CodeSourceTrigger | undefined,
): string | null {
  const short = (sha: string) => sha.slice(0, 12);
  if (run.headCommit) {
    const what =
      trigger?.githubItem === 'pull-request' ? `pull request #${run.itemId}’s` : 'the pull request’s';
    return `${what} head ${short(run.headCommit)}${run.baseCommit ? ` (base ${short(run.baseCommit)})` : ''}`;
  }
  if (run.baseCommit) return `a new branch from ${short(run.baseCommit)} (the base it was cut from)`;
  return null;
}
