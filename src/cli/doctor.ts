/**
 * `curupira doctor`: one line per check, so a user sees at once what stands between them and a
 * first run. Exit 1 when any check fails. The token is never printed.
 */

import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Command } from 'commander';
import { helpOptions, profileOptions } from '../agents/help-options.js';
import { CLASSIFIER_PROVIDERS, loadDriver } from '../agents/registry.js';
import type { Profile } from '../agents/schemas.js';
import { loadSettings } from '../config/load.js';
import { resolveScreening, type ScreeningSettings } from '../config/screening.js';
import type { RepositorySettings, Settings } from '../config/types.js';
import { systemClock } from '../core/clock.js';
import { ConfigError, errorMessage } from '../core/errors.js';
import { stateDir } from '../engine/paths.js';
import { VIEWER } from '../github/operations.js';
import { silentLogger } from '../log.js';
import { resolveTargets } from '../notify/targets.js';
import { runCommand } from '../process/command.js';
import { buildAgentEnv, buildToolEnv, findExecutable, GIT_ENV } from '../process/env.js';
import { createBubblewrapBackend } from '../sandbox/bubblewrap/index.js';
import { sandboxChoice } from '../sandbox/choice.js';
import { openStore, postgresStateVersion, redactUrl } from '../store/index.js';
import type { Store } from '../store/types.js';
import { createServiceKit, noService } from '../triggers/service.js';
import type { DoctorContext } from '../triggers/types.js';
import { GitCommandError, git, isGitCheckout, scrub } from '../workspace/git.js';
import { EXIT, setExitCode } from './exit-codes.js';
import { type CliIo, writeJson, writeLine } from './io.js';
import type { GlobalOptions } from './program.js';
import { githubAccess } from './runtime.js';

export interface Check {
  ok: boolean;
  label: string;
  detail: string;
  /** Passes, but something needs a look (printed `warn`; the exit code is unchanged). */
  warn?: boolean;
}

function line(check: Check): string {
  return `${check.ok ? (check.warn ? 'warn' : 'ok  ') : 'FAIL'}  ${check.label}: ${check.detail}`;
}

/**
 * Warnings for profiles that would stop at an interactive login or an approval prompt in an
 * unattended run (what each driver knows of its CLI: `AgentDriver.unattended`). Each names the
 * profile and the key to set.
 */
export async function unattendedChecks(settings: Settings, env: NodeJS.ProcessEnv): Promise<Check[]> {
  const checks: Check[] = [];
  for (const [name, profile] of Object.entries(settings.agents.profiles)) {
    const driver = await loadDriver(profile.provider);
    const hook = driver.unattended;
    if (!hook) continue;
    const label = `profile ${name} unattended`;
    const approval = hook.approval?.(profile);
    if (approval)
      checks.push({
        ok: true,
        warn: true,
        label,
        detail: `${driver.displayName} will ask for approval: set ${approval.key} in [agents.profiles.${name}] to ${approval.advice}`,
      });
    const login = hook.login;
    if (!login) continue;
    const set = (key: string): boolean => Boolean(profile.env?.[key] ?? env[key]);
    const home = env.HOME;
    const loggedIn =
      login.env.some(set) ||
      (home !== undefined && home !== '' && login.homeFiles.some((file) => existsSync(join(home, file))));
    if (!loggedIn)
      checks.push({
        ok: true,
        warn: true,
        label,
        detail: `${driver.displayName} finds no login and may stop at an interactive one: set ${login.env[0]} (or ${login.env.slice(1).join(', ')}) in the environment or in env of [agents.profiles.${name}], or log in once with \`${driver.executable}\` so that ${login.homeFiles.map((f) => `~/${f}`).join(', ')} exists`,
      });
  }
  return checks;
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
  await automationChecks(
    settings,
    'github',
    { github: access.client, clock: systemClock, log, service: noService },
    emit,
  );
}

/** Each automation's own check (its trigger's `doctor` hook) among those that need `needs`. */
async function automationChecks(
  settings: Settings,
  needs: 'github' | 'clock' | 'service' | 'state',
  context: Omit<DoctorContext, 'automations' | 'storeReadable'> & { storeReadable?: boolean },
  emit: (c: Check) => void,
): Promise<void> {
  for (const automation of settings.automations) {
    if (automation.trigger.doctor.needs !== needs) continue;
    const label = `automation ${automation.id}`;
    try {
      const check = await automation.trigger.doctor.check(automation, {
        ...context,
        automations: settings.automations,
        storeReadable: context.storeReadable ?? true,
      });
      emit({ ok: check.ok, label, detail: check.detail });
    } catch (error) {
      emit({ ok: false, label, detail: errorMessage(error) });
    }
  }
}

