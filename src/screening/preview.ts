/**
 * Screening's answer for `run --dry-run`: what the gate would decide on an item, read the way the
 * gate reads it (GitHub reads only), recording nothing, taking no allowance and asking no
 * classifier. A first run of an item that screening would block was shown as "Selected" before.
 */
import { resolveScreening } from '../config/screening.js';
import type { ResolvedAutomation, Settings } from '../config/types.js';
import type { Clock } from '../core/clock.js';
import type { Task } from '../core/types.js';
import type { GitHubClient } from '../github/client.js';
import type { Logger } from '../log.js';
import type { Store } from '../store/types.js';
import { createClassifier } from './classifier/lazy.js';
import { previewGate } from './gate.js';
import { TeamCache } from './gate-context.js';

export interface ScreeningPreviewDeps {
  store: Store;
  log: Logger;
  clock: Clock;
  github(): GitHubClient;
  env?: NodeJS.ProcessEnv;
}

export type ScreeningPreview = { held: string } | { note: string } | undefined;

export async function previewScreening(
  settings: Settings,
  automation: ResolvedAutomation,
  task: Task,
  deps: ScreeningPreviewDeps,
): Promise<ScreeningPreview> {
  // A saved session resumes without screening (it was screened when it started).
  if (await deps.store.getSession(task.key)) return undefined;
  const screening = resolveScreening(
    settings.execution.screening,
    automation.config.screening,
    settings.dir,
    {
      own: automation.profileName,
      profiles: settings.agents.profiles,
    },
  );
  return previewGate(
    {
      store: deps.store,
      log: deps.log,
      clock: deps.clock,
      github: deps.github,
      teams: new TeamCache(() => deps.clock.now()),
      classifier: (classifier) => createClassifier(classifier, deps.env),
    },
    automation,
    task,
    screening,
    new AbortController().signal,
  );
}
