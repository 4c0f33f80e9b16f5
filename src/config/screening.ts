/**
 * `[settings.screening]` and `[automations.<id>.screening]`: the schema (a leaf module, zod only, so
 * the trigger schemas can compose it) and the one function that merges an automation's override
 * over the file's defaults. Screening itself lives in src/screening/ (its gate: src/screening/gate.ts).
 */
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { z } from 'zod';
import type { Profile } from '../agents/schemas.js';
import { ASSOCIATION_ORDER } from '../screening/trust.js';

/** GitHub's `authorAssociation` values, most trusted first. */
export const AUTHOR_ASSOCIATIONS = ASSOCIATION_ORDER;
export type AuthorAssociation = (typeof AUTHOR_ASSOCIATIONS)[number];

const SeverityAction = z.enum(['block', 'warn', 'ignore']);

/** A login (`alice`), a bot (`app/dependabot`) or a team (`@acme/maintainers`). */
export const TRUSTED_ACTOR_PATTERN =
  /^(?:app\/[A-Za-z0-9_.-]+|@[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+|[A-Za-z0-9-]+)$/;

const DESCRIPTIONS = {
  mode: '`block`: findings at a `block` threshold (and a required classifier that cannot answer) block the run; `warn`: never block, record warnings; `off`: no screening.',
  required:
    'An unvouched event-triggered item (its author is not trusted, and no trusted actor applied the labels the automation matches on) needs a classifier; when it is missing, fails or times out, the item is held as a blocked run. Vouched items never need one. Default: true unless `mode = "off"`. `false` lets unvouched items run when the deterministic scanners find nothing to block.',
  classifier_command:
    'argv of a classifier program: reads `{"texts": [...]}` as JSON on stdin, answers `{"scores": [...]}` (0 benign … 1 injection).',
  classifier_model:
    'Folder of a local Prompt Guard–format model (`model.onnx` and `tokenizer.json`); `~` expands, relative paths resolve against the settings file.',
  classifier_agent:
    "Score the text with an agent CLI you already have: `true` asks the automation's own profile, a string names a profile in `[agents.profiles]`. It runs in the provider's tool-free, read-only mode and must answer strict JSON (claude, codex, gemini, opencode, kilo); see docs/screening.md#the-agent-classifier. Used when neither `classifier_command` nor `classifier_model` is set.",
  classifier_timeout:
    'Seconds the classifier may take for one item before the run is blocked (when required).',
  classifier_threshold: 'A classifier score at or above this is a `high` finding.',
  thresholds:
    'What each finding severity does: `block`, `warn` or `ignore`. Default: `high` and `critical` block, `low` and `medium` warn.',
  trusted_authors:
    'Actors who vouch for an item, as its author or by applying the labels the automation matches on (its text is then scanned but never blocked, and needs no classifier): logins (`alice`), bots (`app/dependabot`) and teams (`@acme/maintainers`, resolved through GitHub).',
  min_author_association:
    "Actors whose GitHub `authorAssociation` on the item's repository is at least this are trusted and vouch for the items they write or label (OWNER > MEMBER > COLLABORATOR > CONTRIBUTOR > FIRST_TIME_CONTRIBUTOR > FIRST_TIMER > NONE; a labeler with write access counts as COLLABORATOR).",
  require_trusted_labeler:
    "Skip an item unless every label the automation matches on was last applied (per the item's timeline) by a trusted actor.",
} as const;

const Thresholds = z.strictObject({
  low: SeverityAction.optional(),
  medium: SeverityAction.optional(),
  high: SeverityAction.optional(),
  critical: SeverityAction.optional(),
});

const keys = {
  mode: z.enum(['block', 'warn', 'off']),
  required: z.boolean(),
  classifier_command: z.array(z.string().min(1)).min(1),
  classifier_model: z.string().min(1),
  classifier_agent: z.union([z.boolean(), z.string().min(1)]),
  classifier_timeout: z.number().positive('must be greater than 0').max(600),
  classifier_threshold: z.number().min(0).max(1),
  thresholds: Thresholds,
  trusted_authors: z.array(
    z.string().regex(TRUSTED_ACTOR_PATTERN, 'must be a login, `app/<name>` or `@org/team`'),
  ),
  min_author_association: z.enum(AUTHOR_ASSOCIATIONS),
  require_trusted_labeler: z.boolean(),
};

/** `[settings.screening]`: the defaults every automation starts from. */
export const ScreeningTable = z
  .strictObject({
    mode: keys.mode.default('block').describe(DESCRIPTIONS.mode),
    required: keys.required.optional().describe(DESCRIPTIONS.required),
    classifier_command: keys.classifier_command.optional().describe(DESCRIPTIONS.classifier_command),
    classifier_model: keys.classifier_model.optional().describe(DESCRIPTIONS.classifier_model),
    classifier_agent: keys.classifier_agent.optional().describe(DESCRIPTIONS.classifier_agent),
    classifier_timeout: keys.classifier_timeout.default(30).describe(DESCRIPTIONS.classifier_timeout),
    classifier_threshold: keys.classifier_threshold.default(0.8).describe(DESCRIPTIONS.classifier_threshold),
    thresholds: keys.thresholds.default({}).describe(DESCRIPTIONS.thresholds),
    trusted_authors: keys.trusted_authors.default([]).describe(DESCRIPTIONS.trusted_authors),
    min_author_association: keys.min_author_association
      .default('COLLABORATOR')
      .describe(DESCRIPTIONS.min_author_association),
    require_trusted_labeler: keys.require_trusted_labeler
      .default(false)
      .describe(DESCRIPTIONS.require_trusted_labeler),
  })
  .describe(
    'Screening of text written by strangers before an event-triggered run (curupira extension); see docs/screening.md. Each automation can replace any of these keys in its own `[automations.<id>.screening]` table. Schedules (`cron`) and chains (`after`) are never screened.',
  );
export type ScreeningTable = z.infer<typeof ScreeningTable>;

/** `[automations.<id>.screening]`: the same keys, each replacing the file's value. */
export const ScreeningOverride = z
  .strictObject({
    mode: keys.mode.optional().describe(DESCRIPTIONS.mode),
    required: keys.required.optional().describe(DESCRIPTIONS.required),
    classifier_command: keys.classifier_command.optional().describe(DESCRIPTIONS.classifier_command),
    classifier_model: keys.classifier_model.optional().describe(DESCRIPTIONS.classifier_model),
    classifier_agent: keys.classifier_agent.optional().describe(DESCRIPTIONS.classifier_agent),
    classifier_timeout: keys.classifier_timeout.optional().describe(DESCRIPTIONS.classifier_timeout),
    classifier_threshold: keys.classifier_threshold.optional().describe(DESCRIPTIONS.classifier_threshold),
    thresholds: keys.thresholds.optional().describe(DESCRIPTIONS.thresholds),
    trusted_authors: keys.trusted_authors.optional().describe(DESCRIPTIONS.trusted_authors),
    min_author_association: keys.min_author_association
      .optional()
      .describe(DESCRIPTIONS.min_author_association),
    require_trusted_labeler: keys.require_trusted_labeler
      .optional()
      .describe(DESCRIPTIONS.require_trusted_labeler),
  })
  .describe('This automation’s screening: any `[settings.screening]` key, replacing the file’s value.');
export type ScreeningOverride = z.infer<typeof ScreeningOverride>;

export type SeverityActionName = z.infer<typeof SeverityAction>;

/** The screening one automation runs with, every default applied. */
export interface ScreeningSettings {
  mode: 'block' | 'warn' | 'off';
  /** A classifier must answer (else the run is blocked). */
  required: boolean;
  classifier: {
    command?: readonly string[];
    /** Absolute. */
    modelDir?: string;
    /**
     * `classifier_agent` (`false` is left out): the profile it names, the automation's own for
     * `true`; `profile` is undefined when no such profile exists or no profiles were given.
     */
    agent?: { profileName: string; profile?: Profile };
    timeoutSeconds: number;
    threshold: number;
  };
  thresholds: Record<'low' | 'medium' | 'high' | 'critical', SeverityActionName>;
  trustedAuthors: readonly string[];
  minAuthorAssociation: AuthorAssociation;
  requireTrustedLabeler: boolean;
}

const DEFAULT_THRESHOLDS = { low: 'warn', medium: 'warn', high: 'block', critical: 'block' } as const;

function resolveFrom(path: string, dir: string): string {
  const expanded = path === '~' ? homedir() : path.startsWith('~/') ? join(homedir(), path.slice(2)) : path;
  return isAbsolute(expanded) ? resolve(expanded) : resolve(dir, expanded);
}

/** The file's `[settings.screening]` with an automation's override on top; paths resolved against `dir`. */
export function resolveScreening(
  base: ScreeningTable,
  override: ScreeningOverride | undefined,
  dir: string,
  /** The automation's profile name and the file's profiles, for `classifier_agent`. */
  agents?: { own: string; profiles: Readonly<Record<string, Profile>> },
): ScreeningSettings {
  const o = override ?? {};
  const mode = o.mode ?? base.mode;
  const command = o.classifier_command ?? base.classifier_command;
  const model = o.classifier_model ?? base.classifier_model;
  const agent = o.classifier_agent ?? base.classifier_agent;
  return {
    mode,
    required: o.required ?? base.required ?? mode !== 'off',
    classifier: {
      ...(command ? { command } : {}),
      ...(model ? { modelDir: resolveFrom(model, dir) } : {}),
      ...(agent !== undefined && agent !== false ? { agent: agentOf(agent, agents) } : {}),
      timeoutSeconds: o.classifier_timeout ?? base.classifier_timeout,
      threshold: o.classifier_threshold ?? base.classifier_threshold,
    },
    thresholds: { ...DEFAULT_THRESHOLDS, ...base.thresholds, ...(o.thresholds ?? {}) },
    trustedAuthors: o.trusted_authors ?? base.trusted_authors,
    minAuthorAssociation: o.min_author_association ?? base.min_author_association,
    requireTrustedLabeler: o.require_trusted_labeler ?? base.require_trusted_labeler,
  };
}

function agentOf(
  agent: true | string,
  agents: { own: string; profiles: Readonly<Record<string, Profile>> } | undefined,
): { profileName: string; profile?: Profile } {
  const profileName = agent === true ? (agents?.own ?? 'the automation’s profile') : agent;
  const profile =
    agents && Object.hasOwn(agents.profiles, profileName) ? agents.profiles[profileName] : undefined;
  return { profileName, ...(profile ? { profile } : {}) };
}

/** What a user reads when a required classifier is missing: what is missing and the two fixes. */
export function missingClassifierMessage(where: string): string {
  return `no classifier is configured (${where}) and screening requires one: set classifier_model = "<folder with a Prompt Guard model.onnx and tokenizer.json>" classifier_command = ["prog", "args"…] or classifier_agent = true under [settings.screening], or set required = false there to accept the risk of screening with the deterministic scanners alone`;
}

/** The loader's screening warnings for loaded settings. */
export function screeningWarningsFor(settings: {
  execution: { screening: ScreeningTable };
  automations: readonly {
    id: string;
    config: { screening?: ScreeningOverride };
    trigger: { screening?: { unscreened: string } | object };
  }[];
}): string[] {
  return screeningWarnings(
    settings.execution.screening,
    settings.automations.map((a) => ({
      id: a.id,
      ...(a.config.screening ? { screening: a.config.screening } : {}),
      screened: !(a.trigger.screening && 'unscreened' in a.trigger.screening),
    })),
  );
}

/** Warnings the loader adds for screening settings (nothing here is an error beyond the schema). */
export function screeningWarnings(
  base: ScreeningTable,
  automations: readonly { id: string; screening?: ScreeningOverride; screened: boolean }[],
): string[] {
  const warnings: string[] = [];
  if (base.mode === 'off')
    warnings.push('settings.screening.mode = "off": text written by strangers reaches agents unscreened');
  for (const automation of automations) {
    if (automation.screening === undefined) continue;
    if (!automation.screened)
      warnings.push(
        `automations.${automation.id}.screening: this trigger carries no third-party text and is never screened; the table has no effect`,
      );
    else if (automation.screening.mode === 'off')
      warnings.push(
        `automations.${automation.id}.screening.mode = "off": text written by strangers reaches this automation's agent unscreened`,
      );
  }
  return warnings;
}