/** How long one `git ls-remote` may take before the remote counts as not answering. */
const LS_REMOTE_TIMEOUT_MS = 30_000;

/** The line of git's stderr that says what went wrong (`fatal: …`), credentials scrubbed. */
function gitReason(error: unknown): string {
  if (error instanceof GitCommandError) {
    if (error.timedOut) return `no answer within ${LS_REMOTE_TIMEOUT_MS / 1000} seconds`;
    const lines = error.stderr
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean);
    const fatal = lines.find((l) => /^(fatal|error):/i.test(l)) ?? lines[0];
    if (fatal) return scrub(fatal);
  }
  return scrub(errorMessage(error));
}

function defaultBranch(lsRemote: string): string | undefined {
  return /^ref: refs\/heads\/(\S+)\s+HEAD$/m.exec(lsRemote)?.[1];
}

/**
 * The remote answers the same `git` (same sanitised environment, no prompts) the clone and each
 * run's fetch use. An existing checkout must be a Git checkout, and its `origin` must answer.
 */
async function repositoryCheck(repository: RepositorySettings, settingsDir: string): Promise<Check> {
  const label = `repository ${repository.alias}`;
  const remote = scrub(repository.remote);
  const checkout = repository.checkoutPath;
  let cwd = settingsDir;
  let target = repository.remote;
  let where = `${remote} answers`;
  if (existsSync(checkout)) {
    if (!(await isGitCheckout(checkout))) {
      return {
        ok: false,
        label,
        detail: `${checkout} exists but is not a Git checkout; move it away or set repositories.${repository.alias}.path`,
      };
    }
    cwd = checkout;
    target = 'origin';
    where = `checkout ${checkout}; its origin answers`;
  }
  try {
    const out = await git(['ls-remote', '--symref', '--', target, 'HEAD'], {
      cwd,
      timeoutMs: LS_REMOTE_TIMEOUT_MS,
    });
    const branch = defaultBranch(out);
    return { ok: true, label, detail: `${where}${branch ? ` (default branch ${branch})` : ''}` };
  } catch (error) {
    const from = target === 'origin' ? `origin of ${checkout}` : remote;
    return { ok: false, label, detail: `${from} cannot be read: ${gitReason(error)}` };
  }
}

/**
 * The classifier each screened automation runs with: a FAIL when a configured one cannot be found;
 * none at all is fine for vouched items (unvouched ones are held), and the line says how to add one.
 */
