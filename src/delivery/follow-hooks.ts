/** What the engine hands the follower (src/delivery/follow.ts) beyond reading pull requests. */
import type { ResolvedAutomation } from '../config/types.js';
import type { RunRecord } from '../core/types.js';
import type { Logger } from '../log.js';
import type { Store } from '../store/types.js';
import { removeRunWorktree } from './cleanup.js';
import type { FollowDeps } from './follow.js';

export interface FollowHookSource {
  store: Store;
  log: Logger;
  automation(id: string): ResolvedAutomation | undefined;
  notify: NonNullable<FollowDeps['notify']>;
  redevelop: NonNullable<FollowDeps['redevelop']>;
}

export function followHooks(
  source: FollowHookSource,
): Pick<FollowDeps, 'stateLabels' | 'notify' | 'redevelop' | 'removeWorktree' | 'config' | 'mergedWrites'> {
  return {
    config: (id) => source.automation(id)?.config,
    mergedWrites: (run) => {
      const automation = source.automation(run.automationId);
      const back = automation?.trigger.writeBack;
      return automation && back?.merged ? back.merged(automation as never, run) : [];
    },
    stateLabels: (id) => {
      const config = source.automation(id)?.config;
      return [config?.status_label, config?.failed_label].filter((l): l is string => typeof l === 'string');
    },
    notify: source.notify,
    redevelop: source.redevelop,
    removeWorktree: async (run: RunRecord) => {
      const automation = source.automation(run.automationId);
      if (!automation || !run.worktreeKept) return;
      // Its pull request merged: the commits landed, nothing is lost.
      const result = await removeRunWorktree(source.store, automation.repository.checkoutPath, run, {
        confirm: true,
      });
      if (result.kind === 'not-kept' || result.kind === 'failed')
        source.log.warn({ run: run.id, reason: result.reason }, 'Kept the worktree of a finished delivery');
    },
  };
}
