/**
 * The settings file's schema: one source for validation, for `curupira schema` (JSON Schema) and
 * for the configuration reference in docs/. Provider and trigger tables live beside their code and
 * are composed here.
 */
import { z } from 'zod';
import { PROFILE_SCHEMAS, PROVIDERS } from '../agents/schemas.js';
import { durationSetting, MIN_LEASE_TTL, RUNNER_ID_PATTERN } from '../coordination/duration.js';
import { publishedJsonSchema } from '../core/json-schema.js';
import { costSettingsShape, PricingTable } from '../cost/schema.js';
import { NotificationsTable } from '../notify/schema.js';
import { telemetrySettingsShape } from '../telemetry/schema.js';
import { Identifier, REPO_PATTERN } from '../triggers/common-schema.js';
import { BUILT_IN_TRIGGERS } from '../triggers/registry.js';
import { describeType, isTable } from './issues.js';
import { ScreeningTable } from './screening.js';

export const DEFAULT_API_URL = 'https://api.github.com';

export const PollingTable = z
  .strictObject({
    poll_interval_seconds: z
      .number()
      .positive('must be greater than 0')
      .refine(Number.isFinite, 'must be a finite number')
      .default(30)
      .describe('Base wait between discovery polls; doubles after each empty poll up to 300 s.'),
    batch_size: z
      .number()
      .int()
      .min(1)
      .max(1000)
      .default(100)
      .describe('Items fetched per automation per poll (pages of at most 100).'),
    max_staleness_seconds: z
      .number()
      .min(0)
      .refine(Number.isFinite, 'must be a finite number')
      .default(600)
      .describe(
        'Issue and pull-request automations ask GitHub first whether anything in the repository changed (a conditional request: an answer of "not modified" costs no rate-limit point) and skip the search when nothing did; a search still runs at least this often (0: only on a change). Pull-request automations filtering on `ci_status`, `mergeable` or `merge_state` search on every poll (curupira extension).',
      ),
    cron_poll_interval_seconds: z
      .number()
      .positive('must be greater than 0')
      .max(60)
      .default(1)
      .describe('How often schedules are checked.'),
  })
  .describe('Discovery polling.');

export const FleetTable = z
  .strictObject({
    host: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/, 'host must be 1-63 letters, digits, `.`, `_` or `-`')
      .optional()
      .describe(
        "This process's name in the fleet (default: the machine's host name); two processes must not share one: processes that share a settings file on one machine (a poller and a worker, two workers) each set `CURUPIRA_FLEET_HOST` in their environment, which wins over this key (curupira extension; only with `state_db_url`).",
      ),
    host_max_active_tasks: z
      .number()
      .int()
      .min(1)
      .max(1000)
      .optional()
      .describe(
        'Agents this host runs at once, at most (default: `max_active_tasks`); `max_active_tasks` stays the limit of the whole fleet (curupira extension; only with `state_db_url`).',
      ),
    heartbeat_interval: z
      .number()
      .positive('must be greater than 0')
      .max(300)
      .default(5)
      .describe(
        'Seconds between two heartbeats of a fleet process (curupira extension; only with `state_db_url`).',
      ),
    heartbeat_timeout: z
      .number()
      .positive('must be greater than 0')
      .max(3600)
      .default(30)
      .describe(
        'Seconds without a heartbeat after which a host counts as gone: it stops taking work and stops its own agents when it cannot reach the database this long; the poller gives its queued jobs to other hosts (curupira extension; only with `state_db_url`).',
      ),
    resume_grace: z
      .number()
      .min(0)
      .max(86_400)
      .default(120)
      .describe(
        "Seconds a gone host's running jobs wait for it after `heartbeat_timeout`: back in time, it resumes them itself; later, they restart on another host from the last pushed checkpoint (curupira extension; only with `state_db_url`).",
      ),
  })
  .describe('A fleet of hosts sharing one PostgreSQL state (curupira extension; docs/deployment.md).');

export const GitHubTable = z
  .strictObject({
    api_url: z
      .string()
      .regex(/^https?:\/\/[^\s/]+(?:\/\S*)?$/, 'api_url must be an http(s) URL')
      .default(DEFAULT_API_URL)
      .describe(
        'GitHub REST API base URL: `https://api.github.com`, `https://HOST/api/v3` for GitHub Enterprise Server, or a local simulator (curupira extension).',
      ),
  })
  .describe('GitHub connection (curupira extension).');

