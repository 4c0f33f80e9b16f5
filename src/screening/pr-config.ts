/**
 * Agent configuration a pull request cannot rewrite (issue 27, point 5), the gate half: a pull
 * request whose changes touch agent-facing configuration (`AGENTS.md`, `CLAUDE.md`, `.claude/`,
 * `.mcp.json`, `.codex/`, `.gemini/`, `opencode.json`… every supported CLI's, see
 * src/agents/config-paths.ts), written by an author who is not trusted, is held before it runs: a
 * `blocked` run with one finding per file. The same changes are not recorded again until they
 * change or `curupira allow` lets them through once. The workspace half (the run's copy of those
 * files comes from the base branch, whatever the worktree was cut from) is
 * src/workspace/agent-config.ts.
 *
 * Only the list of changed files is read (one REST page per 100 files), and the author's trust
 * only when one of them is agent configuration.
 */
import { createHash } from 'node:crypto';
import { isAgentConfigPath } from '../agents/config-paths.js';
import type { ResolvedAutomation } from '../config/types.js';
import { errorMessage } from '../core/errors.js';
import type { Feature, GateRequest, GateVerdict, KernelPort } from '../core/feature.js';
import { runInit } from '../core/task-fields.js';
import type { RunRecord, ScreeningFinding, Task } from '../core/types.js';
import type { GitHubClient } from '../github/client.js';
import { listPullFiles } from '../github/rest.js';
import type { RunWrites } from '../github/write-port.js';
import type { Logger } from '../log.js';
import type { Store } from '../store/types.js';
import { screenTarget } from './gate.js';
import { readItemContext } from './gate-context.js';
import { type TrustRules, trustReason } from './trust.js';

/** GitHub lists at most 3000 files of a pull request. */
const MAX_PAGES = 30;

export interface PullRequestConfigOptions {
  port: KernelPort;
  store: Store;
  log: Logger;
  github(): GitHubClient;
  writes(): RunWrites | undefined;
  /** Who an automation trusts (the screening feature's rules). */
  trust(automation: ResolvedAutomation): Promise<TrustRules>;
  /** Whether screening is off for the automation (then nothing is held here either). */
  screeningOff(automation: ResolvedAutomation): boolean;
}

/** The agent-configuration files among a pull request's changed files. */
export async function changedAgentConfig(
  github: GitHubClient,
  repo: string,
  number: number,
): Promise<string[]> {
  const found: string[] = [];
  for (let page = 1; page <= MAX_PAGES; page += 1) {
    const files = await listPullFiles(github, repo, number, page);
    for (const file of files) if (isAgentConfigPath(file.filename)) found.push(file.filename);
    if (files.length < 100) break;
  }
  return found;
}

export class PullRequestConfigFeature implements Feature {
  readonly name = 'pr-config';

  constructor(private readonly options: PullRequestConfigOptions) {}

  async gate({ automation, task, resumed }: GateRequest): Promise<GateVerdict> {
    if (resumed || task.item.fields.pull_request_base_ref === undefined) return { kind: 'go' };
    if (this.options.screeningOff(automation)) return { kind: 'go' };
    const target = screenTarget(automation, task);
    if (!target?.source) return { kind: 'go' };
    const { store, log } = this.options;
    const fields = { automation: automation.id, repo: task.identity.repo, id: task.item.id };
    let paths: string[];
    let trusted: string | undefined;
    try {
      paths = await changedAgentConfig(this.options.github(), target.source.repo, target.source.number);
      if (paths.length === 0) return { kind: 'go' };
      const context = await readItemContext(this.options.github(), target, { timeline: false });
      const author = context.author ?? (target.author ? { login: target.author, bot: false } : null);
      trusted = trustReason(author, await this.options.trust(automation));
    } catch (error) {
      // Fail closed: a pull request whose files cannot be read is not run now (tried again later).
      log.warn({ ...fields, error: errorMessage(error) }, 'Could not read the files of a pull request');
      return { kind: 'hold', forget: true };
    }
    if (trusted) {
      log.info(
        { ...fields, files: paths.length, trusted },
        'A trusted pull request changes agent configuration',
      );
      return { kind: 'go' };
    }
    const head = task.item.fields.pull_request_head_sha ?? '';
    const digest = createHash('sha256')
      .update(`pr-config\n${head}\n${paths.join('\n')}`)
      .digest('hex');
    if (await store.takeAllowance(task.key, digest)) return { kind: 'go' };
    const previous = await store.findBlockedRun(task.key, digest);
    if (previous) return { kind: 'hold', previous };
    const findings: ScreeningFinding[] = paths.map((path) => ({
      scanner: 'pr-agent-config',
      rule: 'changed-by-untrusted-author',
      severity: 'high',
      field: 'files',
      offset: 0,
      excerpt: path,
    }));
    const shown = paths.slice(0, 8).join(', ') + (paths.length > 8 ? ` and ${paths.length - 8} more` : '');
    const reason = `blocked: pr-agent-config/changed-by-untrusted-author (high): this pull request, by an author who is not trusted, changes agent configuration (${shown}); the run would use the base branch's copy, but a person should look first (\`curupira allow\` lets it run once)`;
    const run = await recordBlocked(store, this.options.port, automation, task, reason, findings, digest);
    await this.options.writes()?.finished(automation, task, run);
    log.warn(
      { ...fields, run: run.id, files: paths.length },
      'Blocked: an untrusted pull request changes agent configuration',
    );
    return { kind: 'record', run };
  }
}

async function recordBlocked(
  store: Store,
  port: KernelPort,
  automation: ResolvedAutomation,
  task: Task,
  reason: string,
  findings: ScreeningFinding[],
  digest: string,
): Promise<RunRecord> {
  const run = await store.createRun({
    ...runInit(automation, task, 'blocked'),
    reason,
    screeningFindings: findings,
    screeningReason: reason,
    screenedDigest: digest,
  });
  return store.updateRun(run.id, { finishedAt: new Date(port.clock.now()).toISOString() });
}
