/** Delivery (issue 13): pushing a run's branch and opening or adopting its pull request. */
import type { Clock } from '../core/clock.js';
import { createGitHubClient, type GitHubClient } from '../github/client.js';
import type { TokenSource } from '../github/token.js';
import type { Logger } from '../log.js';
import type { Store } from '../store/types.js';
import { type DeliveryDeps, wantsDelivery } from './deliver.js';

export {
  type DeliveryDeps,
  type DeliveryResult,
  deliverRun,
  openDelivery,
  wantsDelivery,
} from './deliver.js';

interface DeliverySource {
  store: Store;
  log: Logger;
  clock: Clock;
  tokens?: TokenSource;
  github(): GitHubClient;
  stopSignal?: AbortSignal;
}

const built = new WeakMap<DeliverySource, DeliveryDeps>();

/**
 * What the executor delivers with, only when an automation sets `deliver` (no write otherwise).
 * Its client makes one attempt per request: a retried POST could open a second pull request, so
 * delivery retries itself, reading the open pull requests first.
 */
export function createDeliveryDeps(
  automations: readonly { config: { deliver?: unknown } }[],
  source: DeliverySource,
): DeliveryDeps | undefined {
  if (!wantsDelivery(automations)) return undefined;
  let deps = built.get(source);
  if (!deps) {
    const { store, log, clock, tokens } = source;
    const github = tokens
      ? createGitHubClient({
          apiUrl: source.github().apiUrl,
          tokens,
          clock,
          log,
          maxAttempts: 1,
          ...(source.stopSignal ? { signal: source.stopSignal } : {}),
        })
      : undefined;
    deps = { store, log, clock, ...(tokens ? { tokens } : {}), ...(github ? { github } : {}) };
    built.set(source, deps);
  }
  return deps;
}