export function screeningChecks(settings: Settings, env: NodeJS.ProcessEnv): Check[] {
  const label = 'screening';
  const groups = new Map<string, { screening: ScreeningSettings; ids: string[] }>();
  for (const automation of settings.automations) {
    const hook = automation.trigger.screening;
    if (hook && 'unscreened' in hook) continue;
    const screening = resolveScreening(
      settings.execution.screening,
      automation.config.screening,
      settings.dir,
      { own: automation.profileName, profiles: settings.agents.profiles },
    );
    const key = JSON.stringify([screening.mode, screening.required, screening.classifier]);
    const group = groups.get(key) ?? { screening, ids: [] };
    group.ids.push(automation.id);
    groups.set(key, group);
  }
  if (groups.size === 0)
    return [{ ok: true, label, detail: 'not needed: no automation reads text written by strangers' }];
  return [...groups.values()].map(({ screening, ids }) => {
    const which = `${ids.length === 1 ? 'automation' : 'automations'} ${ids.join(', ')}`;
    if (screening.mode === 'off')
      return {
        ok: true,
        label,
        detail: `off for ${which}: text written by strangers reaches the agent unscreened`,
      };
    const { command, modelDir } = screening.classifier;
    if (command) {
      const found = findExecutable(command[0]!, env.PATH, settings.dir);
      return found
        ? { ok: true, label, detail: `classifier command ${command.join(' ')} (${found}) for ${which}` }
        : {
            ok: false,
            label,
            detail: `classifier_command ${command[0]} not found on PATH; every run of ${which} is blocked until it is`,
          };
    }
    if (modelDir) {
      const missing = [
        ...(['model.onnx', 'onnx/model.onnx'].some((f) => existsSync(`${modelDir}/${f}`))
          ? []
          : ['model.onnx']),
        ...(existsSync(`${modelDir}/tokenizer.json`) ? [] : ['tokenizer.json']),
      ];
      return missing.length === 0
        ? { ok: true, label, detail: `classifier model ${modelDir} for ${which}` }
        : {
            ok: false,
            label,
            detail: `classifier_model ${modelDir} lacks ${missing.join(' and ')}; every run of ${which} is blocked until it has them`,
          };
    }
    const agent = screening.classifier.agent;
    if (agent) {
      const profile = agent.profile;
      if (!profile)
        return {
          ok: false,
          label,
          detail: `classifier_agent names the profile ${agent.profileName}, which is not in [agents.profiles]; every run of ${which} is blocked until it is`,
        };
      if (!CLASSIFIER_PROVIDERS.includes(profile.provider))
        return {
          ok: false,
          label,
          detail: `classifier_agent: ${profile.provider} (profile ${agent.profileName}) has no tool-free mode curupira knows (claude, codex, gemini, opencode, kilo do); every run of ${which} is blocked`,
        };
      return {
        ok: true,
        label,
        detail: `classifier agent ${agent.profileName} (${profile.provider}, tool-free, one call per field) for ${which}`,
      };
    }
    if (!screening.required || screening.mode === 'warn')
      return {
        ok: true,
        label,
        detail: `deterministic scanners only, no classifier (required = false) for ${which}`,
      };
    return {
      ok: true,
      label,
      detail: `no classifier for ${which}: vouched items (a trusted author, or labels a trusted actor applied) run scanned; unvouched ones are held. Set classifier_model (a folder with a Prompt Guard model.onnx and tokenizer.json) or classifier_command under [settings.screening] to screen them, or required = false to accept the risk`,
    };
  });
}

/** The client of checks made without GitHub (they must not ask for it). */
function noGitHub(): never {
  throw new Error('this check was made without GitHub access');
}

export interface DoctorOptions {
  /** Print each check as it is made (the text form); `--json` prints them all at the end. */
  print?: boolean;
}

