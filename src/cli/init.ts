/**
 * `curupira init`: writes a commented starter settings file for one repository and one agent, at
 * the settings path (`-c/--config`, `CURUPIRA_CONFIG`, or `~/.curupira/settings.toml`). It never
 * overwrites a file, and it checks what it wrote with the same loader `validate` uses.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Command } from 'commander';
import { isProvider, PROVIDERS, type Provider } from '../agents/schemas.js';
import { loadSettings, loadSettingsFromText } from '../config/load.js';
import { UsageError } from '../core/errors.js';
import { pipelineSettings } from './init-pipeline.js';
import { type CliIo, writeLine } from './io.js';
import type { GlobalOptions } from './program.js';
import { validMessage } from './validate.js';

export interface InitOptions {
  remote?: string;
  repo?: string;
  provider?: string;
  label?: string;
  /** Seed 001's five-step pipeline (explore, triage, implement, shepherd, review) instead. */
  pipeline?: boolean;
}

/** Each provider's starter profile lines: the options a first unattended run most often needs. */
const PROFILE_LINES: Record<Provider, string[]> = {
  claude: [
    'permission_mode = "acceptEdits"       # edits without asking; "bypassPermissions" also runs any command',
    '# model = "sonnet"',
  ],
  codex: [
    'sandbox = "workspace-write"           # the agent may write inside its worktree only',
    '# model = "gpt-5-codex"',
  ],
  opencode: [
    '# model = "anthropic/claude-sonnet-4-5"  # OpenCode models are provider/model',
    'auto_approve = false                  # true runs without approval prompts (--auto)',
  ],
  gemini: ['approval_mode = "auto_edit"          # edits without asking; "yolo" also runs any command'],
  cursor: ['force = false                        # true allows commands without asking', 'trust = true'],
  copilot: ['allow_all_tools = false              # true lets the agent use every tool without asking'],
  kilo: ['auto_approve = false                  # true runs without approval prompts (--auto)'],
  pi: ['# model = "…"'],
  qwen: ['approval_mode = "auto-edit"          # edits without asking; "yolo" also runs any command'],
};

/** `owner/name` from a GitHub remote (`https://github.com/o/n.git`, `git@github.com:o/n.git`). */
export function repoFromRemote(remote: string): string | undefined {
  const match = /github\.com[/:]([A-Za-z0-9_.-]+)\/([A-Za-z0-9_.-]+?)(?:\.git)?\/?$/.exec(remote);
  return match ? `${match[1]}/${match[2]}` : undefined;
}

function tomlString(value: string): string {
  return JSON.stringify(value);
}

