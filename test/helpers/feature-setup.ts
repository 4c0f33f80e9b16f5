/**
 * What a feature's unit test starts from: settings read from a short TOML text, a SQLite store in a
 * temporary folder, an injected clock, a fake kernel port (fake-port.ts), and finished runs made
 * the way the kernel records them. Call `cleanupFeatureSetups` in `afterEach`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadSettingsFromText } from '../../src/config/load.js';
import type { ResolvedAutomation, Settings } from '../../src/config/types.js';
import { FakeClock } from '../../src/core/clock.js';
import type { RunOutcome } from '../../src/core/feature.js';
import { runInit } from '../../src/core/task-fields.js';
import type { Item, RunRecord, RunStatus, Task } from '../../src/core/types.js';
import { taskFromItem } from '../../src/engine/task.js';
import { type Simulator, SimWorld, startSimulator } from '../../src/simulator/index.js';
import { openStore } from '../../src/store/index.js';
import type { RunPatch, Store } from '../../src/store/types.js';
import { type FakePort, fakePort } from './fake-port.js';

const dirs: string[] = [];
const stores: Store[] = [];

export async function cleanupFeatureSetups(): Promise<void> {
  for (const store of stores.splice(0)) await store.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

export interface FeatureSetup {
  dir: string;
  settings: Settings;
  store: Store;
  clock: FakeClock;
  port: FakePort;
  /** The first automation (`fix`, issues of acme/api unless `automations` replaces it). */
  automation: ResolvedAutomation;
}

export const ISSUE_AUTOMATION = `[automations.fix]
trigger_type = "github-issues"
repository = "api"
repo = "acme/api"
labels = ["agent-ready"]
prompt = "Fix"
`;

export async function featureSetup(
  options: { settings?: string; automations?: string; mode?: 'drain' | 'watch'; now?: number } = {},
): Promise<FeatureSetup> {
  const dir = mkdtempSync(join(tmpdir(), 'curupira-feature-'));
  dirs.push(dir);
  const { settings } = loadSettingsFromText(
    `[settings]
workspace_dir = "ws"
state_db_path = "state.sqlite3"
${options.settings ?? ''}
[repositories.api]
remote = "https://example.com/acme/api.git"
[agents.profiles.main]
provider = "claude"
[agents.defaults]
profile = "main"
${options.automations ?? ISSUE_AUTOMATION}`,
    join(dir, 'settings.toml'),
  );
  const clock = new FakeClock(options.now ?? Date.UTC(2026, 11, 3, 12, 0, 0));
  // The store stamps its rows with the same clock.
  const store = await openStore(join(dir, 'state.sqlite3'), { now: () => clock.now() });
  stores.push(store);
  return {
    dir,
    settings,
    store,
    clock,
    port: fakePort(settings, clock, options.mode),
    automation: settings.automations[0]!,
  };
}

export function issueItem(id = '7', title = 'Crash'): Item {
  return {
    id,
    title,
    url: `https://github.com/acme/api/issues/${id}`,
    body: '',
    itemKey: `issue:${id}`,
    fields: { issue_number: id, issue_title: title },
  };
}

export function issueTask(automation: ResolvedAutomation, id = '7'): Task {
  return taskFromItem(automation, issueItem(id));
}

/** A run of `task` recorded as the kernel does, finished with `status`. */
export async function finishedRun(
  setup: FeatureSetup,
  status: RunStatus,
  options: { task?: Task; automation?: ResolvedAutomation; patch?: RunPatch } = {},
): Promise<RunOutcome> {
  const automation = options.automation ?? setup.automation;
  const task = options.task ?? issueTask(automation);
  const created = await setup.store.createRun(runInit(automation, task, 'preparing'));
  const run: RunRecord = await setup.store.updateRun(created.id, {
    status,
    finishedAt: new Date(setup.clock.now()).toISOString(),
    ...options.patch,
  });
  return { automation, task, run, renoted: false };
}

export function gateRequest(automation: ResolvedAutomation, task: Task, resumed = false) {
  return { automation, task, resumed, signal: new AbortController().signal };
}

/** The token the simulator of `simulatorWithIssue` accepts (user `octocat`). */
export const SIM_TOKEN = 'ghp_featureSetupToken00000000000000001';

/** The local GitHub simulator with acme/api and its issue #1 (by octocat, labelled agent-ready). */
export async function simulatorWithIssue(): Promise<Simulator> {
  const world = new SimWorld();
  world.addRepo('acme/api');
  world.addUser('octocat');
  world.addToken(SIM_TOKEN, 'octocat');
  world.addIssue('acme/api', { title: 'Crash', body: '', labels: ['agent-ready'], author: 'octocat' });
  return startSimulator({ world });
}