export const SettingsTable = z
  .strictObject({
    max_active_tasks: z.number().int().min(1).max(1000).default(1).describe('Agents running at once.'),
    max_pending_tasks: z
      .number()
      .int()
      .min(1)
      .max(10000)
      .default(100)
      .describe('Discovered tasks waiting to run, at most.'),
    workspace_dir: z
      .string()
      .min(1)
      .default('~/.curupira/workspaces')
      .describe(
        'Where checkouts are cloned (`<workspace_dir>/<alias>`); `~` expands, relative paths resolve against the settings file.',
      ),
    state_db_path: z
      .string()
      .min(1)
      .default('~/.curupira/state.sqlite3')
      .describe('SQLite state file: sessions to resume, run history, schedule marks.'),
    state_db_url: z
      .string()
      .regex(
        /^postgres(?:ql)?:\/\/\S+$/,
        'state_db_url must be a postgres:// or postgresql:// URL (keep the password out of it: PGPASSWORD or ~/.pgpass)',
      )
      .optional()
      .describe(
        'PostgreSQL connection URL: with it, the state lives in PostgreSQL instead of `state_db_path` and several hosts can share it as a fleet (`curupira serve --role`, `curupira worker`; docs/deployment.md). `?schema=NAME` picks the schema (default `curupira`); the password belongs in PGPASSWORD or ~/.pgpass, not here (curupira extension).',
      ),
    task_timeout_minutes: z
      .number()
      .positive('must be greater than 0')
      .default(20)
      .describe('Deadline for one agent run (and for a setup script).'),
    reuse_worktrees: z
      .boolean()
      .default(true)
      .describe(
        'Keep up to `max_active_tasks` clean worktrees of finished runs per checkout (nothing uncommitted, untracked or unpushed; ignored files are deleted) and re-point one for the next task, a new branch from the freshly fetched base, instead of deleting it and writing a new one; `false` deletes them as they finish and empties the pool at start (curupira extension).',
      ),
    max_output_bytes: z
      .number()
      .int()
      .min(1024)
      .max(100_000_000)
      .default(1_000_000)
      .describe('Tail of each output stream kept in memory; the full stream goes to the transcript file.'),
    otlp_endpoint: telemetrySettingsShape.otlp_endpoint,
    history_limit: z
      .number()
      .int()
      .min(1)
      .max(1_000_000)
      .default(1000)
      .describe(
        'Runs kept per automation in the run history; older runs and their transcripts are pruned (curupira extension).',
      ),
    max_resume_failures: z
      .number()
      .int()
      .min(1)
      .max(100)
      .default(3)
      .describe(
        'A saved session whose resume failed this many times in a row is dropped, and the next run of its task starts a fresh session; one the agent CLI says it does not have is dropped at its first failed resume (curupira extension).',
      ),
    max_attempts: z
      .number()
      .int()
      .min(1)
      .max(100)
      .default(3)
      .describe(
        'Tries of a task whose run failed, timed out or stalled, the first run included: each retry waits 10 s, doubling up to 5 minutes, with jitter, and resumes the saved session with the continue prompt. Never for blocked, escalated, parked or cancelled runs. Every try counts against `max_item_failures`, so the smaller of the two stops first. 1: no retries (curupira extension; an automation can override it). See docs/unattended.md.',
      ),
    stall_timeout_minutes: z
      .number()
      .min(0)
      .default(15)
      .describe(
        'An agent that prints nothing (stdout or stderr) for this long is stopped (its process group, as a timeout is), its run is recorded as `stalled` and retried per `max_attempts`; 0 never stops a quiet agent (curupira extension; an automation can override it).',
      ),
    pause_after_failures: z
      .number()
      .int()
      .min(0)
      .max(1000)
      .default(5)
      .describe(
        'An automation whose last this many finished runs all failed (failed, timed out or stalled) is paused, as `curupira pause` does, with the reason on the board and in `curupira status`, until someone resumes it; 0 never pauses (curupira extension; an automation can override it).',
      ),
    max_item_failures: z
      .number()
      .int()
      .min(0)
      .max(1000)
      .default(3)
      .describe(
        'Failed or timed-out runs of one automation on one item (fresh or resumed, counted since its last success) before the item is escalated: recorded as `escalated` and not run again by that automation until `curupira reset RUN_ID` or its title or body changes; 0 never escalates. Counted in the state file, no GitHub write unless `escalated_label` is set (then the label and a comment mentioning `escalate_to` go on the item) (curupira extension; an automation can override it).',
      ),
    escalated_label: z
      .string()
      .min(1)
      .optional()
      .describe(
        'Write to GitHub (opt-in): the label an escalated item gets (e.g. `agent:escalated`), with one comment mentioning `escalate_to`; no further runs by that automation until a person removes it. An automation can override it (curupira extension).',
      ),
    escalate_to: z
      .array(z.string().regex(/^@?[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)?$/, 'a GitHub login or org/team'))
      .optional()
      .describe(
        'Logins or `org/team` teams the escalation comment mentions (with an escalated label); an automation can override it (curupira extension).',
      ),
    human_reviewer: z
      .array(z.string().regex(/^@?[A-Za-z0-9_.-]+(\/[A-Za-z0-9_.-]+)?$/, 'a GitHub login or org/team'))
      .min(1)
      .optional()
      .describe(
        'Write to GitHub (opt-in): the people (logins) or `org/team` teams asked to review every pull request an automation delivers (`deliver = "pr"`), through the write queue; an automation can override it (seed 001’s `human_reviewer`; curupira extension).',
      ),
    run_log: z
      .boolean()
      .default(false)
      .describe(
        'Write to GitHub (opt-in): keep a run log, one `agent:log` issue per `log_window_days` in each automation’s repository with one comment per finished run; an automation can override it (curupira extension).',
      ),
    log_window_days: z
      .number()
      .int()
      .min(1)
      .max(366)
      .default(14)
      .describe('Days one run-log issue covers before the next one opens (curupira extension).'),
    reconcile_interval_minutes: z
      .number()
      .min(0)
      .max(10_080)
      .default(60)
      .describe(
        'How often `run --watch` and `serve` run the repair sweep when GitHub writes are configured: writes that failed for good are queued again, status labels left on items whose run finished are removed; 0 disables it (curupira extension).',
      ),
    lease_ttl: durationSetting(MIN_LEASE_TTL)
      .optional()
      .describe(
        'Write to GitHub (opt-in): the lease TTL of every automation that sets none (`1 hour`, `30m`, `2d`, `PT1H`…). With it, each run of an issue or pull request first claims the item with a lease comment. Unset: no leases (curupira extension; see docs/coordination.md).',
      ),
    runner_id: z
      .string()
      .regex(
        RUNNER_ID_PATTERN,
        'must start with a letter or digit and contain only letters, digits, `.`, `_` and `-` (at most 64)',
      )
      .optional()
      .describe(
        "This curupira's name in the leases it writes (`runner build-1`). Default: the host name. Two processes sharing one must be the same runner restarted: a runner takes back its own unexpired leases (curupira extension).",
      ),
    ...costSettingsShape,
    shutdown: z
      .enum(['stop', 'drain'])
      .default('stop')
      .describe(
        'What SIGTERM (a service manager stopping curupira) does: `stop` ends running agents now, keeping their sessions to resume on the next start; `drain` starts no new run and lets running agents finish (a second SIGTERM stops them). Ctrl+C always drains first (curupira extension).',
      ),
    github_webhook_secret_env: z
      .string()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name (letters, digits, `_`)')
      .optional()
      .describe(
        'Environment variable holding the secret of a GitHub webhook: with it, `curupira serve` accepts signed deliveries on `POST /webhooks/github` and polls the automations they concern at once (docs/webhooks.md); without it that route does not exist (curupira extension).',
      ),
    otlp_headers_env: telemetrySettingsShape.otlp_headers_env,
    sandbox: z
      .enum(['none', 'auto', 'required', 'bubblewrap'])
      .optional()
      .describe(
        'Where agents run (docs/sandbox.md): `bubblewrap` (a sandbox with a private home, only the worktree writable, no network but an allow-list through curupira’s egress proxy, model keys kept outside; a run fails when it cannot start), `required` (the best sandbox that starts here, else the run fails with the reason), `auto` (a sandbox where one starts, else none with a warning on the run) or `none` (the agent reaches what curupira’s user can). Unset: `auto` for automations whose trigger hands the agent text strangers write (issues, pull requests, project items, commits, Linear and Jira issues, and chains, whose prompt can carry the upstream item’s title), `none` for the others (schedules, review watches). A profile (`sandbox_mode`) and an automation (`sandbox`) override it (curupira extension).',
      ),
    sandbox_memory_mb: z
      .number()
      .int()
      .min(64)
      .max(1_048_576)
      .default(8192)
      .describe(
        'Memory ceiling of a sandboxed run in MiB: the whole sandbox where curupira may create a cgroup, else each process’s address space (curupira extension).',
      ),
    sandbox_max_processes: z
      .number()
      .int()
      .min(8)
      .max(1_000_000)
      .default(1024)
      .describe(
        'Processes and threads a sandboxed run may hold at once (a cgroup, else RLIMIT_NPROC where the agent’s user is not root); reported on the run where it cannot apply (curupira extension).',
      ),
    polling: PollingTable.prefault({}),
    github: GitHubTable.prefault({}),
    screening: ScreeningTable.prefault({}),
    fleet: FleetTable.prefault({}),
  })
  .describe('Execution settings.');

