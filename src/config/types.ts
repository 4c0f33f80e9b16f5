/**
 * The validated, resolved settings every other module reads. Paths are absolute. The tables' types
 * are the schema's (src/config/schema.ts) after defaults, so a key added there needs no line here.
 */
import type { z } from 'zod';
import type { Profile } from '../agents/schemas.js';
import type { PriceOverrides } from '../cost/prices.js';
import type { NotificationTable } from '../notify/schema.js';
import type { AutomationBase } from '../triggers/common-schema.js';
import type { BUILT_IN_TRIGGERS } from '../triggers/registry.js';
import type { TriggerDefinition } from '../triggers/types.js';
import type {
  AgentDefaultsTable,
  AssistantTable,
  PollingTable,
  RepositoryTable,
  SettingsTable,
} from './schema.js';

/**
 * Fields every automation table has (the base shape), plus those some triggers add and the engine
 * reads for any automation: absent (undefined) where a trigger does not define them.
 */
export interface SharedAutomationFields extends AutomationBase {
  /** `owner/name` of the items; required by the search triggers, optional elsewhere. */
  repo?: string;
  /** Item memory (event triggers); `'head'`: once per pull-request head commit. */
  once?: boolean | 'head';
  /** Which code a pull-request worktree holds (pull-request and project-item triggers). */
  worktree_from?: 'default_branch' | 'head';
  ignore_backlog?: boolean;
}

/** `[settings.polling]`, after defaults. */
export type PollingSettings = z.output<typeof PollingTable>;

/** `[settings]` after defaults (every key and sub-table the schema declares); paths made absolute. */
export type ExecutionSettings = z.output<typeof SettingsTable>;

/** `[agents.defaults]`, after defaults. */
export type AgentDefaults = z.output<typeof AgentDefaultsTable>;

/** A `[repositories.<alias>]` table after defaults, with its paths resolved. */
export type RepositorySettings = z.output<typeof RepositoryTable> & {
  alias: string;
  /** Absolute, when the alias sets `path`. */
  path?: string;
  /** Where the base checkout lives: `path`, or `workspace_dir/<alias>`. Absolute. */
  checkoutPath: string;
};

interface ResolvedAutomationBase {
  id: string;
  /** The trigger's contract (hooks for its feed, doctor, explain and prompt fields). */
  trigger: TriggerDefinition;
  repository: RepositorySettings;
  /**
   * The other repositories of a multi-repository automation (`repositories`, without the primary
   * `repository`), in the order written; absent for a single-repository one.
   */
  additionalRepositories?: RepositorySettings[];
  profileName: string;
  profile: Profile;
  /** Effective IANA timezone (the automation's own for cron, else the default). */
  timezone: string;
  promptSyntax: 'template' | 'jinja';
  /** Placeholders the prompt uses, in first-use order. */
  placeholders: string[];
  /** Set when the automation is written in the automations file (`curupira mcp`), not the settings file. */
  automationsFile?: string;
}

/** An automation of one trigger type: the type and its validated table travel together. */
export interface AutomationOf<T extends string, C> extends ResolvedAutomationBase {
  triggerType: T;
  config: C & SharedAutomationFields;
}

/** The automation a trigger definition resolves to (`TriggerDefinition<A>` → `A`). */
type AutomationOfDefinition<D> = D extends TriggerDefinition<infer A> ? A : never;

/**
 * A resolved automation of a built-in trigger: narrowing `triggerType` narrows `config`. The union
 * is read from the registry (`BUILT_IN_TRIGGERS`), so a new trigger adds no line here.
 */
export type ResolvedAutomation = AutomationOfDefinition<
  (typeof BUILT_IN_TRIGGERS)[keyof typeof BUILT_IN_TRIGGERS]
>;

/** The automations of one built-in trigger type. */
export type AutomationFor<T extends ResolvedAutomation['triggerType']> = Extract<
  ResolvedAutomation,
  { triggerType: T }
>;

/** Any automation, built-in or registered at run time (its table has at least the shared fields). */
export type AnyAutomation = AutomationOf<string, SharedAutomationFields>;

export type AutomationConfig = ResolvedAutomation['config'];

export interface Settings {
  /** Absolute path of the settings file. */
  file: string;
  /** Folder relative paths resolve against. */
  dir: string;
  execution: ExecutionSettings;
  repositories: Record<string, RepositorySettings>;
  agents: {
    defaults: AgentDefaults;
    profiles: Record<string, Profile>;
  };
  /** In file order: the settings file's, then the automations file's. */
  automations: ResolvedAutomation[];
  /** The automations file beside the settings file (what `curupira mcp` writes), whether or not it exists. */
  automationsFile?: string;
  assistant?: z.output<typeof AssistantTable>;
  /** `[notifications.<name>]` targets, by name (empty when the file has none). */
  notifications: Record<string, NotificationTable>;
  /** `[pricing]`: token prices replacing the built-in ones, by `<provider>/<model>`. */
  pricing?: PriceOverrides;
}

export interface LoadedSettings {
  settings: Settings;
  warnings: string[];
}
