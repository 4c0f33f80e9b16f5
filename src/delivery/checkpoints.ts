/**
 * `push_checkpoints = true`: while the agent runs, its branch is pushed every `checkpoint_interval`
 * seconds when its tip moved, so the commits survive a dead machine. Never forced: an agent that
 * rewrote pushed history gets a refused checkpoint (logged), and the final delivery reports it.
 * Commits the delivery would hold (a secret, an unasked configuration edit: review.ts) are not
 * pushed as checkpoints either.
 */
import { errorMessage } from '../core/errors.js';
import type { TokenSource } from '../github/token.js';
import type { Logger } from '../log.js';
import { branchTip, pushBranch } from './push.js';
import { type AllowConfigEdits, reviewDelivery } from './review.js';

export interface CheckpointOptions {
  cwd: string;
  remote: string;
  branch: string;
  /** The branch on the remote (the delivery's readable name). */
  remoteBranch?: string;
  intervalMs: number;
  /** The tip the run started from: not pushed (nothing of the agent's yet). */
  startedAt: string | null;
  tokens?: TokenSource;
  log: Logger;
  /** `allow_config_edits` of the automation (the review before each push, review.ts). */
  allowConfigEdits?: AllowConfigEdits;
  /** The engine's environment: its secret-looking values count as secrets in the review. */
  env?: NodeJS.ProcessEnv;
}

export interface Checkpoints {
  /** Stops the timer and waits for a push in flight. */
  stop(): Promise<void>;
  /** How many checkpoint pushes went through. */
  readonly pushed: number;
}

export function startCheckpoints(options: CheckpointOptions): Checkpoints {
  let last = options.startedAt;
  let stopped = false;
  let pushed = 0;
  let held = false;
  let inFlight: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  const tick = async (): Promise<void> => {
    const tip = await branchTip(options.cwd, options.branch).catch(() => null);
    if (stopped || !tip || tip === last) return;
    // What the delivery would hold is not pushed as a checkpoint either (nor is anything after it).
    if (options.startedAt) {
      const findings = await reviewDelivery({
        cwd: options.cwd,
        from: options.startedAt,
        to: tip,
        allow: options.allowConfigEdits,
        ...(options.env ? { env: options.env } : {}),
      }).catch(() => [{ kind: 'secret' as const, path: '(the review failed)' }]);
      if (findings.length > 0) {
        if (!held)
          options.log.warn(
            { branch: options.branch, findings: findings.length },
            'Checkpoints stop: the commits need a person before they are pushed',
          );
        held = true;
        return;
      }
    }
    try {
      await pushBranch({
        cwd: options.cwd,
        remote: options.remote,
        branch: options.branch,
        ...(options.remoteBranch ? { remoteBranch: options.remoteBranch } : {}),
        ...(options.tokens ? { tokens: options.tokens } : {}),
      });
      last = tip;
      pushed += 1;
      options.log.info({ branch: options.branch, sha: tip }, 'Pushed a checkpoint of the branch');
    } catch (error) {
      options.log.warn({ branch: options.branch, error: errorMessage(error) }, 'Could not push a checkpoint');
    }
  };
  const schedule = (): void => {
    timer = setTimeout(() => {
      inFlight = tick().finally(() => {
        if (!stopped) schedule();
      });
    }, options.intervalMs);
    timer.unref();
  };
  schedule();
  return {
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await inFlight;
    },
    get pushed() {
      return pushed;
    },
  };
}