const URL_FORMS = /^(?:(?:https?|ssh|git|file):\/\/\S+|[A-Za-z0-9._-]+@[A-Za-z0-9.-]+:\S+)$/;

export function setupScriptProblem(value: string): string | undefined {
  if (value.trim().length === 0) return 'setup_script must not be empty';
  const parts = value.split(/[\\/]+/);
  if (value.startsWith('/') || value.startsWith('\\') || /^[A-Za-z]:/.test(value) || parts.includes('..')) {
    return "setup_script must be a relative path without '..'";
  }
  return undefined;
}

export const RepositoryTable = z
  .strictObject({
    remote: z
      .string()
      .refine((v) => v.length > 0 && !/\s/.test(v), 'remote must be a non-empty Git URL without whitespace')
      .refine(
        (v) => v.length === 0 || /\s/.test(v) || URL_FORMS.test(v),
        'remote must be a full Git URL (https://, ssh://, git://, file://, or user@host:path)',
      )
      .describe('Git URL cloned once: `https://`, `ssh://`, `git://`, `file://` or `user@host:path`.'),
    path: z
      .string()
      .min(1)
      .optional()
      .describe('An existing checkout, or where to clone; default `<workspace_dir>/<alias>`.'),
    repo: z
      .string()
      .regex(REPO_PATTERN, 'repo must use the owner/repository format')
      .optional()
      .describe(
        '`owner/name` of this checkout on GitHub: where the pull request of a multi-repository automation (`repositories`) goes with `deliver = "pr"` (curupira extension).',
      ),
    setup_script: z
      .string()
      .superRefine((v, ctx) => {
        const problem = setupScriptProblem(v);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      })
      .optional()
      .describe(
        'Executable inside the checkout, run once after curupira clones it (relative, no `..`); never on a checkout that was already there. Until it has succeeded once on that clone, it runs again before the next agent.',
      ),
  })
  .describe('A Git checkout agents work in.');

