/**
 * Step presets (issue 32, seed 001): `step = "triage"` on an automation fills in what the seed
 * defines for that step — its trigger and filters, its outcome set, its label handoffs, its lease
 * TTL and a prompt that tells the agent the step's rules and the closed result set — under every
 * key the automation's own table leaves unset. A leaf module: plain data, applied to the raw table
 * before it is validated, so `validate` and `--explain` see the filled-in keys as if written.
 */

export const STEP_NAMES = ['explore', 'triage', 'implement', 'shepherd', 'review'] as const;
export type StepName = (typeof STEP_NAMES)[number];

/** The closed result set as a prompt tells it (`number`: the item's `#N`, none for a schedule). */
export function resultRules(outcomes: readonly string[], number?: string): string {
  const n = number === undefined ? '' : `#${number} `;
  return `End your final message with one line, and only one, of:
${outcomes.map((o) => `  ${n}${o}`).join('\n')}
  ${n}noop: <reason>      (you looked, there was nothing to do)
  ${n}skipped: <reason>   (you changed nothing: it is not for you now)
  ${n}failed: <reason>
(or report it with the result_report tool when you have it).`;
}

const GUIDANCE = "Follow the repository's AGENTS.md and the descriptions of the item's labels.";

/** The item's labels with their descriptions (the maintainers' guidance), for a step on issues or pull requests. */
const labelGuidance = (prefix: 'issue' | 'pull_request') => `

The item's labels and what the maintainers wrote they mean:
\${${prefix}_label_descriptions}`;

const handoff = (remove: string[], add: string[]) => ({ remove_labels: remove, add_labels: add });

/** Each step's keys; `outcomes` also drives its prompt's result rules. */
export const STEP_PRESETS: Record<StepName, Record<string, unknown>> = {
  explore: {
    trigger_type: 'cron',
    schedule: '0 6 * * 1',
    outcomes: ['filed'],
    inputs: { focus: 'anything', explore_batch: '5' },
    prompt: `Explore the repository, looking at \${focus}. File at most \${explore_batch} issues, each
labelled needs-triage, one problem each, with the steps to see it. Never invent work: when nothing
is worth filing, say so. ${GUIDANCE}
${resultRules(['filed'])}`,
  },
  triage: {
    labels: ['needs-triage'],
    dedupe_closed_days: 30,
    lease_ttl: '1 hour',
    outcomes: ['ready-for-agent', 'needs-info', 'duplicate'],
    handoffs: {
      'ready-for-agent': handoff(['needs-triage'], ['agent:ready']),
      'needs-info': handoff(['needs-triage'], ['needs-info']),
      duplicate: handoff(['needs-triage'], ['duplicate']),
    },
    prompt: `Triage issue #\${issue_number}: \${issue_title}

\${issue_body}${labelGuidance('issue')}

Recently closed issues whose titles look like this one (none when empty):
\${duplicate_candidates}

Decide: ready-for-agent (clear, small, testable), needs-info (say what is missing), or duplicate
(of an open issue, or of one of those closed ones: give its link). Change nothing in the repository. ${GUIDANCE}
${resultRules(['ready-for-agent', 'needs-info', 'duplicate'], '${issue_number}')}`,
  },
  implement: {
    labels: ['agent:ready'],
    lease_ttl: '3 hours',
    outcomes: ['implemented'],
    deliver: 'pr',
    handoffs: {
      implemented: handoff(['agent:ready'], []),
      noop: handoff(['agent:ready'], []),
    },
    prompt: `Implement issue #\${issue_number}: \${issue_title}

\${issue_body}${labelGuidance('issue')}

Write the failing test first, then the change; commit on the current branch. When the default
branch already does what the issue asks, change nothing and report noop. ${GUIDANCE}
${resultRules(['implemented'], '${issue_number}')}`,
  },
  shepherd: {
    on: 'implemented',
    outcomes: ['on-track', 'needs-human'],
    prompt: `A pull request for \${upstream_item} was delivered from \${upstream_branch}:
\${upstream_outcome}

Check that the branch builds and its tests pass. Change nothing. ${GUIDANCE}
${resultRules(['on-track', 'needs-human'])}`,
  },
  review: {
    trigger_type: 'github-pull-requests',
    draft: false,
    once: 'head',
    worktree_from: 'head',
    lease_ttl: '1 hour',
    outcomes: ['approve', 'request-changes'],
    handoffs: {
      approve: handoff(['agent:changes-requested'], ['agent:approved']),
      'request-changes': handoff(['agent:approved'], ['agent:changes-requested']),
    },
    prompt: `Review pull request #\${pull_request_number} at \${pull_request_head_sha}: \${pull_request_title}${labelGuidance('pull_request')}

Read the diff against its base for correctness, regressions and missing tests. Change nothing.
${GUIDANCE}
${resultRules(['approve', 'request-changes'], '${pull_request_number}')}`,
  },
};

function isStep(value: unknown): value is StepName {
  return typeof value === 'string' && (STEP_NAMES as readonly string[]).includes(value);
}

/**
 * The table with its step's keys under the ones it sets (a table without a valid `step` is
 * returned as it is: the schema reports a bad one). A shepherd step chains only when it names its
 * upstream (`after`); `on` is filled in only then.
 */
export function withStepPreset(table: Record<string, unknown>): Record<string, unknown> {
  if (!isStep(table.step)) return table;
  const preset = { ...STEP_PRESETS[table.step] };
  if (table.step === 'shepherd' && table.after === undefined) delete preset.on;
  // A table that names its own trigger keeps it, and the preset's keys of another trigger go.
  if (table.trigger_type !== undefined && table.trigger_type !== preset.trigger_type)
    for (const key of ['trigger_type', 'schedule', 'draft', 'once', 'worktree_from']) delete preset[key];
  return { ...preset, ...table };
}

/** Every table of `[automations]` with its step preset applied. */
export function withStepPresets(tables: unknown): unknown {
  if (typeof tables !== 'object' || tables === null || Array.isArray(tables)) return tables;
  return Object.fromEntries(
    Object.entries(tables).map(([id, table]) => [
      id,
      typeof table === 'object' && table !== null && !Array.isArray(table)
        ? withStepPreset(table as Record<string, unknown>)
        : table,
    ]),
  );
}
