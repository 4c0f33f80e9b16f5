/** The validated, resolved settings every other module reads. Paths are absolute. */
import type { Profile } from '../agents/schemas.js';
import type { AfterAutomation } from '../triggers/after/schema.js';
import type { CronAutomation } from '../triggers/cron/schema.js';
import type { GitHubIssuesAutomation } from '../triggers/github-issues/schema.js';
import type { GitHubProjectItemsAutomation } from '../triggers/github-project-items/schema.js';
import type { GitHubPullRequestsAutomation } from '../triggers/github-pull-requests/schema.js';
import type { TriggerDefinition, TriggerType } from '../triggers/types.js';

export type AutomationConfig =
  | GitHubIssuesAutomation
  | GitHubPullRequestsAutomation
  | GitHubProjectItemsAutomation
  | CronAutomation
  | AfterAutomation;

export interface PollingSettings {
  poll_interval_seconds: number;
  batch_size: number;
  cron_poll_interval_seconds: number;
}

export interface ExecutionSettings {
  max_active_tasks: number;
  max_pending_tasks: number;
  /** Absolute. */
  workspace_dir: string;
  /** Absolute. */
  state_db_path: string;
  task_timeout_minutes: number;
  max_output_bytes: number;
  otlp_endpoint?: string;
  history_limit: number;
  max_resume_failures: number;
  shutdown: 'stop' | 'drain';
  polling: PollingSettings;
  github: { api_url: string };
}

export interface RepositorySettings {
  alias: string;
  remote: string;
  /** Absolute, when the alias sets `path`. */
  path?: string;
  setup_script?: string;
  /** Where the base checkout lives: `path`, or `workspace_dir/<alias>`. Absolute. */
  checkoutPath: string;
}

export interface ResolvedAutomation {
  id: string;
  triggerType: TriggerType;
  trigger: TriggerDefinition;
  config: AutomationConfig;
  repository: RepositorySettings;
  profileName: string;
  profile: Profile;
  /** Effective IANA timezone (the automation's own for cron, else the default). */
  timezone: string;
  promptSyntax: 'template' | 'jinja';
  /** Placeholders the prompt uses, in first-use order. */
  placeholders: string[];
}

export interface Settings {
  /** Absolute path of the settings file. */
  file: string;
  /** Folder relative paths resolve against. */
  dir: string;
  execution: ExecutionSettings;
  repositories: Record<string, RepositorySettings>;
  agents: {
    defaults: { profile: string; timezone: string };
    profiles: Record<string, Profile>;
  };
  /** In file order. */
  automations: ResolvedAutomation[];
  assistant?: { agent?: string; model?: string };
}

export interface LoadedSettings {
  settings: Settings;
  warnings: string[];
}
