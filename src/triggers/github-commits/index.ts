/**
 * The commit trigger (issue 29, seed 004's "commits"): each new commit on a repository's branch
 * (empty: the default branch), optionally only those touching a folder, is an item keyed
 * `commit:<sha>`, with its message, author, files and diff size as prompt fields. Discovery reads
 * the branch's newest `lookback` commits (`listCommits`) and, for the ones it offers, each
 * commit's files and stats (`getCommit`).
 */
import type { Item } from '../../core/types.js';
import type { GitHubClient } from '../../github/client.js';
import { getCommit, getRepository, listCommits } from '../../github/rest.js';
import { defaultTimezone, noUpstreamRun, sameRepository, stringField } from '../hooks.js';
import type { SourceFactory } from '../source.js';
import type { TriggerDefinition } from '../types.js';
import {
  describeBranch,
  type GitHubCommitsAutomation,
  type GitHubCommitsResolved,
  githubCommitsTable,
} from './schema.js';

/** The parts of GitHub's `commit` (list and single) the trigger reads. */
export interface CommitJson {
  sha: string;
  html_url: string;
  commit: {
    message: string;
    author: { name?: string; email?: string; date?: string } | null;
  };
  author: { login: string } | null;
  parents: { sha: string }[];
  stats?: { additions?: number; deletions?: number; total?: number };
  files?: { filename: string }[];
}

/** A commit as an item; its files and diff size (read later) are volatile: they never change its fingerprint. */
export function commitItem(commit: CommitJson, branch: string, detail?: CommitJson): Item {
  const message = commit.commit.message;
  const newline = message.indexOf('\n');
  const title = newline === -1 ? message : message.slice(0, newline);
  const body = newline === -1 ? '' : message.slice(newline + 1).replace(/^\n+/, '');
  const files = detail?.files?.map((f) => f.filename) ?? [];
  return {
    id: commit.sha,
    title,
    url: commit.html_url,
    body,
    itemKey: `commit:${commit.sha}`,
    fields: {
      commit_sha: commit.sha,
      commit_short_sha: commit.sha.slice(0, 7),
      commit_title: title,
      commit_message: message,
      commit_url: commit.html_url,
      commit_author: commit.author?.login ?? null,
      commit_author_name: commit.commit.author?.name ?? null,
      commit_date: commit.commit.author?.date ?? null,
      commit_branch: branch,
      commit_parents: commit.parents.map((p) => p.sha),
    },
    volatile: {
      commit_files: files,
      commit_additions: detail?.stats?.additions ?? 0,
      commit_deletions: detail?.stats?.deletions ?? 0,
      commit_changed_files: files.length,
    },
  };
}

/** The watched branch: the configured one, else the repository's default branch (read now). */
export async function watchedBranch(github: GitHubClient, config: GitHubCommitsAutomation): Promise<string> {
  if (config.branch !== '') return config.branch;
  return (await getRepository(github, config.repo)).default_branch;
}

/** The branch's newest `count` commits (touching `path`), newest first. */
export function newestCommits(
  github: GitHubClient,
  config: GitHubCommitsAutomation,
  branch: string,
  count: number,
): Promise<CommitJson[]> {
  return listCommits<CommitJson>(github, config.repo, { sha: branch, path: config.path, count });
}

export const createGitHubCommitsSource: SourceFactory<GitHubCommitsResolved> = (automation, context) => {
  const { config } = automation;
  return {
    async discover({ limit, wanted, onTotal }) {
      const github = context.github();
      const branch = await watchedBranch(github, config);
      const commits = await newestCommits(github, config, branch, config.lookback);
      // Newest first, so that commits that reach the branch later are never hidden behind older
      // ones; the batch is then offered oldest first, the order they landed in.
      const picked: CommitJson[] = [];
      for (const commit of commits) {
        if (picked.length >= limit) break;
        if (wanted && !wanted(commitItem(commit, branch))) continue;
        picked.push(commit);
      }
      onTotal?.({ matching: commits.length, examined: commits.length });
      const items: Item[] = [];
      for (const commit of picked.reverse()) {
        const detail = await getCommit<CommitJson>(github, config.repo, commit.sha);
        items.push(commitItem(commit, branch, detail));
      }
      return items;
    },
  };
};

export const githubCommitsTrigger: TriggerDefinition<GitHubCommitsResolved> = {
  ...githubCommitsTable,
  serialRuns: false,
  createFeed(automation, context) {
    return context.feeds.polled(automation, createGitHubCommitsSource(automation, context));
  },
  doctor: {
    needs: 'github',
    async check(automation, context) {
      const { config } = automation;
      const github = context.github();
      const branch = await watchedBranch(github, config);
      const [tip] = await newestCommits(github, config, branch, 1);
      const where = `${config.repo} ${config.branch === '' ? `${branch} (${describeBranch(config)})` : branch}`;
      return tip
        ? {
            ok: true,
            detail: `${where}: newest commit${config.path ? ` touching ${config.path}/` : ''} ${tip.sha.slice(0, 7)}`,
          }
        : { ok: true, detail: `${where}: no commit${config.path ? ` touches ${config.path}/` : ''} yet` };
    },
  },
  screening: {
    target: (automation, task) => ({
      title: task.item.title,
      body: task.item.body,
      author: stringField(task.item.fields.commit_author),
      repository: automation.config.repo,
      labels: [],
    }),
  },
  webhooks: {
    events: ['push'],
    concerns: (automation, _event, payload) => sameRepository(automation.config.repo, payload),
  },
  authorField: 'commit_author',
  // The run works on the commit it is about, not on whatever the branch reached since.
  pinnedCommit(task) {
    const branch = stringField(task.item.fields.commit_branch);
    const sha = stringField(task.item.fields.commit_sha);
    return branch && sha ? { branch, sha } : undefined;
  },
  itemName: (run) => `${run.repo}@${run.itemId.slice(0, 7)}`,
  describeField(task, field) {
    const what = field.replace(/_/g, ' ');
    // The login only: a commit's author name is free text written by whoever made the commit.
    const author = stringField(task.item.fields.commit_author);
    return `${what} of commit ${task.item.id.slice(0, 7)} in ${task.identity.repo}${author ? ` (by @${author})` : ''}`;
  },
  upstreamRunId: noUpstreamRun,
  resolveTimezone: defaultTimezone,
};
