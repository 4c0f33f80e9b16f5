/**
 * `curupira simulator --trackers [DIR]`: the Linear and Jira stand-ins served beside the GitHub
 * simulator, for trying those sources without an account (src/simulator/trackers.ts), and DIR made
 * ready for examples/trackers.toml: a local git remote (the demo's tiny repository), the scripted
 * agent, and DIR/settings.toml, the example with DIR and the stand-ins' addresses written in.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { installFakeAgents } from '../agents/fake/install.js';
import { UsageError } from '../core/errors.js';
import { importOptional, SIMULATOR_PACKAGES } from '../core/optional.js';
import { type CliIo, writeLine } from './io.js';

/** Where examples/trackers.toml expects the folder (and the default of `--trackers`). */
export const TRACKERS_DIR = '/tmp/curupira-trackers';
/** The demo world's repository, backed by the folder's remote (`remote/widgets.git`). */
export const TRACKERS_REPO = 'acme/widgets';
/** The stand-ins' addresses in examples/trackers.toml (the default ports). */
const EXAMPLE_LINEAR_URL = 'http://127.0.0.1:8788/graphql';
const EXAMPLE_JIRA_URL = 'http://127.0.0.1:8789';
const MARK = 'by `curupira simulator --trackers`';
/** What the command puts in DIR; a later one there replaces exactly these. */
const ENTRIES = ['seed', 'remote', 'bin', 'workspaces', 'state', 'settings.toml'] as const;

/** examples/trackers.toml, beside dist/ (an install ships examples/) or src/ (a checkout). */
export function trackersExample(): string {
  return readFileSync(new URL('../../examples/trackers.toml', import.meta.url), 'utf8');
}

/** A new or empty DIR as it is; one an earlier `--trackers` prepared loses those files; else refused. */
function prepareFolder(dir: string): void {
  mkdirSync(dir, { recursive: true });
  const entries = readdirSync(dir);
  if (entries.length === 0) return;
  const settings = join(dir, 'settings.toml');
  const earlier =
    existsSync(settings) &&
    readFileSync(settings, 'utf8').includes(MARK) &&
    entries.every((entry) => (ENTRIES as readonly string[]).includes(entry));
  if (!earlier)
    throw new UsageError(
      `${dir} is not empty and was not prepared by an earlier --trackers; give --trackers a new or empty folder`,
    );
  for (const entry of ENTRIES) rmSync(join(dir, entry), { recursive: true, force: true });
}

export async function serveTrackers(
  io: CliIo,
  dir: string,
  ports: { linear: number; jira: number },
): Promise<{ close(): Promise<void>; remote: string }> {
  prepareFolder(dir);
  const { createDemoRemote } = await import('./demo.js');
  const remote = await createDemoRemote(dir);
  installFakeAgents(join(dir, 'bin'));
  const { startTrackerStandIns, TRACKER_DEMO } = await importOptional(
    () => import('../simulator/trackers.js'),
    'The Linear and Jira stand-ins (curupira simulator --trackers)',
    SIMULATOR_PACKAGES,
  );
  const standIns = await startTrackerStandIns(ports);
  const settings = join(dir, 'settings.toml');
  const text = trackersExample()
    .replaceAll(EXAMPLE_LINEAR_URL, standIns.linear.url)
    .replaceAll(EXAMPLE_JIRA_URL, standIns.jira.url)
    .replaceAll(TRACKERS_DIR, dir)
    .replaceAll('--config examples/trackers.toml', `--config ${settings}`);
  writeFileSync(settings, `# Written in ${dir} ${MARK}, from examples/trackers.toml.\n${text}`);
  writeLine(io.stderr, `Linear stand-in listening on ${standIns.linear.url} (team ENG, issue ENG-1)`);
  writeLine(io.stderr, `Jira stand-in listening on ${standIns.jira.url} (project WID, issue WID-1)`);
  writeLine(
    io.stderr,
    `Their credentials: LINEAR_API_KEY=${TRACKER_DEMO.linearKey} JIRA_API_TOKEN=${TRACKER_DEMO.jiraToken} (Jira email ${TRACKER_DEMO.jiraEmail})`,
  );
  writeLine(io.stderr, `Settings for them: ${settings}`);
  return { close: () => standIns.close(), remote };
}
