/**
 * `curupira doctor`: one line per check, so a user sees at once what stands between them and a
 * first run. Exit 1 when any check fails. The token is never printed.
 */
import { accessSync, constants, existsSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Command } from 'commander';
import { getDriver } from '../agents/registry.js';
import { loadSettings } from '../config/load.js';
import type { Settings } from '../config/types.js';
import { systemClock } from '../core/clock.js';
import { ConfigError, errorMessage } from '../core/errors.js';
import { stateDir } from '../engine/paths.js';
import { SEARCH_COUNT, VIEWER } from '../github/operations.js';
import { silentLogger } from '../log.js';
import { runCommand } from '../process/command.js';
import { findExecutable } from '../process/env.js';
import { nextFireTimes } from '../triggers/cron/schedule.js';
import type { CronAutomation } from '../triggers/cron/schema.js';
import { formatInZone } from '../triggers/cron/schema.js';
import type { GitHubIssuesAutomation } from '../triggers/github-issues/schema.js';
import { issueSearchQuery } from '../triggers/github-issues/schema.js';
import type { GitHubPullRequestsAutomation } from '../triggers/github-pull-requests/schema.js';
import { pullRequestSearchQuery } from '../triggers/github-pull-requests/schema.js';
import { sourceFactory } from '../triggers/registry.js';
import { EXIT } from './exit-codes.js';
import { type CliIo, writeLine } from './io.js';
import { type GlobalOptions, setExitCode } from './program.js';
import { githubAccess } from './runtime.js';

interface Check {
  ok: boolean;
  label: string;
  detail: string;
}

function line(check: Check): string {
  return `${check.ok ? 'ok  ' : 'FAIL'}  ${check.label}: ${check.detail}`;
}

/** The nearest folder that exists on the way up, and whether we may write there. */
function writableFolder(path: string): { ok: boolean; detail: string } {
  let current = path;
  while (!existsSync(current)) {
    const parent = dirname(current);
    if (parent === current) break;
    current = parent;
  }
  try {
    accessSync(current, constants.W_OK);
    return {
      ok: true,
      detail: existsSync(path) ? `${path} is writable` : `${path} will be created (in ${current})`,
    };
  } catch {
    return { ok: false, detail: `${current} is not writable; choose another state_db_path` };
  }
}

async function githubChecks(settings: Settings, io: CliIo, emit: (c: Check) => void): Promise<void> {
  const log = silentLogger();
  const access = githubAccess(settings, io.env, log);
  let origin: string;
  try {
    origin = await access.tokens.describe();
    emit({ ok: true, label: 'GitHub token', detail: `found in ${origin}` });
  } catch (error) {
    emit({ ok: false, label: 'GitHub token', detail: errorMessage(error) });
    return;
  }
  const client = access.client();
  try {
    const { data } = await client.graphql<{ viewer: { login: string } }>(VIEWER);
    const rate = client.rateLimit();
    emit({
      ok: true,
      label: 'GitHub API',
      detail: `${settings.execution.github.api_url} reachable; the token belongs to ${data.viewer.login}${
        rate ? ` (${rate.remaining}/${rate.limit} GraphQL points left)` : ''
      }`,
    });
  } catch (error) {
    emit({
      ok: false,
      label: 'GitHub API',
      detail: `${settings.execution.github.api_url}: ${errorMessage(error)}`,
    });
    return;
  }
  for (const automation of settings.automations) {
    const label = `automation ${automation.id}`;
    try {
      if (automation.triggerType === 'github-issues' || automation.triggerType === 'github-pull-requests') {
        const query =
          automation.triggerType === 'github-issues'
            ? issueSearchQuery(automation.config as GitHubIssuesAutomation)
            : pullRequestSearchQuery(automation.config as GitHubPullRequestsAutomation);
        const { data } = await client.graphql<{ search: { issueCount: number } }>(SEARCH_COUNT, { query });
        const postFilter =
          automation.triggerType === 'github-pull-requests' &&
          ((automation.config as GitHubPullRequestsAutomation).mergeable !== undefined ||
            (automation.config as GitHubPullRequestsAutomation).merge_state.length > 0);
        emit({
          ok: true,
          label,
          detail: `${data.search.issueCount} match${data.search.issueCount === 1 ? '' : 'es'}${postFilter ? ' before post-filters' : ''} for ${query}`,
        });
      } else if (automation.triggerType === 'github-project-items') {
        const factory = sourceFactory(automation.triggerType)!;
        const source = factory(automation, { github: access.client, clock: systemClock, log });
        const items = await source.discover({ limit: 1000 });
        emit({
          ok: true,
          label,
          detail: `${items.length} card${items.length === 1 ? '' : 's'} in the column`,
        });
      }
    } catch (error) {
      emit({ ok: false, label, detail: errorMessage(error) });
    }
  }
}

export async function runDoctor(configFile: string, io: CliIo): Promise<Check[]> {
  const checks: Check[] = [];
  const emit = (check: Check): void => {
    checks.push(check);
    writeLine(io.stdout, line(check));
  };
  let settings: Settings;
  try {
    settings = loadSettings(configFile).settings;
    emit({
      ok: true,
      label: 'settings file',
      detail: `${configFile} (${settings.automations.length} automations)`,
    });
  } catch (error) {
    emit({
      ok: false,
      label: 'settings file',
      detail: error instanceof ConfigError ? error.message : errorMessage(error),
    });
    return checks;
  }
  const cronOnly = settings.automations.every((a) => a.triggerType === 'cron');
  if (cronOnly) emit({ ok: true, label: 'GitHub', detail: 'not needed: every automation is a schedule' });
  else await githubChecks(settings, io, emit);
  for (const automation of settings.automations.filter((a) => a.triggerType === 'cron')) {
    const next = nextFireTimes(
      (automation.config as CronAutomation).schedule,
      automation.timezone,
      new Date(),
      1,
    )[0];
    emit({
      ok: true,
      label: `automation ${automation.id}`,
      detail: `next fire ${next ? formatInZone(next, automation.timezone) : 'never'}`,
    });
  }
  for (const [name, profile] of Object.entries(settings.agents.profiles)) {
    const driver = getDriver(profile.provider);
    const executable = profile.executable ?? driver.executable;
    const found = findExecutable(executable, io.env.PATH, settings.dir);
    emit({
      ok: found !== undefined,
      label: `profile ${name}`,
      detail: found
        ? `${driver.displayName} at ${found}`
        : `${executable} not found on PATH; install ${driver.displayName}: ${driver.installUrl}`,
    });
  }
  try {
    const git = await runCommand('git', ['--version'], { env: io.env, timeoutMs: 10_000 });
    emit({ ok: git.exitCode === 0, label: 'git', detail: git.stdout.trim() || git.stderr.trim() });
  } catch (error) {
    emit({ ok: false, label: 'git', detail: errorMessage(error) });
  }
  const state = writableFolder(stateDir(settings));
  emit({ ok: state.ok, label: 'state folder', detail: state.detail });
  return checks;
}

export function registerDoctor(program: Command, io: CliIo, globals: () => GlobalOptions): void {
  program
    .command('doctor')
    .description(
      'Check the settings, the GitHub token and API, each automation’s matches, the agent CLIs, git and the state folder.',
    )
    .action(async () => {
      const checks = await runDoctor(globals().config, io);
      const failed = checks.filter((c) => !c.ok).length;
      writeLine(
        io.stdout,
        failed === 0 ? 'All checks passed.' : `${failed} check${failed === 1 ? '' : 's'} failed.`,
      );
      setExitCode(failed === 0 ? EXIT.ok : EXIT.failure);
    });
}
