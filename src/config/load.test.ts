import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError } from '../core/errors.js';
import { loadSettings, loadSettingsFromText } from './load.js';

const dir = mkdtempSync(join(tmpdir(), 'curupira-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const FILE = join(dir, 'settings.toml');

const BASE_REPO = `[repositories.api]
remote = "https://github.com/acme/api.git"
`;
const BASE_AUTOMATION = `[automations.fix]
repository = "api"
repo = "acme/api"
prompt = "Fix \${issue_number}"
`;

function errorOf(text: string): ConfigError {
  try {
    loadSettingsFromText(text, FILE);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw new Error(`expected a ConfigError, got ${String(error)}`);
  }
  throw new Error('expected the settings to be rejected');
}

describe('valid settings files', () => {
  const fixtures = join(import.meta.dirname, '../../test/fixtures/settings');
  for (const name of readdirSync(fixtures).filter((f) => f.endsWith('.toml'))) {
    it(`accepts ${name}`, () => {
      const { settings } = loadSettings(join(fixtures, name));
      expect(settings.automations.length).toBeGreaterThan(0);
    });
  }

  it('accepts examples/settings.toml', () => {
    const { settings } = loadSettings(join(import.meta.dirname, '../../examples/settings.toml'));
    expect(settings.automations.map((a) => a.id)).toEqual([
      'resolve-ready-issues',
      'review-pull-requests',
      'merge-dependabot',
      'board-ready',
      'morning-dependency-check',
      'review-resolved-issue',
    ]);
    expect(settings.automations.at(-1)?.triggerType).toBe('after');
    expect(settings.execution.max_active_tasks).toBe(2);
  });

  it('applies the seed defaults', () => {
    const { settings } = loadSettings(
      join(import.meta.dirname, '../../test/fixtures/settings/seed-defaults.toml'),
    );
    const [triage, nightly] = settings.automations;
    expect(triage!.triggerType).toBe('github-issues');
    expect(triage!.profileName).toBe('opencode');
    expect(triage!.profile.provider).toBe('opencode');
    expect(triage!.config).toMatchObject({
      state: 'open',
      sort: 'created-asc',
      labels: ['needs-triage'],
      checkout: 'worktree',
    });
    expect(nightly!.triggerType).toBe('cron');
    expect(nightly!.timezone).toBe('UTC');
    expect(settings.execution).toMatchObject({
      max_active_tasks: 1,
      max_pending_tasks: 100,
      task_timeout_minutes: 20,
      max_output_bytes: 1_000_000,
      history_limit: 1000,
      polling: { poll_interval_seconds: 30, batch_size: 100, cron_poll_interval_seconds: 1 },
      github: { api_url: 'https://api.github.com' },
    });
    expect(settings.execution.workspace_dir).toBe(join(homedir(), '.curupira/workspaces'));
    expect(settings.repositories.api!.checkoutPath).toBe(join(homedir(), '.curupira/workspaces/api'));
  });

  it('resolves relative paths against the settings file and expands ~', () => {
    const { settings } = loadSettingsFromText(
      `[settings]\nworkspace_dir = "ws"\nstate_db_path = "~/state/x.db"\n${BASE_REPO}path = "../elsewhere/api"\n${BASE_AUTOMATION}`,
      FILE,
    );
    expect(settings.execution.workspace_dir).toBe(join(dir, 'ws'));
    expect(settings.execution.state_db_path).toBe(join(homedir(), 'state/x.db'));
    expect(settings.repositories.api!.checkoutPath).toBe(join(dir, '../elsewhere/api'));
  });

  it('accepts a chain and exposes the upstream fields to its prompt', () => {
    const text = `${BASE_REPO}${BASE_AUTOMATION}[automations.review]
trigger_type = "after"
after = "fix"
on = "any"
repository = "api"
prompt = "Review \${upstream_item} (\${upstream_status}) on \${upstream_branch}: \${upstream_summary} \${upstream_transcript}"
`;
    const review = loadSettingsFromText(text, FILE).settings.automations[1]!;
    expect(review.triggerType).toBe('after');
    expect(review.config).toMatchObject({ after: 'fix', on: 'any' });
  });

  it('accepts plain http:// for the api_url only on this machine', () => {
    for (const url of ['http://127.0.0.1:4010', 'http://localhost:8080/api/v3', 'http://[::1]:9000']) {
      const { settings } = loadSettingsFromText(
        `[settings.github]\napi_url = "${url}"\n${BASE_REPO}${BASE_AUTOMATION}`,
        FILE,
      );
      expect(settings.execution.github.api_url).toBe(url);
    }
  });

  it('makes a table with `after` and no trigger_type a chain', () => {
    const { settings } = loadSettingsFromText(
      `${BASE_REPO}${BASE_AUTOMATION}[automations.review]\nafter = "fix"\nrepository = "api"\nprompt = "Review \${upstream_item}"\n`,
      FILE,
    );
    const review = settings.automations.find((a) => a.id === 'review');
    expect(review?.triggerType).toBe('after');
    const loop = errorOf(
      `${BASE_REPO}${BASE_AUTOMATION}[automations.review]\nafter = "review"\nrepository = "api"\nprompt = "x"\n`,
    );
    expect(loop.issues.map((i) => `${i.path}: ${i.message}`)).toEqual([
      "automations.review.after: automation 'review' cannot run after itself",
    ]);
  });

  it('keeps automations in file order, even all-digit ids', () => {
    const text = `${BASE_REPO}
[automations.zeta]
repository = "api"
repo = "acme/api"
prompt = "z"
[automations.42]
repository = "api"
repo = "acme/api"
prompt = "n"
[automations.alpha]
repository = "api"
repo = "acme/api"
prompt = "a"
`;
    expect(loadSettingsFromText(text, FILE).settings.automations.map((a) => a.id)).toEqual([
      'zeta',
      '42',
      'alpha',
    ]);
  });

  it('ignores environment variables that look like settings', () => {
    process.env.CURUPIRA_MAX_ACTIVE_TASKS = '9';
    process.env.MAX_ACTIVE_TASKS = '9';
    try {
      expect(
        loadSettingsFromText(`${BASE_REPO}${BASE_AUTOMATION}`, FILE).settings.execution.max_active_tasks,
      ).toBe(1);
    } finally {
      delete process.env.CURUPIRA_MAX_ACTIVE_TASKS;
      delete process.env.MAX_ACTIVE_TASKS;
    }
  });

  it('reads `enabled` on every trigger type (default true) and keeps memory filters apart from it', () => {
    const { settings } = loadSettingsFromText(
      `${BASE_REPO}${BASE_AUTOMATION}enabled = false\n[automations.nightly]\nrepository = "api"\nschedule = "0 3 * * *"\nprompt = "Go"\n`,
      FILE,
    );
    expect(settings.automations.map((a) => [a.id, a.config.enabled])).toEqual([
      ['fix', false],
      ['nightly', true],
    ]);
  });

  it('resolves a multi-repository automation: the primary, then the others in the order written', () => {
    const { settings } = loadSettingsFromText(
      `[repositories.web]\nremote = "https://github.com/acme/web.git"\nrepo = "acme/web"\n[repositories.docs]\nremote = "https://github.com/acme/docs.git"\nrepo = "acme/docs"\n${ISSUES('repositories = ["docs", "api", "web"]\ndeliver = "pr"')}`,
      FILE,
    );
    const [fix] = settings.automations;
    expect(fix!.repository.alias).toBe('api');
    expect(fix!.additionalRepositories?.map((r) => [r.alias, r.repo])).toEqual([
      ['docs', 'acme/docs'],
      ['web', 'acme/web'],
    ]);
    const single = loadSettingsFromText(ISSUES(''), FILE).settings.automations[0]!;
    expect(single.additionalRepositories).toBeUndefined();
  });

  it('creates nothing while loading', () => {
    const state = join(dir, 'never', 'state.sqlite3');
    loadSettingsFromText(
      `[settings]\nstate_db_path = "${state}"\nworkspace_dir = "${join(dir, 'never-ws')}"\n${BASE_REPO}${BASE_AUTOMATION}`,
      FILE,
    );
    expect(existsSync(join(dir, 'never'))).toBe(false);
    expect(existsSync(join(dir, 'never-ws'))).toBe(false);
  });
});

interface InvalidCase {
  name: string;
  toml: string;
  path: string;
  message: string | RegExp;
  line?: number;
  /** A missing top-level table has no line to point at: the message names the file only. */
  fileLevel?: boolean;
}

const ISSUES = (extra: string) =>
  `${BASE_REPO}[automations.fix]\nrepository = "api"\nrepo = "acme/api"\nprompt = "Fix"\n${extra}\n`;
const PRS = (extra: string) =>
  `${BASE_REPO}[automations.fix]\ntrigger_type = "github-pull-requests"\nrepository = "api"\nrepo = "acme/api"\nprompt = "Fix"\n${extra}\n`;
const PROFILE = (body: string) =>
  `${BASE_REPO}[agents.defaults]\nprofile = "p"\n[agents.profiles.p]\n${body}\n${BASE_AUTOMATION}`;
const CRON = (extra: string) =>
  `${BASE_REPO}[automations.nightly]\nrepository = "api"\nprompt = "Go"\n${extra}\n`;
const SETTINGS = (body: string) => `[settings]\n${body}\n${BASE_REPO}${BASE_AUTOMATION}`;

const CHAIN = (id: string, after: string) =>
  `[automations.${id}]\ntrigger_type = "after"\nafter = "${after}"\nrepository = "api"\nprompt = "Review \${upstream_item}"\n`;

const INVALID: InvalidCase[] = [
  {
    name: 'enabled that is not a boolean',
    toml: ISSUES('enabled = "no"'),
    path: 'automations.fix.enabled',
    message: /boolean/,
  },
  {
    name: 'chained automations that loop',
    toml: `${BASE_REPO}${BASE_AUTOMATION}${CHAIN('review', 'fixup')}${CHAIN('fixup', 'review')}`,
    path: 'automations.review.after',
    message: 'chained automations loop: review → fixup → review',
  },
  {
    name: 'chain after a missing automation',
    toml: `${BASE_REPO}${BASE_AUTOMATION}${CHAIN('review', 'ghost')}`,
    path: 'automations.review.after',
    message: "automation 'ghost' (named by 'after') does not exist",
  },
  {
    name: 'chain after itself',
    toml: `${BASE_REPO}${BASE_AUTOMATION}${CHAIN('review', 'review')}`,
    path: 'automations.review.after',
    message: "automation 'review' cannot run after itself",
  },
  {
    name: 'chain outcome',
    toml: `${BASE_REPO}${BASE_AUTOMATION}${CHAIN('review', 'fix')}on = "done"\n`,
    path: 'automations.review.on',
    message:
      'on = "done" fires on an outcome \'fix\' reports, but \'fix\' declares no outcomes: add outcomes = [...] to it, or use on = "success", "failure" or "any"',
  },

  {
    name: 'TOML syntax error',
    toml: `${BASE_REPO}[automations.fix\nrepo = 1`,
    path: '',
    message: /^invalid TOML/,
    line: 3,
  },
  {
    name: 'duplicate key',
    toml: `${BASE_REPO}remote = "x"\n${BASE_AUTOMATION}`,
    path: '',
    message: /^invalid TOML/,
    line: 3,
  },
  {
    name: 'unknown top-level table',
    toml: `[setings]\n${BASE_REPO}${BASE_AUTOMATION}`,
    path: 'setings',
    message: "unknown key (did you mean 'settings'?)",
    line: 1,
  },
  {
    name: 'unknown settings key',
    toml: SETTINGS('max_active_task = 2'),
    path: 'settings.max_active_task',
    message: "unknown key (did you mean 'max_active_tasks'?)",
    line: 2,
  },
  {
    name: 'a sub-table key written in [settings]',
    toml: SETTINGS('poll_interval_seconds = 10'),
    path: 'settings.poll_interval_seconds',
    message: 'unknown key (it belongs in [settings.polling])',
    line: 2,
  },
  {
    name: 'max_active_tasks below 1',
    toml: SETTINGS('max_active_tasks = 0'),
    path: 'settings.max_active_tasks',
    message: 'must be at least 1, got 0',
    line: 2,
  },
  {
    name: 'max_active_tasks above 1000',
    toml: SETTINGS('max_active_tasks = 1001'),
    path: 'settings.max_active_tasks',
    message: 'must be at most 1000, got 1001',
  },
  {
    name: 'max_active_tasks as a string',
    toml: SETTINGS('max_active_tasks = "2"'),
    path: 'settings.max_active_tasks',
    message: 'expected a number, got a string ("2")',
  },
  {
    name: 'max_active_tasks fractional',
    toml: SETTINGS('max_active_tasks = 1.5'),
    path: 'settings.max_active_tasks',
    message: /integer/,
  },
  {
    name: 'max_pending_tasks above 10000',
    toml: SETTINGS('max_pending_tasks = 10001'),
    path: 'settings.max_pending_tasks',
    message: 'must be at most 10000, got 10001',
  },
  {
    name: 'task_timeout_minutes zero',
    toml: SETTINGS('task_timeout_minutes = 0'),
    path: 'settings.task_timeout_minutes',
    message: 'must be greater than 0, got 0',
  },
  {
    name: 'max_output_bytes too small',
    toml: SETTINGS('max_output_bytes = 10'),
    path: 'settings.max_output_bytes',
    message: 'must be at least 1024, got 10',
  },
  {
    name: 'otlp_endpoint grpc',
    toml: SETTINGS('otlp_endpoint = "grpc://collector:4317"'),
    path: 'settings.otlp_endpoint',
    message: /grpc:\/\/ is not supported/,
  },
  {
    name: 'history_limit zero',
    toml: SETTINGS('history_limit = 0'),
    path: 'settings.history_limit',
    message: 'must be at least 1, got 0',
  },
  {
    name: 'batch_size above 1000',
    toml: SETTINGS('[settings.polling]\nbatch_size = 1001'),
    path: 'settings.polling.batch_size',
    message: 'must be at most 1000, got 1001',
    line: 3,
  },
  {
    name: 'negative poll interval',
    toml: SETTINGS('[settings.polling]\npoll_interval_seconds = -1'),
    path: 'settings.polling.poll_interval_seconds',
    message: 'must be greater than 0, got -1',
  },
  {
    name: 'cron poll interval above 60',
    toml: SETTINGS('[settings.polling]\ncron_poll_interval_seconds = 61'),
    path: 'settings.polling.cron_poll_interval_seconds',
    message: 'must be at most 60, got 61',
  },
  {
    name: 'api_url not http',
    toml: SETTINGS('[settings.github]\napi_url = "ftp://example.com"'),
    path: 'settings.github.api_url',
    message: 'api_url must be an http(s) URL',
  },
  {
    name: 'no repositories',
    toml: BASE_AUTOMATION,
    path: 'repositories',
    message: 'at least one [repositories.<alias>] table is required',
    fileLevel: true,
  },
  {
    name: 'remote with whitespace',
    toml: `[repositories.api]\nremote = "https://github.com/acme/my api.git"\n${BASE_AUTOMATION}`,
    path: 'repositories.api.remote',
    message: 'remote must be a non-empty Git URL without whitespace',
    line: 2,
  },
  {
    name: 'remote not a full URL',
    toml: `[repositories.api]\nremote = "github.com/acme/api"\n${BASE_AUTOMATION}`,
    path: 'repositories.api.remote',
    message: 'remote must be a full Git URL (https://, ssh://, git://, file://, or user@host:path)',
  },
  {
    name: 'remote missing',
    toml: `[repositories.api]\npath = "x"\n${BASE_AUTOMATION}`,
    path: 'repositories.api.remote',
    message: 'is required',
    line: 1,
  },
  {
    name: 'setup_script empty',
    toml: `${BASE_REPO}setup_script = " "\n${BASE_AUTOMATION}`,
    path: 'repositories.api.setup_script',
    message: 'setup_script must not be empty',
  },
  {
    name: 'setup_script with ..',
    toml: `${BASE_REPO}setup_script = "../evil.sh"\n${BASE_AUTOMATION}`,
    path: 'repositories.api.setup_script',
    message: "setup_script must be a relative path without '..'",
  },
  {
    name: 'setup_script absolute',
    toml: `${BASE_REPO}setup_script = "/usr/bin/evil"\n${BASE_AUTOMATION}`,
    path: 'repositories.api.setup_script',
    message: "setup_script must be a relative path without '..'",
  },
  {
    name: 'repository alias with a space',
    toml: `[repositories."my api"]\nremote = "https://x.org/a.git"\n${BASE_AUTOMATION}`,
    path: 'repositories."my api"',
    message: /alias must contain only/,
  },
  {
    name: 'unknown repository key',
    toml: `${BASE_REPO}branch = "main"\n${BASE_AUTOMATION}`,
    path: 'repositories.api.branch',
    message: 'unknown key',
  },
  {
    name: 'two aliases, one workspace path',
    toml: `${BASE_REPO}path = "/tmp/shared"\n[repositories.web]\nremote = "https://github.com/acme/web.git"\npath = "/tmp/shared"\n${BASE_AUTOMATION}`,
    path: 'repositories.web.path',
    message: /different repositories cannot share a workspace path/,
  },
  {
    name: 'default profile missing',
    toml: `${BASE_REPO}[agents.defaults]\nprofile = "ghost"\n${BASE_AUTOMATION}`,
    path: 'agents.defaults.profile',
    message: 'default profile does not exist: ghost',
  },
  {
    name: 'unknown default timezone',
    toml: `${BASE_REPO}[agents.defaults]\ntimezone = "Mars/Olympus"\n${BASE_AUTOMATION}`,
    path: 'agents.defaults.timezone',
    message: 'unknown timezone: Mars/Olympus',
  },
  {
    name: 'unknown agents key',
    toml: `${BASE_REPO}[agents]\ndefault = 1\n${BASE_AUTOMATION}`,
    path: 'agents.default',
    message: "unknown key (did you mean 'defaults'?)",
  },
  {
    name: 'profile without provider',
    toml: PROFILE('model = "x"'),
    path: 'agents.profiles.p.provider',
    message: /is required \(one of opencode/,
  },
  {
    name: 'unknown provider',
    toml: PROFILE('provider = "gpt-cli"'),
    path: 'agents.profiles.p.provider',
    message: /unknown coding agent provider: gpt-cli/,
  },
  {
    name: 'OpenCode model without provider',
    toml: PROFILE('provider = "opencode"\nmodel = "sonnet"'),
    path: 'agents.profiles.p.model',
    message: 'OpenCode model must use the provider/model format',
  },
  {
    name: 'codex auto_review with read-only sandbox',
    toml: PROFILE('provider = "codex"\nsandbox = "read-only"\nauto_review = true'),
    path: 'agents.profiles.p.auto_review',
    message: 'Codex auto_review requires the workspace-write sandbox',
  },
  {
    name: 'claude effort out of range',
    toml: PROFILE('provider = "claude"\neffort = "extreme"'),
    path: 'agents.profiles.p.effort',
    message: /must be one of "low", "medium"/,
  },
  {
    name: 'cursor rejects effort',
    toml: PROFILE('provider = "cursor"\neffort = "high"'),
    path: 'agents.profiles.p.effort',
    message: 'unknown key',
  },
  {
    name: 'gemini rejects agent',
    toml: PROFILE('provider = "gemini"\nagent = "x"'),
    path: 'agents.profiles.p.agent',
    message: 'unknown key',
  },
  {
    name: 'gemini approval mode',
    toml: PROFILE('provider = "gemini"\napproval_mode = "always"'),
    path: 'agents.profiles.p.approval_mode',
    message: /must be one of "default", "auto_edit", "yolo", "plan"/,
  },
  {
    name: 'copilot tool with comma',
    toml: PROFILE('provider = "copilot"\nallow_tools = ["shell,write"]'),
    path: 'agents.profiles.p.allow_tools[0]',
    message: 'tool entries may not contain commas',
  },
  {
    name: 'pi model_provider without model',
    toml: PROFILE('provider = "pi"\nmodel_provider = "anthropic"'),
    path: 'agents.profiles.p.model_provider',
    message: 'model_provider requires model',
  },
  {
    name: 'qwen max_session_turns zero',
    toml: PROFILE('provider = "qwen"\nmax_session_turns = 0'),
    path: 'agents.profiles.p.max_session_turns',
    message: 'must be at least 1, got 0',
  },
  {
    name: 'qwen max_session_turns boolean',
    toml: PROFILE('provider = "qwen"\nmax_session_turns = true'),
    path: 'agents.profiles.p.max_session_turns',
    message: 'expected a number, got a boolean',
  },
  {
    name: 'pass_env bad name',
    toml: PROFILE('provider = "claude"\npass_env = ["1BAD"]'),
    path: 'agents.profiles.p.pass_env[0]',
    message: /must be an environment variable name/,
  },
  {
    name: 'no automations',
    toml: BASE_REPO,
    path: 'automations',
    message: 'at least one [automations.<id>] table is required',
    fileLevel: true,
  },
  {
    name: 'automation id with a space',
    toml: `${BASE_REPO}[automations."fix bugs"]\nrepository = "api"\nrepo = "acme/api"\nprompt = "x"\n`,
    path: 'automations."fix bugs"',
    message: /automation id must contain only/,
  },
  {
    name: 'unknown trigger type',
    toml: ISSUES('trigger_type = "jira-issues"'),
    path: 'automations.fix.trigger_type',
    message: /^unknown trigger type: jira-issues/,
  },
  {
    name: 'trigger_type not a string',
    toml: ISSUES('trigger_type = 5'),
    path: 'automations.fix.trigger_type',
    message: 'trigger_type must be a string',
  },
  {
    name: 'repository alias does not exist',
    toml: `${BASE_REPO}[automations.fix]\nrepository = "web"\nrepo = "acme/api"\nprompt = "x"\n`,
    path: 'automations.fix.repository',
    message: "repository 'web' for automation 'fix' does not exist",
  },
  {
    name: 'repositories names an alias that does not exist',
    toml: ISSUES('repositories = ["api", "ghost"]'),
    path: 'automations.fix.repositories[1]',
    message: "repository 'ghost' in repositories of automation 'fix' does not exist",
  },
  {
    name: 'repositories names an alias twice',
    toml: `[repositories.web]\nremote = "https://github.com/acme/web.git"\n${ISSUES('repositories = ["api", "web", "web"]')}`,
    path: 'automations.fix.repositories[2]',
    message: "repository 'web' is named twice in repositories",
  },
  {
    name: 'repositories with deliver = "pr" and a repository without repo',
    toml: `[repositories.web]\nremote = "https://github.com/acme/web.git"\n${ISSUES('repositories = ["api", "web"]\ndeliver = "pr"')}`,
    path: 'automations.fix.repositories',
    message:
      'deliver = "pr" opens a pull request in each repository: [repositories.web] needs repo = "owner/name"',
  },
  {
    name: 'repositories with checkout = "main"',
    toml: `[repositories.web]\nremote = "https://github.com/acme/web.git"\n${ISSUES('repositories = ["web"]\ncheckout = "main"')}`,
    path: 'automations.fix.repositories',
    message: /checkout = "main" works in the shared checkout/,
  },
  {
    name: 'profile does not exist',
    toml: ISSUES('profile = "ghost"'),
    path: 'automations.fix.profile',
    message: "profile 'ghost' for automation 'fix' does not exist",
  },
  {
    name: 'prompt missing',
    toml: `${BASE_REPO}[automations.fix]\nrepository = "api"\nrepo = "acme/api"\n`,
    path: 'automations.fix.prompt',
    message: 'is required',
  },
  {
    name: 'repository key missing',
    toml: `${BASE_REPO}[automations.fix]\nrepo = "acme/api"\nprompt = "x"\n`,
    path: 'automations.fix.repository',
    message: 'is required',
  },
  {
    name: 'prompt empty',
    toml: `${BASE_REPO}[automations.fix]\nrepository = "api"\nrepo = "acme/api"\nprompt = "  "\n`,
    path: 'automations.fix.prompt',
    message: 'prompt must not be empty',
  },
  {
    name: 'prompt with a lone $',
    toml: `${BASE_REPO}[automations.fix]\nrepository = "api"\nrepo = "acme/api"\nprompt = "costs 5$"\n`,
    path: 'automations.fix.prompt',
    message: /prompt contains an invalid template placeholder/,
  },
  {
    name: 'unknown placeholder',
    toml: `${BASE_REPO}[automations.fix]\nrepository = "api"\nrepo = "acme/api"\nprompt = "Fix \${issue_numbr} \${zeta}"\n`,
    path: 'automations.fix.prompt',
    message: "unsupported prompt placeholders for 'fix': ['issue_numbr', 'zeta']",
  },
  {
    name: 'PR placeholder in an issue prompt',
    toml: `${BASE_REPO}[automations.fix]\nrepository = "api"\nrepo = "acme/api"\nprompt = "\${pull_request_number}"\n`,
    path: 'automations.fix.prompt',
    message:
      "unsupported prompt placeholders for 'fix': ['pull_request_number']; this table is an issue trigger (it has no trigger_type); add trigger_type = \"github-pull-requests\"",
  },
  {
    name: 'Jinja syntax error',
    toml: `${BASE_REPO}[automations.fix]\nrepository = "api"\nrepo = "acme/api"\nprompt = "{% if issue_title %}open"\n`,
    path: 'automations.fix.prompt',
    message: /Jinja syntax error/,
  },
  {
    name: 'Jinja unknown variable',
    toml: `${BASE_REPO}[automations.fix]\nrepository = "api"\nrepo = "acme/api"\nprompt = "{{ issue.title }}"\n`,
    path: 'automations.fix.prompt',
    message: "unsupported prompt placeholders for 'fix': ['issue']",
  },
  {
    name: 'repo without owner',
    toml: `${BASE_REPO}[automations.fix]\nrepository = "api"\nrepo = "api"\nprompt = "x"\n`,
    path: 'automations.fix.repo',
    message: 'repo must use the owner/repository format',
  },
  {
    name: 'repo with traversal',
    toml: `${BASE_REPO}[automations.fix]\nrepository = "api"\nrepo = "../api"\nprompt = "x"\n`,
    path: 'automations.fix.repo',
    message: 'repo must not contain traversal segments',
  },
  {
    name: 'state merged',
    toml: ISSUES('state = "merged"'),
    path: 'automations.fix.state',
    message: 'must be one of "open", "closed", "all", got "merged"',
  },
  {
    name: 'sort newest',
    toml: ISSUES('sort = "newest"'),
    path: 'automations.fix.sort',
    message: /must be one of "created-asc"/,
  },
  {
    name: 'label not a string',
    toml: ISSUES('labels = ["ok", 7]'),
    path: 'automations.fix.labels',
    message: /invalid value/,
  },
  {
    name: 'checkout a branch name',
    toml: ISSUES('checkout = "develop"'),
    path: 'automations.fix.checkout',
    message: 'must be one of "worktree", "main", got "develop"',
  },
  {
    name: 'PR-only field on issues',
    toml: ISSUES('draft = false'),
    path: 'automations.fix.draft',
    message: 'unknown key',
  },
  {
    name: 'post-filter on issues',
    toml: ISSUES('mergeable = true'),
    path: 'automations.fix.mergeable',
    message: 'unknown key',
  },
  {
    name: 'once not a boolean',
    toml: ISSUES('once = "yes"'),
    path: 'automations.fix.once',
    message: 'expected a boolean (true or false), got a string ("yes")',
  },
  {
    name: 'issue-only field on PRs',
    toml: PRS('linked_pull_request = true'),
    path: 'automations.fix.linked_pull_request',
    message: 'unknown key',
  },
  {
    name: 'review value',
    toml: PRS('review = "lgtm"'),
    path: 'automations.fix.review',
    message: /must be one of "none", "required", "approved", "changes_requested"/,
  },
  {
    name: 'ci_status value',
    toml: PRS('ci_status = "green"'),
    path: 'automations.fix.ci_status',
    message: /must be one of "success", "failure", "pending"/,
  },
  {
    name: 'merge_state value',
    toml: PRS('merge_state = ["GREEN"]'),
    path: 'automations.fix.merge_state[0]',
    message: /must be one of "BEHIND"/,
  },
  {
    name: 'cron four fields',
    toml: CRON('schedule = "* * * *"'),
    path: 'automations.nightly.schedule',
    message: 'schedule must be a valid five-field cron expression',
  },
  {
    name: 'cron junk',
    toml: CRON('schedule = "every day at noon"'),
    path: 'automations.nightly.schedule',
    message: 'schedule must be a valid five-field cron expression',
  },
  {
    name: 'cron unknown timezone',
    toml: CRON('schedule = "0 9 * * *"\ntimezone = "Europe/Atlantis"'),
    path: 'automations.nightly.timezone',
    message: 'unknown timezone: Europe/Atlantis',
  },
  {
    name: 'cron window reversed',
    toml: CRON('schedule = "0 9 * * *"\nstart_date = 2026-05-01\nend_date = 2026-04-01'),
    path: 'automations.nightly.end_date',
    message: 'end_date must be greater than or equal to start_date: nightly',
  },
  {
    name: 'cron start_date junk',
    toml: CRON('schedule = "0 9 * * *"\nstart_date = "tomorrow"'),
    path: 'automations.nightly.start_date',
    message: /must be a date/,
  },
  {
    name: 'cron missed policy',
    toml: CRON('schedule = "0 9 * * *"\nmissed = "later"'),
    path: 'automations.nightly.missed',
    message: 'must be one of "skip", "run", got "later"',
  },
  {
    name: 'cron with issue filters',
    toml: CRON('schedule = "0 9 * * *"\nlabels = ["x"]'),
    path: 'automations.nightly.labels',
    message: 'unknown key',
  },
  {
    name: 'project items without number',
    toml: `${BASE_REPO}[automations.board]\ntrigger_type = "github-project-items"\nrepository = "api"\nproject_owner = "acme"\nstatus = "Ready"\nprompt = "x"\n`,
    path: 'automations.board.project_number',
    message: 'is required',
  },
  {
    name: 'project items with no kinds',
    toml: `${BASE_REPO}[automations.board]\ntrigger_type = "github-project-items"\nrepository = "api"\nproject_owner = "acme"\nproject_number = 1\nstatus = "Ready"\nitem_types = []\nprompt = "x"\n`,
    path: 'automations.board.item_types',
    message: 'item_types must list at least one kind',
  },
  {
    name: 'api_url in clear text to another host',
    toml: SETTINGS('[settings.github]\napi_url = "http://ghe.example.com/api/v3"'),
    path: 'settings.github.api_url',
    message:
      'http:// sends the GitHub token unencrypted to ghe.example.com; use https://ghe.example.com/api/v3 (plain http is accepted only for localhost, 127.0.0.1 or [::1], e.g. the simulator)',
  },
  {
    name: 'assistant agent unknown',
    toml: `${BASE_REPO}[assistant]\nagent = "hal"\n${BASE_AUTOMATION}`,
    path: 'assistant.agent',
    message: /assistant.agent 'hal' is not a registered coding agent provider/,
  },
];

describe('invalid settings files', () => {
  it('has at least 40 distinct rules', () => {
    expect(new Set(INVALID.map((c) => c.name)).size).toBe(INVALID.length);
    expect(INVALID.length).toBeGreaterThanOrEqual(40);
  });

  for (const c of INVALID) {
    it(`rejects: ${c.name}`, () => {
      const error = errorOf(c.toml);
      const issue = error.issues.find((i) => i.path === c.path);
      expect(issue, `issues: ${error.message}`).toBeDefined();
      if (typeof c.message === 'string') expect(issue!.message).toBe(c.message);
      else expect(issue!.message).toMatch(c.message);
      expect(issue!.file).toBe(FILE);
      const rendered = error.message;
      if (c.fileLevel) {
        expect(rendered).toContain(`(${FILE})`);
      } else {
        expect(issue!.line, 'every problem has a line').toBeTypeOf('number');
        if (c.line !== undefined) expect(issue!.line).toBe(c.line);
        expect(rendered).toContain(`${FILE}:${issue!.line}`);
      }
      expect(rendered).not.toMatch(/\n\s+at /);
    });
  }

  it('reports every problem at once, in file order, as path: message (FILE:LINE:COL)', () => {
    const text = `[settings]
max_active_tasks = 0
[repositories.api]
remote = "nope"
[automations.fix]
repository = "api"
repo = "acme/api"
state = "merged"
prompt = "\${nope}"
`;
    const error = errorOf(text);
    expect(error.message.split('\n')).toEqual([
      '4 problems:',
      `  - settings.max_active_tasks: must be at least 1, got 0 (${FILE}:2:1)`,
      `  - repositories.api.remote: remote must be a full Git URL (https://, ssh://, git://, file://, or user@host:path) (${FILE}:4:1)`,
      `  - automations.fix.state: must be one of "open", "closed", "all", got "merged" (${FILE}:8:1)`,
      `  - automations.fix.prompt: unsupported prompt placeholders for 'fix': ['nope'] (${FILE}:9:1)`,
    ]);
  });

  it('rejects the item writes (labels, result comment) on a schedule or a chain, saying why, instead of ignoring them', () => {
    const text = `${BASE_REPO}[automations.nightly]
repository = "api"
schedule = "0 3 * * *"
prompt = "Tidy"
status_label = "agent:busy"
result_comment = true
[automations.review]
after = "nightly"
repository = "api"
prompt = "Review"
failed_label = "agent:failed"
`;
    const lines = errorOf(text).message.split('\n');
    expect(lines[0]).toBe('3 problems:');
    expect(lines).toContain(
      `  - automations.nightly.status_label: \`status_label\` acts on the issue or pull request a run came from; a schedule has none: remove it (${FILE}:7:1)`,
    );
    expect(
      lines.some((l) => l.startsWith('  - automations.nightly.result_comment: `result_comment` acts on')),
    ).toBe(true);
    expect(
      lines.some((l) =>
        l.includes(
          'automations.review.failed_label: `failed_label` acts on the issue or pull request a run came from; a chained automation has none',
        ),
      ),
    ).toBe(true);
    // Off is still fine: `result_comment = false` on a schedule says nothing.
    loadSettingsFromText(
      `${BASE_REPO}[automations.n]\nrepository = "api"\nschedule = "0 3 * * *"\nprompt = "T"\nresult_comment = false\n`,
      FILE,
    );
  });

  it('reports a typo in [settings] once, not as missing repositories everywhere', () => {
    const automations = ['a', 'b', 'c', 'd', 'e']
      .map((id) => `[automations.${id}]\nrepository = "api"\nrepo = "acme/api"\nprompt = "Fix"\n`)
      .join('');
    const error = errorOf(`[settings]\nmax_activ_tasks = 2\n${BASE_REPO}${automations}`);
    expect(error.message.split('\n')).toEqual([
      `settings.max_activ_tasks: unknown key (did you mean 'max_active_tasks'?) (${FILE}:2:1)`,
    ]);
  });

  it('still reports a repository that is really missing when [settings] has an error', () => {
    const error = errorOf(
      `[settings]\nmax_active_tasks = 0\n${BASE_REPO}[automations.fix]\nrepository = "apj"\nrepo = "acme/api"\nprompt = "Fix"\n`,
    );
    expect(error.issues.map((i) => `${i.path}: ${i.message}`)).toEqual([
      'settings.max_active_tasks: must be at least 1, got 0',
      "automations.fix.repository: repository 'apj' for automation 'fix' does not exist",
    ]);
  });

  it('says so when the file does not exist', () => {
    const missing = join(dir, 'missing.toml');
    expect(() => loadSettings(missing)).toThrow(`configuration file not found: ${missing}`);
  });

  it('gives the TOML syntax error with line and column', () => {
    writeFileSync(FILE, 'a = "unterminated\n');
    const error = (() => {
      try {
        loadSettings(FILE);
      } catch (e) {
        return e as ConfigError;
      }
      throw new Error('not rejected');
    })();
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.issues[0]!.line).toBe(1);
    expect(error.issues[0]!.column).toBeTypeOf('number');
    expect(readFileSync(FILE, 'utf8')).toBe('a = "unterminated\n');
  });
});