export async function runDoctor(
  configFile: string,
  io: CliIo,
  options: DoctorOptions = { print: true },
): Promise<Check[]> {
  const checks: Check[] = [];
  const emit = (check: Check): void => {
    checks.push(check);
    if (options.print !== false) writeLine(io.stdout, line(check));
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
  const offline = settings.automations.every((a) => a.trigger.doctor.needs !== 'github');
  if (offline)
    emit({ ok: true, label: 'GitHub', detail: 'not needed: no automation reads its work from GitHub' });
  else await githubChecks(settings, io, emit);
  const local = { github: noGitHub, clock: systemClock, log: silentLogger(), service: noService };
  await automationChecks(settings, 'clock', local, emit);
  await automationChecks(
    settings,
    'service',
    { ...local, service: createServiceKit({ env: io.env, dir: settings.dir }) },
    emit,
  );
  const state =
    settings.execution.state_db_url === undefined
      ? await stateFileCheck(settings.execution.state_db_path)
      : await stateDatabaseCheck(settings.execution.state_db_url);
  try {
    await automationChecks(
      settings,
      'state',
      { ...local, ...(state.store ? { store: state.store } : {}), storeReadable: state.readable },
      emit,
    );
  } finally {
    await state.store?.close();
  }
  for (const repository of Object.values(settings.repositories)) {
    emit(await repositoryCheck(repository, settings.dir));
  }
  for (const [name, profile] of Object.entries(settings.agents.profiles)) {
    const driver = await loadDriver(profile.provider);
    const executable = profile.executable ?? driver.executable;
    const found = findExecutable(executable, io.env.PATH, settings.dir);
    emit({
      ok: found !== undefined,
      label: `profile ${name}`,
      detail: found
        ? `${driver.displayName} at ${found}`
        : `${executable} not found on PATH; install ${driver.displayName}: ${driver.installUrl}`,
    });
    if (found) {
      const check = await profileOptionsCheck(name, profile, found, settings.dir, io.env);
      if (check) emit(check);
    }
  }
  try {
    const git = await runCommand('git', ['--version'], {
      env: buildToolEnv({ source: io.env, allow: GIT_ENV }),
      timeoutMs: 10_000,
    });
    emit({ ok: git.exitCode === 0, label: 'git', detail: git.stdout.trim() || git.stderr.trim() });
  } catch (error) {
    emit({ ok: false, label: 'git', detail: errorMessage(error) });
  }
  for (const check of await unattendedChecks(settings, io.env)) emit(check);
  for (const check of screeningChecks(settings, io.env)) emit(check);
  for (const check of notificationChecks(settings, io.env)) emit(check);
  const sandbox = await sandboxCheck(settings, io.env);
  if (sandbox) emit(sandbox);
  const folder = writableFolder(stateDir(settings));
  emit({ ok: folder.ok, label: 'state folder', detail: folder.detail });
  emit(state.check);
  return checks;
}

/**
 * Each notification target's URL (and a webhook's signing secret) is read from the environment when
 * `run` or `serve` starts, which refuse to start without it: said here first. Nothing is sent, and
 * a URL (a Slack one is a credential) is shown as its scheme and host only.
 */
export function notificationChecks(settings: Settings, env: NodeJS.ProcessEnv): Check[] {
  if (Object.keys(settings.notifications ?? {}).length === 0) return [];
  try {
    return resolveTargets(settings, env).map((target) => {
      let where = 'an unreadable URL';
      try {
        const url = new URL(target.url);
        where = `${url.protocol}//${url.host}/…`;
      } catch {}
      return {
        ok: true,
        label: `notification ${target.name}`,
        detail: `${target.kind} to ${where} for ${[...target.events].join(', ')}${target.automations ? ` of ${[...target.automations].join(', ')}` : ''} (nothing sent by doctor)`,
      };
    });
  } catch (error) {
    return [
      {
        ok: false,
        label: 'notifications',
        detail: `${errorMessage(error)}; \`curupira run\` and \`serve\` refuse to start until it is set`,
      },
    ];
  }
}

/**
 * Issue 26: whether the sandbox the automations ask for starts here (bubblewrap installed, user
 * namespaces allowed), and what to install or enable when it does not. A failure only fails the
 * check where an automation requires a sandbox; with `auto` its runs go unsandboxed, which is said.
 */
export async function sandboxCheck(settings: Settings, env: NodeJS.ProcessEnv): Promise<Check | undefined> {
  const choices = settings.automations.map((automation) => ({
    id: automation.id,
    mode: sandboxChoice(automation, settings.execution).mode,
  }));
  const wanting = choices.filter((choice) => choice.mode !== 'none');
  if (wanting.length === 0)
    return { ok: true, label: 'sandbox', detail: 'not used: every automation has sandbox = "none"' };
  const probe = await createBubblewrapBackend({ path: env.PATH, env }).probe();
  const ids = wanting.map((choice) => choice.id).join(', ');
  if (probe.ok) return { ok: true, label: 'sandbox', detail: `bubblewrap starts (sandboxed: ${ids})` };
  const strict = wanting.filter((choice) => choice.mode !== 'auto').map((choice) => choice.id);
  return {
    ok: strict.length === 0,
    label: 'sandbox',
    detail:
      strict.length > 0
        ? `${probe.reason}; runs of ${strict.join(', ')} fail until it starts`
        : `${probe.reason}; runs of ${ids} go unsandboxed (sandbox = "auto")`,
  };
}

/**
 * The options a profile's keys add (`--model`, `--permission-mode`, …) must be options of the
 * installed CLI, or every run with that profile fails on an unknown option (Claude Code 2.1 has no
 * `--permission-prompts`, which `permission_prompts` emits as the reference does). Read from the
 * CLI's `--help`; no check when the help cannot be read or lists too few options to be one.
 */
async function profileOptionsCheck(
  name: string,
  profile: Profile,
  executable: string,
  dir: string,
  env: NodeJS.ProcessEnv,
): Promise<Check | undefined> {
  const driver = await loadDriver(profile.provider);
  const { subcommand, fromProfile } = profileOptions(driver, profile, dir);
  if (fromProfile.length === 0) return undefined;
  let help: string;
  try {
    // The environment a run gives the agent (without the GitHub token): no other provider's key.
    const agentEnv = buildAgentEnv({
      source: env,
      providerAllowlist: driver.envAllowlist,
      extra: profile.env,
      passEnv: profile.pass_env,
      cwd: dir,
    });
    const result = await runCommand(executable, [...subcommand, '--help'], {
      env: agentEnv,
      cwd: dir,
      timeoutMs: 10_000,
    });
    if (result.exitCode !== 0) return undefined;
    help = result.stdout + result.stderr;
  } catch {
    return undefined;
  }
  const listed = helpOptions(help);
  if (listed.size < 5) return undefined;
  const missing = fromProfile.filter((option) => !listed.has(option));
  const command = [driver.executable, ...subcommand, '--help'].join(' ');
  return missing.length === 0
    ? {
        ok: true,
        label: `profile ${name} options`,
        detail: `${fromProfile.join(', ')} listed by \`${command}\``,
      }
    : {
        ok: false,
        label: `profile ${name} options`,
        detail: `${missing.join(', ')} not listed by \`${command}\`: runs with this profile would fail on an unknown option; remove the key that adds it from [agents.profiles.${name}] or update ${driver.displayName}`,
      };
}

/** The PostgreSQL state (`state_db_url`) is reachable and curupira's; opened read-only, nothing is written. */
async function stateDatabaseCheck(url: string): Promise<{ check: Check; readable: boolean; store?: Store }> {
  const label = 'state database';
  const where = redactUrl(url);
  try {
    if ((await postgresStateVersion(url)) === 0) {
      return {
        check: { ok: true, label, detail: `${where} is reachable; the first run creates the state there` },
        readable: true,
      };
    }
    return await readableStore(
      label,
      where,
      () => openStore(url, { readonly: true }),
      (store) => store.countRuns(),
    );
  } catch (error) {
    return { check: { ok: false, label, detail: errorMessage(error) }, readable: false };
  }
}

/**
 * Opens the state read-only and counts what it holds: the check, and the store for the trigger
 * checks that read it (closed here when it does not read).
 */
async function readableStore(
  label: string,
  where: string,
  open: () => Promise<Store>,
  countRuns: (store: Store) => Promise<number>,
): Promise<{ check: Check; readable: boolean; store?: Store }> {
  let store: Store | undefined;
  try {
    store = await open();
    const runs = await countRuns(store);
    const sessions = await store.listSessions();
    return {
      check: {
        ok: true,
        label,
        detail: `${where} is curupira's and readable (${runs} run${runs === 1 ? '' : 's'}, ${sessions.length} saved session${sessions.length === 1 ? '' : 's'})`,
      },
      readable: true,
      store,
    };
  } catch (error) {
    await store?.close();
    return { check: { ok: false, label, detail: errorMessage(error) }, readable: false };
  }
}

/** The state file is curupira's and every table reads; opened read-only, nothing is written. */
async function stateFileCheck(path: string): Promise<{ check: Check; readable: boolean; store?: Store }> {
  const label = 'state file';
  if (!existsSync(path))
    return { check: { ok: true, label, detail: `${path} will be created on the first run` }, readable: true };
  if (statSync(path).isFile() && statSync(path).size === 0)
    return {
      check: { ok: true, label, detail: `${path} is empty; the first run initialises it` },
      readable: true,
    };
  // SQLite's quick check reads every page (every command's open runs it too), so damage shows here;
  // every run is read, so every row of the ledger parses.
  return readableStore(
    label,
    path,
    () => openStore(path, { readonly: true, integrityCheck: true }),
    async (store) => (await store.listRuns({ limit: Number.POSITIVE_INFINITY })).length,
  );
}

export function registerDoctor(program: Command, io: CliIo, globals: () => GlobalOptions): void {
  program
    .command('doctor')
    .description(
      'Check the settings, the GitHub token and API, each automation’s matches, each repository’s remote, the agent CLIs, git, the state folder and the state file.',
    )
    .option('--json', 'print {"ok": …, "checks": [{"ok", "label", "detail"}]} instead of lines')
    .action(async (options: { json?: boolean }) => {
      const checks = await runDoctor(globals().config, io, { print: !options.json });
      const failed = checks.filter((c) => !c.ok).length;
      setExitCode(failed === 0 ? EXIT.ok : EXIT.failure);
      if (options.json) {
        writeJson(io.stdout, { ok: failed === 0, checks });
        return;
      }
      writeLine(
        io.stdout,
        failed === 0 ? 'All checks passed.' : `${failed} check${failed === 1 ? '' : 's'} failed.`,
      );
    });
}