/** The starter file's text. Throws `UsageError` for options no settings file could hold. */
export function starterSettings(options: InitOptions): string {
  const provider = options.provider ?? 'claude';
  if (!isProvider(provider)) {
    throw new UsageError(`--provider must be one of ${PROVIDERS.join(', ')}, got '${provider}'`);
  }
  if (options.repo !== undefined && !/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/.test(options.repo)) {
    throw new UsageError(`--repo must be owner/name, got '${options.repo}'`);
  }
  const repo =
    options.repo ?? (options.remote === undefined ? undefined : repoFromRemote(options.remote)) ?? 'acme/api';
  const remote = options.remote ?? `https://github.com/${repo}.git`;
  const alias = (repo.split('/')[1] ?? 'api').replace(/[^A-Za-z0-9_-]/g, '-');
  const label = options.label ?? 'agent-ready';
  const placeholder = options.repo === undefined && options.remote === undefined;
  if (options.pipeline) {
    if (options.label !== undefined)
      throw new UsageError('--label goes without --pipeline: the pipeline names its own labels');
    return pipelineSettings({
      repo,
      remote,
      alias,
      provider,
      profileLines: PROFILE_LINES[provider],
      placeholder,
    });
  }
  return `# curupira settings, written by \`curupira init\`.
#
# Check it:      curupira validate --explain   (what each automation will do; contacts nothing)
#                curupira doctor               (token, GitHub, the remote, the agent CLI)
# First run:     curupira run --dry-run        (the first task that would run; runs nothing)
# Every key is in docs/configuration.md (or \`curupira schema\`). Unknown keys are errors.
# Relative paths resolve against this file's folder; \`~\` is your home folder.
${placeholder ? '#\n# acme/api below is a placeholder: put your repository there (or run `curupira init --repo OWNER/NAME`).\n' : ''}
[settings]
max_active_tasks = 1                   # agents running at once
# workspace_dir = "~/.curupira/workspaces"   # checkouts are cloned to <workspace_dir>/<alias>
# state_db_path = "~/.curupira/state.sqlite3" # sessions, run history; logs go to logs/ beside it
# task_timeout_minutes = 30

# [settings.github]
# api_url = "https://api.github.com"   # https://HOST/api/v3 for GitHub Enterprise Server

# Issue and pull-request text is written by strangers (docs/screening.md). An item runs when it is
# vouched for: its author is trusted (OWNER, MEMBER, COLLABORATOR or trusted_authors), or a trusted
# person applied the label the automation matches on. Its text is still scanned and hidden text
# removed. An unvouched item needs a classifier; without one it is held, visibly (\`curupira runs\`
# shows why; \`curupira validate\` says what happens to unvouched items).
[settings.screening]
# classifier_model = "~/.curupira/models/prompt-guard"  # a Prompt Guard model.onnx + tokenizer.json
# classifier_command = ["python3", "/path/to/classify.py"] # reads {"texts": […]}, answers {"scores": […]}
# required = false                      # unvouched items too: deterministic scanners only
# mode = "block"                        # "warn" never blocks; "off" turns screening off
# trusted_authors = ["alice", "app/dependabot", "@acme/maintainers"]  # scanned, never blocked
# min_author_association = "COLLABORATOR"  # OWNER, MEMBER and COLLABORATOR are trusted
# require_trusted_labeler = true        # the matching label must come from a trusted actor

# The checkout the agent works in: cloned once, then one worktree and branch per task.
[repositories.${alias}]
remote = ${tomlString(remote)}
# path = "~/src/${alias}"               # use an existing checkout instead of cloning
# setup_script = "scripts/bootstrap.sh" # run once after the first clone, inside the checkout

[agents.defaults]
profile = ${tomlString(provider)}
# timezone = "UTC"                      # for schedules

# The agent CLI and its options. Its environment is built from an allowlist, not inherited;
# the GitHub token reaches it only with github_token = true.
[agents.profiles.${provider}]
provider = ${tomlString(provider)}
${PROFILE_LINES[provider].join('\n')}
# github_token = true                   # let the agent push and open pull requests with gh

# Open issues labelled ${label} without a linked pull request become runs, oldest first.
[automations.resolve-issues]
repository = ${tomlString(alias)}         # where the agent works (an alias above)
repo = ${tomlString(repo)}                # what GitHub is searched for
labels = [${tomlString(label)}]
linked_pull_request = false
once = true                            # each issue runs once, not again at every start (each run costs)
# exclude_labels = ["blocked"]
# deliver = "pr"                       # WRITES: push the branch and open a draft pull request
prompt = """
Resolve issue \${issue_number}: \${issue_title}

\${issue_body}

Commit your change on the current branch.
"""

# Pull requests to review, on their own code (worktree_from = "head"), once per head commit
# (once = "head": a restart does not pay for the same review again; a new push does).
# [automations.review-pull-requests]
# trigger_type = "github-pull-requests"
# repository = ${tomlString(alias)}
# repo = ${tomlString(repo)}
# labels = ["review-needed"]
# worktree_from = "head"
# once = "head"
# prompt = "Review pull request \${pull_request_number} at \${pull_request_head_sha}: \${pull_request_title}"

# A chain: runs after each successful run of resolve-issues, in its own worktree.
# [automations.review]
# after = "resolve-issues"
# repository = ${tomlString(alias)}
# prompt = "Review the change on \${upstream_branch} for \${upstream_item}."
`;
}

export function registerInit(program: Command, io: CliIo, globals: () => GlobalOptions): void {
  program
    .command('init')
    .description(
      'Write a commented starter settings file (one repository, one agent, one automation); never overwrites.',
    )
    .option('--repo <owner/name>', 'the GitHub repository whose issues become runs')
    .option('--remote <url>', 'the Git URL to clone (default https://github.com/<repo>.git)')
    .option('--provider <name>', `the agent CLI: ${PROVIDERS.join(', ')} (default claude)`)
    .option('--label <name>', 'the issue label that marks work for the agent (default agent-ready)')
    .option(
      '--pipeline',
      'write the five-step issue-to-merge pipeline instead (explore, triage, implement, shepherd, review; docs/pipeline.md)',
    )
    .action((options: InitOptions) => {
      const file = globals().config;
      const text = starterSettings(options);
      // Check before writing, so a bad --remote never leaves a broken file behind.
      loadSettingsFromText(text, file);
      mkdirSync(dirname(file), { recursive: true });
      try {
        writeFileSync(file, text, { flag: 'wx' });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
          throw new UsageError(
            `${file} already exists; init never overwrites. Edit it, or pass --config NEW_PATH to write another.`,
          );
        }
        throw error;
      }
      const { settings } = loadSettings(file);
      writeLine(io.stdout, `Wrote ${file}`);
      writeLine(io.stdout, validMessage(settings));
      writeLine(
        io.stdout,
        'Next: edit it, then `curupira validate --explain`, `curupira doctor` and `curupira run --dry-run`.',
      );
    });
}