export const AgentDefaultsTable = z
  .strictObject({
    profile: Identifier.default('opencode').describe('Profile used by automations that name none.'),
    timezone: z.string().default('UTC').describe('IANA timezone inherited by cron automations.'),
  })
  .describe('Defaults inherited by automations.');

const profileSchemas = PROVIDERS.map((p) => PROFILE_SCHEMAS[p]);

/** What a profile table whose `provider` is missing or unknown is told. */
function providerProblem(table: unknown): string {
  const provider = isTable(table) ? table.provider : undefined;
  if (provider === undefined) return `is required (one of ${PROVIDERS.join(', ')})`;
  const written = typeof provider === 'string' ? provider : describeType(provider);
  return `unknown coding agent provider: ${written} (registered providers: ${PROVIDERS.join(', ')})`;
}

export const ProfileTable = z
  .discriminatedUnion('provider', profileSchemas as unknown as [z.ZodObject, ...z.ZodObject[]], {
    error: (issue) => (issue.code === 'invalid_union' ? providerProblem(issue.input) : undefined),
  })
  .describe('An agent CLI and its options, chosen by `provider`.');

export const AgentsTable = z
  .strictObject({
    defaults: AgentDefaultsTable.prefault({}),
    profiles: z
      .record(Identifier, ProfileTable)
      .default({
        opencode: { provider: 'opencode', env: {}, pass_env: [], github_token: false, auto_approve: false },
      })
      .describe('Named agent profiles; default one `opencode` profile.'),
  })
  .describe('Agent profiles and defaults.');

export const AssistantTable = z
  .strictObject({
    agent: z.string().optional().describe('Provider of the interactive assistant.'),
    model: z.string().min(1).optional().describe('Model of the interactive assistant.'),
  })
  .describe('Interactive assistant (accepted for compatibility; not used by curupira yet).');

const automationSchemas = Object.values(BUILT_IN_TRIGGERS).map((d) => d.schema);

/** The whole file, for documentation. Validation composes the same parts in `load.ts`. */
export const SettingsFile = z
  .strictObject({
    settings: SettingsTable.prefault({}),
    repositories: z.record(Identifier, RepositoryTable).describe('Checkouts, by alias (at least one).'),
    agents: AgentsTable.prefault({}),
    assistant: AssistantTable.optional(),
    pricing: PricingTable.optional(),
    automations: z
      .record(Identifier, z.union(automationSchemas as unknown as [z.ZodType, ...z.ZodType[]]))
      .describe('Automations, by id, in file order (at least one).'),
    notifications: NotificationsTable.optional(),
  })
  .describe('curupira settings file (TOML).');

/** The JSON Schema of the settings file (draft 2020-12), with descriptions and defaults. */
export function settingsJsonSchema(): Record<string, unknown> {
  return publishedJsonSchema(SettingsFile, 'settings', 'curupira settings');
}
