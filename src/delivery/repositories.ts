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
