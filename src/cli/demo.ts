/**
 * `curupira demo`: the whole product, offline. A GitHub simulator seeded with a small repository
 * and a few issues, a local bare git remote, and a built-in scripted agent (the fake agent CLI that
 * speaks Claude Code's stream format) — then the real engine runs on them and we show what happened.
 * The run delivers a draft pull request, which the demo follows to its merge (src/cli/demo-loop.ts:
 * a scripted review, a remediation in the same agent session, green checks, the merge, the issue
 * closed). No GitHub account, no model key, nothing outside one temporary folder.
 */
import {
  accessSync,
  constants,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import type { Command } from 'commander';
import { installFakeAgents } from '../agents/fake/install.js';
import { loadDrivers } from '../agents/registry.js';
import { renderTranscriptFile } from '../agents/transcript.js';
import { loadSettings } from '../config/load.js';
import type { Settings } from '../config/types.js';
import { systemClock } from '../core/clock.js';
import { UsageError } from '../core/errors.js';
import { importOptional, SIMULATOR_PACKAGES } from '../core/optional.js';
import type { RunRecord } from '../core/types.js';
import { logFile, transcriptsDir } from '../engine/paths.js';
import { runEngine } from '../features.js';
import { createGitHubClient } from '../github/client.js';
import { staticTokenSource, type TokenSource } from '../github/token.js';
import { createLogger, type Logger } from '../log.js';
import { openStore, stateLocation } from '../store/index.js';
import type { PullRequestRecord, Store } from '../store/types.js';
import { git } from '../workspace/index.js';
import { followDemoPullRequest } from './demo-loop.js';
import { EXIT, setExitCode } from './exit-codes.js';
import { type CliIo, writeLine } from './io.js';
import { signalHandler } from './run.js';
import { serveEngine } from './serve-engine.js';

/** The demo's repository in the simulator (demo.json). */
const DEMO_REPO = 'acme/widgets';
const IDENTITY = ['-c', 'user.name=curupira demo', '-c', 'user.email=demo@curupira.invalid'];

/** A bare repository with a tiny project in it: the "GitHub remote" the demo clones. */
export async function createDemoRemote(dir: string): Promise<string> {
  const seed = join(dir, 'seed');
  const bare = join(dir, 'remote', 'widgets.git');
  mkdirSync(join(seed, 'src', 'widgets'), { recursive: true });
  writeFileSync(join(seed, 'README.md'), '# widgets\n\nA tiny project for the curupira demo.\n');
  writeFileSync(
    join(seed, 'src', 'widgets', 'list.ts'),
    'export function label(widget: { name?: string }): string {\n  return widget.name.toUpperCase();\n}\n',
  );
  await git(['init', '-q', '-b', 'main', seed], { cwd: dir });
  await git(['add', '-A'], { cwd: seed });
  await git([...IDENTITY, 'commit', '-q', '-m', 'Initial commit'], { cwd: seed });
  mkdirSync(join(dir, 'remote'), { recursive: true });
  await git(['clone', '-q', '--bare', seed, bare], { cwd: dir });
  return bare;
}

function settingsText(dir: string, apiUrl: string, remote: string, agent: string): string {
  return `# Written ${DEMO_MARK}: the same kind of file you write for real repositories.
[settings]
workspace_dir = "workspaces"          # relative paths resolve against this file's folder
state_db_path = "state/state.sqlite3"
max_active_tasks = 2
task_timeout_minutes = 5

[settings.github]
api_url = "${apiUrl}"   # the local GitHub simulator (real use: leave the default)

# Issue text is written by strangers. An issue runs when it is vouched for: its author is trusted
# (OWNER, MEMBER, COLLABORATOR, or listed in trusted_authors), or a trusted person applied the
# label this automation matches on. Vouched text is still scanned (findings are warnings) and its
# hidden text removed. An unvouched issue needs a classifier (classifier_model or
# classifier_command under [settings.screening]); without one it is held. The demo's issue is by a
# stranger and labelled by a maintainer, so it runs with nothing else installed.

[repositories.widgets]
remote = "file://${remote}"

[agents.defaults]
profile = "scripted"

# The demo's scripted agent speaks Claude Code's stream-json format. With Claude Code installed,
# drop \`executable\` and the same profile runs the real thing.
[agents.profiles.scripted]
provider = "claude"
executable = "${agent}"
permission_mode = "acceptEdits"

[automations.fix-agent-ready]
trigger_type = "plugins-py/github-issues"
repository = "widgets"
repo = "acme/widgets"
labels = ["agent-ready"]
# From issue to merged pull request (docs/from-issue-to-merged-pr.md):
deliver = "pr"            # push the agent's branch and open a pull request for it
pr_draft = true           # the default: a draft until a person marks it ready for review
follow_interval = 10      # seconds between two looks at the open pull request (run --watch, serve)
remediation_budget = 2    # the default: remediation runs one pull request gets (reviews, failing checks)
merge = "auto"            # curupira merges once a person with write access approved, checks are green, not a draft
merge_method = "squash"   # the default
prompt = """
Fix issue #\${issue_number}: \${issue_title}

\${issue_body}

[[fake:commit]] (a directive for the demo's scripted agent: commit a change)
"""
`.replace(/^# Written/, `# Written in ${dir}`);
}

/** What a demo puts in its folder; a later demo there replaces exactly these. */
const DEMO_ENTRIES = ['seed', 'remote', 'bin', 'workspaces', 'state', 'settings.toml'] as const;
/**
 * How the reader types the command: its own name when it is on PATH (installed globally or
 * linked), else `npx curupira` (run from a clone or a project that has it as a dependency).
 */
export function commandFor(io: Pick<CliIo, 'env' | 'programName'>): string {
  for (const folder of (io.env.PATH ?? '').split(delimiter)) {
    if (folder === '') continue;
    try {
      accessSync(join(folder, io.programName), constants.X_OK);
      return io.programName;
    } catch {
      // Not in this folder.
    }
  }
  return 'npx curupira';
}

const DEMO_MARK = 'by `curupira demo`';

/**
 * Makes `dir` ready for a demo: a new or empty folder as it is; a folder holding an earlier demo
 * loses that demo's files (and only those); any other folder is refused, so nothing of the user's
 * is ever removed.
 */
export function prepareDemoFolder(dir: string): 'new' | 'replaced' {
  mkdirSync(dir, { recursive: true });
  const entries = readdirSync(dir);
  if (entries.length === 0) return 'new';
  const settings = join(dir, 'settings.toml');
  const earlierDemo =
    existsSync(settings) &&
    readFileSync(settings, 'utf8').includes(DEMO_MARK) &&
    entries.every((entry) => (DEMO_ENTRIES as readonly string[]).includes(entry));
  if (!earlierDemo) {
    throw new UsageError(
      `${dir} is not empty and does not hold an earlier demo; pass --dir with a new or empty folder`,
    );
  }
  for (const entry of DEMO_ENTRIES) rmSync(join(dir, entry), { recursive: true, force: true });
  return 'replaced';
}

function describeRun(run: RunRecord, delivery?: PullRequestRecord): string[] {
  const lines = [
    `  run ${run.id}: ${run.status}${run.reason ? ` (${run.reason})` : ''}`,
    `    issue:      ${run.repo}#${run.itemId} ${JSON.stringify(run.itemTitle)}`,
    `    agent:      ${run.provider} session ${run.sessionId ?? '-'}`,
  ];
  if (run.screeningReason) lines.push(`    screening:  ${run.screeningReason}`);
  if (run.usage)
    lines.push(`    usage:      ${run.usage.inputTokens} input / ${run.usage.outputTokens} output tokens`);
  if (run.worktreeKept) {
    lines.push(
      `    worktree:   kept at ${run.worktreePath}`,
      `    branch:     ${run.branch} (${run.commits} commit${run.commits === 1 ? '' : 's'} not on any remote, so curupira kept them)`,
    );
  } else if (run.branch) {
    lines.push(`    worktree:   ${run.worktreePath} (removed: nothing unpushed)`);
  }
  if (delivery) {
    lines.push(
      `    pushed:     ${delivery.headBranch} at ${delivery.headSha?.slice(0, 12) ?? '-'} (deliver = "${delivery.delivery}")`,
    );
    if (delivery.number !== null)
      lines.push(`    pull req.:  #${delivery.number} ${delivery.url ?? ''} ${delivery.state}`);
  }
  if (run.transcriptPath) lines.push(`    transcript: ${run.transcriptPath}`);
  return lines;
}

async function pauseDemoAutomations(settings: Settings): Promise<void> {
  const store = await openStore(stateLocation(settings.execution));
  try {
    for (const automation of settings.automations) await store.setPaused(automation.id, true);
  } finally {
    await store.close();
  }
}

/** `demo --serve`: the demo's settings and simulator behind the board until Ctrl+C. */
async function serveDemo(
  io: CliIo,
  demo: {
    settings: Settings;
    env: NodeJS.ProcessEnv;
    tokens: TokenSource;
    log: Logger;
    apiUrl: string;
    port: string;
  },
): Promise<void> {
  const port = /^\d+$/.test(demo.port) ? Number(demo.port) : Number.NaN;
  if (!Number.isInteger(port) || port > 65535)
    throw new UsageError(`--port must be a port number, got '${demo.port}'`);
  const store = await openStore(stateLocation(demo.settings.execution));
  const stop = new AbortController();
  const drain = new AbortController();
  const signals = signalHandler(demo.settings, demo.log, stop, drain);
  process.on('SIGINT', signals.handle);
  process.on('SIGTERM', signals.handle);
  try {
    await serveEngine(io, {
      engine: {
        settings: demo.settings,
        mode: 'watch',
        store,
        clock: systemClock,
        log: demo.log,
        env: demo.env,
        tokens: demo.tokens,
        github: () => createGitHubClient({ apiUrl: demo.apiUrl, tokens: demo.tokens, log: demo.log }),
        transcriptsDir: transcriptsDir(demo.settings),
        stopSignal: stop.signal,
        drainSignal: drain.signal,
      },
      host: '127.0.0.1',
      port,
      banner: false,
    });
  } finally {
    process.off('SIGINT', signals.handle);
    process.off('SIGTERM', signals.handle);
    await store.close();
  }
}

export function registerDemo(program: Command, io: CliIo): void {
  program
    .command('demo')
    .description(
      'Run the real engine end to end, offline: a local GitHub simulator, a local git remote and a scripted agent.',
    )
    .option(
      '--dir <folder>',
      'where to put the demo (default: a new temporary folder, kept for you to look at)',
    )
    .option('--serve', 'then keep going as `curupira serve`: the board with the demo runs, until Ctrl+C')
    .option('--port <n>', 'with --serve: the board port (0 picks a free one)', '0')
    .action(async (options: { dir?: string; serve?: boolean; port: string }) => {
      // Before any folder is made: an install without the simulator's packages says so and stops.
      const { githubSchemaPath, startSimulator } = await importOptional(
        () => import('../simulator/index.js'),
        'curupira demo (its GitHub simulator)',
        SIMULATOR_PACKAGES,
      );
      githubSchemaPath(); // says now, not at the first request, when the schema's package is missing
      const dir = options.dir ? resolve(io.cwd, options.dir) : mkdtempSync(join(tmpdir(), 'curupira-demo-'));
      const fresh = prepareDemoFolder(dir);
      writeLine(
        io.stdout,
        `curupira demo in ${dir}${fresh === 'replaced' ? ' (the earlier demo there was replaced)' : ''}`,
      );
      writeLine(
        io.stdout,
        '1. Starting a local GitHub simulator with acme/widgets and four issues (one labelled agent-ready)…',
      );
      const { DEMO_TOKEN, demoWorld } = await import('../simulator/demo.js');
      const { realTimeClock } = await import('../simulator/world.js');
      // Today's dates in what the demo prints, as GitHub's would be.
      const world = demoWorld({ now: realTimeClock() });
      const sim = await startSimulator({ world });
      try {
        writeLine(io.stdout, `   ${sim.url}`);
        writeLine(io.stdout, '2. Creating a local git remote with a tiny project…');
        const remote = await createDemoRemote(dir);
        // The simulator reads the pull request's head, base and commits from this bare repository.
        world.addRepo(DEMO_REPO, { gitDir: remote });
        const bins = installFakeAgents(join(dir, 'bin'));
        const settingsFile = join(dir, 'settings.toml');
        writeFileSync(settingsFile, settingsText(dir, sim.url, remote, bins.claude));
        writeLine(io.stdout, `3. Wrote ${settingsFile}; validating it…`);
        const { settings } = loadSettings(settingsFile);
        writeLine(
          io.stdout,
          `   Configuration is valid (${settings.automations.length} automation; max active tasks: ${settings.execution.max_active_tasks}).`,
        );
        writeLine(io.stdout, '4. Running the engine (the same code as `curupira run`)…');
        writeLine(
          io.stdout,
          '   Screening: the agent-ready issue was labelled by a maintainer, so it is vouched for and runs without a classifier.',
        );
        const store = await openStore(stateLocation(settings.execution));
        const log = createLogger({ console: io.stderr, file: logFile(settings) });
        const tokens = staticTokenSource(DEMO_TOKEN);
        const env = { ...io.env };
        delete env.GH_TOKEN;
        delete env.GITHUB_TOKEN;
        const engine = (engineStore: Store) => ({
          settings,
          store: engineStore,
          clock: systemClock,
          log,
          env,
          tokens,
          github: () => createGitHubClient({ apiUrl: sim.url, tokens, log }),
          transcriptsDir: transcriptsDir(settings),
        });
        let runs: RunRecord[];
        const deliveries = new Map<string, PullRequestRecord>();
        try {
          const result = await runEngine({
            ...engine(store),
            mode: 'drain',
            stopSignal: new AbortController().signal,
          });
          runs = result.runs;
          for (const run of runs) {
            const record = await store.getPullRequest(run.id);
            if (record) deliveries.set(run.id, record);
          }
        } finally {
          await store.close();
        }
        writeLine(io.stdout, '5. What happened:');
        if (runs.length === 0) writeLine(io.stdout, '  No matching task was found.');
        for (const run of runs) {
          for (const line of describeRun(run, deliveries.get(run.id))) writeLine(io.stdout, line);
          if (run.transcriptPath && run.provider) {
            writeLine(io.stdout, '    the agent said:');
            await loadDrivers([run.provider]);
            for (const line of renderTranscriptFile(run.provider, run.transcriptPath, { maxToolText: 120 })) {
              writeLine(io.stdout, `      ${line}`);
            }
          }
          if (run.worktreeKept && run.worktreePath) {
            const logLine = await git(['log', '--oneline', '-1'], { cwd: run.worktreePath }).catch(() => '');
            if (logLine.trim()) writeLine(io.stdout, `    last commit: ${logLine.trim()}`);
          }
        }
        const delivered = runs.find((run) => run.status === 'succeeded' && deliveries.get(run.id)?.number);
        const cmd = commandFor(io);
        const loop = delivered
          ? await followDemoPullRequest(
              { io, settings, world, repo: DEMO_REPO, remote, engine },
              delivered,
              6,
            )
          : { ok: false };
        writeLine(io.stdout, '');
        if (delivered && loop.ok) {
          const number = deliveries.get(delivered.id)?.number;
          writeLine(
            io.stdout,
            `From issue to merged pull request: issue #${delivered.itemId} → run ${delivered.id} → draft pull request #${number} → review → remediation run ${loop.remediation?.id ?? '-'} (same session) → checks green → merged → issue closed.`,
          );
          const where = [
            `  export CURUPIRA_CONFIG=${settingsFile}`,
            `  ${cmd} runs                  # both runs: the delivery (now merged) and its remediation`,
            `  ${cmd} runs show ${delivered.id}   # the delivery: its branch, pull request #${number}, transcript`,
            `  ${cmd} runs show ${loop.remediation?.id ?? '-'}   # the remediation: the review fenced in its prompt, the resumed session`,
            `  ${cmd} demo --serve          # the demo again, ending on the board (\`${cmd} serve\`)`,
            '  docs/from-issue-to-merged-pr.md: each step, its settings, what curupira reads and writes',
          ];
          writeLine(io.stdout, 'Where to look (the state file in the folder above keeps it all):');
          for (const line of where) writeLine(io.stdout, line);
          writeLine(io.stdout, '');
        }
        writeLine(
          io.stdout,
          'Next: look around the folder above, then point curupira at your own repository:',
        );
        writeLine(io.stdout, `  ${cmd} init --repo OWNER/NAME   # a commented starter settings file, then`);
        writeLine(io.stdout, `  ${cmd} validate --explain   # what each automation will do`);
        writeLine(io.stdout, `  ${cmd} doctor               # token, API, matches, agent CLIs`);
        writeLine(io.stdout, `  ${cmd} run --dry-run        # the first task that would run`);
        writeLine(io.stdout, `  ${cmd} serve                # the board, the JSON API and CLI control`);
        const ok = runs.length > 0 && runs.every((r) => r.status === 'succeeded') && loop.ok;
        setExitCode(ok ? EXIT.ok : EXIT.failure);
        if (options.serve) {
          writeLine(io.stdout, '');
          writeLine(io.stdout, '7. Serving the board with these runs (`curupira serve`; Ctrl+C stops)…');
          // Paused, so the watch does not run the same issue again; "Run now" on the board does.
          await pauseDemoAutomations(settings);
          writeLine(
            io.stdout,
            '   The automation is paused so the issue is not run twice: try "Run now" or "Resume" on the board.',
          );
          await serveDemo(io, { settings, env, tokens, log, apiUrl: sim.url, port: options.port });
        } else {
          writeLine(io.stdout, '');
          writeLine(
            io.stdout,
            `See these runs on the board: \`npm run demo -- --serve\` (or \`${cmd} demo --serve\`).`,
          );
        }
      } finally {
        await sim.close();
      }
    });
}
