/**
 * Tasks across repositories (issue 30): an automation with `repositories` gets, besides its primary
 * worktree (the agent's working directory), one worktree in each additional repository, at the
 * place and on the branch the primary's formula gives for that repository's checkout
 * (`<checkout>.worktrees/<automation>/<task_type>-<hash>`, branch `curupira/<automation>/…`), so a
 * restart finds them without a record. The prompt lists every worktree.
 *
 * Each additional repository's delivery is its own `pull_requests` row, keyed
 * `<run id>~<alias>` (a run id never holds `~`): the same record, marks, follow-up and remediation
 * as the primary's, with the run found by the part before `~`.
 */
import type { RepositorySettings, ResolvedAutomation } from '../config/types.js';
import type { RunRecord } from '../core/types.js';
import { scrub } from '../security/redact.js';
import type { PullRequestRecord, Store } from '../store/types.js';
import { branchName, worktreePath } from '../workspace/paths.js';

export interface AdditionalWorktree {
  repository: RepositorySettings;
  path: string;
  branch: string;
}

const SEPARATOR = '~';

/** The worktrees of the additional repositories of a task (none for a single-repository automation). */
export function additionalWorktrees(
  automation: Pick<ResolvedAutomation, 'id' | 'additionalRepositories'>,
  taskType: string,
  taskId: string,
): AdditionalWorktree[] {
  return (automation.additionalRepositories ?? []).map((repository) => ({
    repository,
    path: worktreePath(repository.checkoutPath, automation.id, taskType, taskId),
    branch: branchName(automation.id, taskType, taskId),
  }));
}

/** The delivery key of the run's pull request in the additional repository `alias`. */
export function additionalDeliveryKey(runId: string, alias: string): string {
  return `${runId}${SEPARATOR}${alias}`;
}

/** The run a delivery key belongs to (the key itself for a primary delivery). */
export function deliveryRunId(key: string): string {
  const at = key.indexOf(SEPARATOR);
  return at < 0 ? key : key.slice(0, at);
}

/** The repository a delivery key pushes to: an additional one by its alias, else the primary. */
export function repositoryOfDelivery(
  automation: Pick<ResolvedAutomation, 'repository' | 'additionalRepositories'>,
  key: string,
): RepositorySettings | undefined {
  const at = key.indexOf(SEPARATOR);
  if (at < 0) return automation.repository;
  const alias = key.slice(at + 1);
  return automation.additionalRepositories?.find((r) => r.alias === alias);
}

/**
 * What the prompt says of a multi-repository task: each repository, its GitHub name and the
 * absolute path of its worktree (the first one is the working directory). Trusted text only.
 */
export function repositoriesNote(
  automation: Pick<ResolvedAutomation, 'id' | 'repository' | 'additionalRepositories'>,
  primary: { repo: string; path: string; branch: string },
  additional: readonly AdditionalWorktree[],
): string {
  if (additional.length === 0) return '';
  const lines = [
    '',
    '',
    `This task spans ${additional.length + 1} repositories. Each is a git worktree on the branch \`${primary.branch}\`; make the changes where they belong and commit them in that repository's worktree (each repository that changed is delivered on its own):`,
    `- \`${automation.repository.alias}\` (${primary.repo}, your working directory): ${primary.path}`,
    ...additional.map(
      (w) => `- \`${w.repository.alias}\` (${w.repository.repo ?? w.repository.remote}): ${w.path}`,
    ),
  ];
  return lines.join('\n');
}

/** One repository of a run across repositories, as `runs show`, the run page and the API show it. */
export interface RunRepository {
  alias: string;
  /** `owner/name` where its pull request goes; else its remote, credentials removed. */
  repo: string;
  /** The agent's working directory. */
  primary: boolean;
  /** Where its worktree is (or was): the run's own for the primary, else the path its formula gives. */
  worktreePath: string | null;
  /** Its delivery record (branch, pull request, state), null before or without one. */
  delivery: PullRequestRecord | null;
}

/** The item id of a task key (`identityKey`: `[automation, repo, taskType, id]` as JSON). */
function taskIdOf(taskKey: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(taskKey);
    return Array.isArray(parsed) && typeof parsed[3] === 'string' ? parsed[3] : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Every repository of a run whose automation spans several (none for a single repository, or when
 * the settings no longer have the automation): the primary first, then each additional one in the
 * order written, each with its worktree and its delivery (`deliveries`: the run's records, the
 * primary's keyed by the run id, the others `<run id>~<alias>`).
 */
export function runRepositories(
  run: Pick<RunRecord, 'id' | 'repo' | 'taskType' | 'taskKey' | 'worktreePath'>,
  automation: Pick<ResolvedAutomation, 'id' | 'repository' | 'additionalRepositories'> | undefined,
  deliveries: readonly PullRequestRecord[],
): RunRepository[] {
  const additional = automation?.additionalRepositories ?? [];
  const taskId = taskIdOf(run.taskKey);
  if (!automation || additional.length === 0 || taskId === undefined) return [];
  const delivery = (key: string) => deliveries.find((d) => d.runId === key) ?? null;
  const worktrees = additionalWorktrees(automation, run.taskType, taskId);
  return [
    {
      alias: automation.repository.alias,
      repo: run.repo,
      primary: true,
      worktreePath: run.worktreePath,
      delivery: delivery(run.id),
    },
    ...worktrees.map((w) => ({
      alias: w.repository.alias,
      repo: w.repository.repo ?? scrub(w.repository.remote),
      primary: false,
      worktreePath: run.worktreePath === null ? null : w.path,
      delivery: delivery(additionalDeliveryKey(run.id, w.repository.alias)),
    })),
  ];
}

/**
 * What `validate --explain` and the board's automation view say of a task across repositories:
 * every alias, where its pull request goes and where its worktrees go; undefined for one repository.
 */
export function repositoriesExplain(
  automation: Pick<ResolvedAutomation, 'id' | 'repository' | 'additionalRepositories'>,
): { label: string; value: string } | undefined {
  const additional = automation.additionalRepositories ?? [];
  if (additional.length === 0) return undefined;
  const one = (r: RepositorySettings, primary: boolean) =>
    `${r.alias} (${r.repo ?? scrub(r.remote)}${primary ? ', primary: the agent’s working directory' : ''}; worktrees in ${r.checkoutPath}.worktrees/${automation.id}/)`;
  return {
    label: 'repositories',
    value: `${additional.length + 1}, one worktree each on the same branch: ${[
      one(automation.repository, true),
      ...additional.map((r) => one(r, false)),
    ].join(', ')}`,
  };
}

/**
 * The delivery a run's page and `runs show` present: its own, or for a remediation run (one that
 * pushed to the delivery of the run it follows, on the same item) that delivery. A chained run also
 * names the run it follows, on an item of its own: the upstream's pull request is not its doing.
 */
export async function shownDelivery(
  store: Pick<Store, 'getPullRequest'>,
  run: Pick<RunRecord, 'id' | 'upstreamRunId' | 'taskKey'>,
): Promise<PullRequestRecord | undefined> {
  const own = await store.getPullRequest(run.id).catch(() => undefined);
  if (own || !run.upstreamRunId) return own;
  const followed = await store.getPullRequest(run.upstreamRunId).catch(() => undefined);
  return followed?.taskKey === run.taskKey ? followed : undefined;
}
