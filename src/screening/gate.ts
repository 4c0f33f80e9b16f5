/**
 * The screening gate, run once per item about to run (not per poll), before its prompt is rendered.
 * Event triggers only: a trigger whose hook says `unscreened` (schedules, chains) passes untouched.
 *
 * 1. Read the item's newest comments, its author's association and (when the automation matches on
 *    labels) who applied each label, in one request.
 * 2. Decide trust by actor. The item is *vouched* when its author is trusted, or when every label
 *    the automation matches on was last applied by a trusted actor. Comments by untrusted authors
 *    never enter the prompt; with `require_trusted_labeler`, a matching label applied by an
 *    untrusted actor skips the item.
 * 3. Scan title, body, author, head branch and every comment. A vouched item needs no classifier and
 *    its findings are warnings. An unvouched item asks the classifier (required unless
 *    `required = false`); only its author's text that enters the prompt can block.
 * 4. A blocked item becomes a `blocked` run (no worktree, no agent). The same text is not screened
 *    into a new record again (`held`) until it changes or `curupira allow` lets that digest through once.
 */
import { createHash } from 'node:crypto';
import type { ScreeningSettings } from '../config/screening.js';
import type { ResolvedAutomation } from '../config/types.js';
import type { Clock } from '../core/clock.js';
import { errorMessage } from '../core/errors.js';
import { classifyFailure, runStatusFor } from '../core/outcome.js';
import { recordSkippedRun, runInit } from '../core/task-fields.js';
import type { FieldValue, RunRecord, Task } from '../core/types.js';
import type { GitHubClient } from '../github/client.js';
import { getCollaboratorPermission } from '../github/rest.js';
import type { Logger } from '../log.js';
import { revealHidden } from '../prompt/hidden.js';
import type { Store } from '../store/types.js';
import type { ScreenTarget } from '../triggers/types.js';
import { type Classifier, ClassifierError, type ClassifierSettings } from './classifier/types.js';
import { type ContextComment, type ItemContext, readItemContext, type TeamCache } from './gate-context.js';
import type { Finding, ScreenField } from './index.js';
import { type Actor, type TrustRules, teamsIn, trustReason } from './trust.js';

export interface GateDeps {
  store: Store;
  log: Logger;
  clock: Clock;
  github(): GitHubClient;
  /** The classifier for these settings (cached by the caller); null when none is configured. */
  classifier(settings: ClassifierSettings): Classifier | null;
  teams: TeamCache;
}

/** What screening recorded for a run that goes ahead. */
export interface RunScreening {
  findings: Finding[];
  reason: string;
  digest: string;
  /** The text runs because a person allowed its blocked run once (`curupira allow`). */
  allowance?: { runId: string; allowedBy: string; allowedAt: string };
}

export type Gate =
  /** Go ahead with `task` (its `comments` field filled); `screening` is recorded on the run. */
  | { kind: 'run'; task: Task; screening?: RunScreening }
  /** A new `blocked`, `skipped` or `failed` run was recorded; nothing runs. */
  | { kind: 'stopped'; run: RunRecord }
  /** The same text is already blocked by `previous`: nothing new is recorded. */
  | { kind: 'held'; previous: RunRecord };

/** Fields that carry the item author's text into the prompt. */
const ITEM_FIELDS = new Set(['title', 'body', 'author', 'head_branch']);

/** What screening reads of a task; undefined for triggers that are not screened. */
export function screenTarget(automation: ResolvedAutomation, task: Task): ScreenTarget | undefined {
  const hook = automation.trigger.screening;
  if (hook && 'unscreened' in hook) return undefined;
  if (hook) return hook.target(automation, task);
  return { title: task.item.title, body: task.item.body, author: null, labels: [] };
}

type Scanners = typeof import('../screening/index.js');
let scanners: Scanners | undefined;

/** The scanners (22 modules) load with the first task screened: an idle daemon goes without them. */
async function loadScanners(): Promise<Scanners> {
  scanners ??= await import('../screening/index.js');
  return scanners;
}

export async function gateTask(
  deps: GateDeps,
  automation: ResolvedAutomation,
  task: Task,
  screening: ScreeningSettings,
  signal: AbortSignal,
): Promise<Gate> {
  const gate = await screenTask(deps, automation, task, screening, signal);
  if (gate.kind !== 'run') return gate;
  // Hidden text is removed from the prompt whatever was decided (src/prompt/hidden.ts); the run
  // records what was removed.
  const removed = await hiddenFindings(automation, gate.task);
  if (removed.length === 0) return gate;
  const base = gate.screening ?? {
    findings: [],
    reason: screening.mode === 'off' ? 'screening is off' : 'not screened',
    digest: '',
  };
  const reason = `${base.reason}; hidden text removed from the prompt (${removed.length} part${removed.length === 1 ? '' : 's'})`;
  return { ...gate, screening: { ...base, reason, findings: [...base.findings, ...removed] } };
}

/**
 * A marker comment of the shape curupira writes (`<!-- curupira:delivery run=r_… -->`,
 * `<!-- curupira:linked -->`): a kind, then `key=value` pairs without spaces, nothing else.
 */
const OWN_MARKER = /^<!-- curupira:[a-z][a-z-]*(?: [a-z][a-z_-]*=[^\s<>]*)* -->$/;

/** The longest removed text a finding keeps (made visible). */
const REMOVED_KEPT = 2000;

/** One `hidden-text/removed-*` finding per part removed from an untrusted prompt field. */
async function hiddenFindings(automation: ResolvedAutomation, task: Task): Promise<Finding[]> {
  const values: Record<string, FieldValue> = {
    task_title: task.item.title,
    task_body: task.item.body,
    ...task.item.fields,
    ...(task.item.volatile ?? {}),
  };
  const fields = automation.trigger.untrustedFields.filter((name) => values[name] !== undefined);
  const strings = (value: FieldValue, path: string, out: Array<[string, string]>): void => {
    if (typeof value === 'string') out.push([path, value]);
    else if (Array.isArray(value)) for (const [i, v] of value.entries()) strings(v, `${path}[${i}]`, out);
    else if (value !== null && typeof value === 'object')
      for (const [k, v] of Object.entries(value)) strings(v as FieldValue, `${path}.${k}`, out);
  };
  const texts: Array<[string, string]> = [];
  for (const name of fields) strings(values[name]!, name, texts);
  const findings: Finding[] = [];
  const seen = new Set<string>();
  for (const [field, text] of texts) {
    if (seen.has(text)) continue; // task_title repeats issue_title
    seen.add(text);
    const { removed } = revealHidden(text);
    if (removed.length === 0) continue;
    const { makeVisible } = await loadScanners();
    for (const part of removed) {
      // curupira's own markers (the delivery marker in a pull request's body it opened, a lease or
      // result comment's) are removed like any comment, but they are not someone's hidden text.
      if (part.kind === 'html-comment' && OWN_MARKER.test(part.text)) continue;
      const shown = makeVisible(part.text);
      findings.push({
        scanner: 'hidden-text',
        rule: `removed-${part.kind}`,
        severity: 'low',
        field,
        offset: part.offset,
        excerpt: shown.length > REMOVED_KEPT ? `${shown.slice(0, REMOVED_KEPT)}…` : shown,
      });
    }
  }
  return findings;
}

/** What screening makes of an item before anything is recorded, asked or allowed. */
type Assessment =
  | { kind: 'unscreened'; task: Task }
  /** `require_trusted_labeler` and a matching label an untrusted actor applied. */
  | { kind: 'labeler'; problem: string }
  | {
      kind: 'assessed';
      /** The task with its trusted comments for the prompt. */
      ready: Task;
      fields: ScreenField[];
      digest: string;
      vouched: string | undefined;
      findings: Finding[];
      author: Actor | null;
      labelers: Labeler[];
    };

/** Reads the item's context and judges trust and text; throws when the context cannot be read. */
async function assess(
  deps: GateDeps,
  automation: ResolvedAutomation,
  task: Task,
  screening: ScreeningSettings,
  signal: AbortSignal,
): Promise<Assessment> {
  const target = screenTarget(automation, task);
  if (!target) return { kind: 'unscreened', task };
  const wantsComments = automation.placeholders.includes('comments');
  if (screening.mode === 'off' && !screening.requireTrustedLabeler && !wantsComments)
    return { kind: 'unscreened', task };
  const timeline = screening.requireTrustedLabeler || target.labels.length > 0;
  const context = await readItemContext(deps.github(), target, { timeline, signal });
  const rules = await trustRules(deps, screening);
  const author = await authorWithAssociation(
    deps,
    target,
    context.author ?? (target.author ? { login: target.author, bot: false } : null),
    rules,
  );
  const labelers = await labelersOf(deps, target, context, rules);
  if (screening.requireTrustedLabeler) {
    const problem = labelerProblem(automation.id, target, labelers, screening);
    if (problem) return { kind: 'labeler', problem };
  }
  const comments = context.comments.map((c) => ({
    ...c,
    trusted: trustReason(c.author, rules) !== undefined,
  }));
  const ready = withComments(task, renderComments(comments.filter((c) => c.trusted)));
  if (screening.mode === 'off') return { kind: 'unscreened', task: ready };
  const fields = screenFields(target, author, comments);
  const { scan } = await loadScanners();
  return {
    kind: 'assessed',
    ready,
    fields,
    digest: digestOf(fields),
    vouched: vouchOf(author, rules, target, labelers),
    findings: scan({ fields }),
    author,
    labelers,
  };
}

async function screenTask(
  deps: GateDeps,
  automation: ResolvedAutomation,
  task: Task,
  screening: ScreeningSettings,
  signal: AbortSignal,
): Promise<Gate> {
  let assessed: Assessment;
  try {
    assessed = await assess(deps, automation, task, screening, signal);
  } catch (error) {
    const status = runStatusFor(classifyFailure(error, { stage: 'screening', stopping: signal.aborted }));
    const why = `could not read the item's comments and authors for screening: ${errorMessage(error)}`;
    return { kind: 'stopped', run: await recordRun(deps, automation, task, status, why) };
  }
  if (assessed.kind === 'unscreened') return { kind: 'run', task: assessed.task };
  if (assessed.kind === 'labeler') {
    const at = new Date(deps.clock.now()).toISOString();
    const id = await recordSkippedRun(deps.store, automation, task, assessed.problem, at);
    return { kind: 'stopped', run: (await deps.store.getRun(id))! };
  }
  const { ready, fields, digest, vouched, findings, author, labelers } = assessed;
  const exposed = vouched ? new Set<string>() : ITEM_FIELDS;
  const allowance = await deps.store.takeAllowance(task.key, digest);
  if (allowance) {
    const reason = `allowed once by ${allowance.allowedBy} at ${allowance.allowedAt} (blocked run ${allowance.runId})`;
    deps.log.warn(
      { automation: automation.id, id: task.item.id, run: allowance.runId },
      'Running an allowed item',
    );
    const { runId, allowedBy, allowedAt } = allowance;
    return {
      kind: 'run',
      task: ready,
      screening: { findings, reason, digest, allowance: { runId, allowedBy, allowedAt } },
    };
  }
  let verdict = judge(findings, exposed, screening);
  if (vouched) {
    // Vouched: the scanners' findings are warnings and no classifier is asked.
    const reason = `vouched (${vouched}): ${verdict.reason}`;
    return { kind: 'run', task: ready, screening: { reason, findings, digest } };
  }
  if (verdict.action !== 'block') {
    const classified = await classifyFields(
      deps,
      screening,
      fields,
      signal,
      unvouchedWhy(author, labelers, screening),
    );
    findings.push(...classified.findings);
    verdict = classified.failure ?? judge(findings, exposed, screening);
    if (classified.warning) verdict = { ...verdict, reason: `${verdict.reason}; ${classified.warning}` };
  }
  if (verdict.action !== 'block')
    return { kind: 'run', task: ready, screening: { ...verdict, findings, digest } };
  const previous = await deps.store.findBlockedRun(task.key, digest);
  if (previous) return { kind: 'held', previous };
  const run = await recordRun(deps, automation, task, 'blocked', verdict.reason, {
    screeningFindings: findings,
    screeningReason: verdict.reason,
    screenedDigest: digest,
  });
  deps.log.warn(
    {
      automation: automation.id,
      repo: task.identity.repo,
      id: task.item.id,
      run: run.id,
      reason: verdict.reason,
    },
    'Blocked by screening',
  );
  return { kind: 'stopped', run };
}

/**
 * What the gate would decide, for `run --dry-run`: reads the item as the gate does (GitHub reads
 * only), records nothing, takes no allowance and asks no classifier. `held`: the gate would stop
 * it, and why; `note`: it would go ahead on a condition the preview cannot settle (a classifier's
 * answer); undefined: it would run.
 */
export async function previewGate(
  deps: GateDeps,
  automation: ResolvedAutomation,
  task: Task,
  screening: ScreeningSettings,
  signal: AbortSignal,
): Promise<{ held: string } | { note: string } | undefined> {
  let assessed: Assessment;
  try {
    assessed = await assess(deps, automation, task, screening, signal);
  } catch (error) {
    return { note: `screening could not read the item's comments and authors: ${errorMessage(error)}` };
  }
  if (assessed.kind === 'unscreened') return undefined;
  if (assessed.kind === 'labeler') return { held: `skipped by screening: ${assessed.problem}` };
  const { digest, vouched, findings, author, labelers } = assessed;
  if (vouched) return undefined;
  const allowed = (await deps.store.listAllowances({ pending: true })).some(
    (a) => a.taskKey === task.key && a.textDigest === digest,
  );
  if (allowed) return undefined;
  const verdict = judge(findings, ITEM_FIELDS, screening);
  if (verdict.action === 'block')
    return { held: `screening would block it: ${verdict.reason.replace(/^blocked: /, '')}` };
  const unvouched = unvouchedWhy(author, labelers, screening);
  if (deps.classifier(screening.classifier) === null) {
    if (screening.required && screening.mode === 'block')
      return {
        held: `screening would block it: ${unvouched}, so a classifier must screen it, and ${missingClassifier()}`,
      };
    return undefined;
  }
  return { note: `${unvouched}: the classifier screens it when it runs` };
}

interface Judgement {
  action: 'allow' | 'warn' | 'block';
  reason: string;
}

/** Only findings in text the untrusted item author puts in the prompt can block; the rest warn. */
function judge(
  findings: readonly Finding[],
  exposed: ReadonlySet<string>,
  screening: ScreeningSettings,
): Judgement {
  const { decide } = scanners!; // loaded by gateTask before any judgement
  const policy = { mode: screening.mode, thresholds: screening.thresholds, trusted: false };
  const blocking = decide(
    findings.filter((f) => exposed.has(f.field)),
    policy,
  );
  if (blocking.action === 'block') return blocking;
  const overall = decide(findings, { ...policy, mode: 'warn' });
  const why =
    screening.mode === 'warn'
      ? 'warn mode, not blocked'
      : 'not blocked (trusted author, or text kept out of the prompt)';
  return { action: overall.action, reason: overall.reason.replace('warn mode, not blocked', why) };
}

interface Classified {
  findings: Finding[];
  /** The run must be blocked: a required classifier could not answer. */
  failure?: Judgement;
  /** A classifier that is not required could not answer. */
  warning?: string;
}

async function classifyFields(
  deps: GateDeps,
  screening: ScreeningSettings,
  fields: readonly ScreenField[],
  signal: AbortSignal,
  unvouched: string,
): Promise<Classified> {
  const settings = screening.classifier;
  const mustBlock = screening.required && screening.mode === 'block';
  const classifier = deps.classifier(settings);
  if (!classifier) {
    if (!mustBlock) return { findings: [], warning: 'screened without a classifier (required = false)' };
    return {
      findings: [],
      failure: {
        action: 'block',
        reason: `blocked: ${unvouched}, so a classifier must screen it, and ${missingClassifier()}`,
      },
    };
  }
  try {
    const scores = await withTimeout(
      (inner) =>
        classifier.classify(
          fields.map((f) => f.text),
          { timeoutMs: settings.timeoutSeconds * 1000, signal: inner },
        ),
      settings.timeoutSeconds * 1000,
      signal,
    );
    if (scores.length !== fields.length)
      throw new Error(`answered ${scores.length} scores for ${fields.length} texts`);
    return { findings: classifierFindings(fields, scores, settings.threshold, classifier.description) };
  } catch (error) {
    const kind =
      classifyFailure(error, { stage: 'screening' }).action === 'blocked' ? kindOf(error) : 'failed';
    const what = `the classifier (${classifier.description}) ${kind === 'timeout' ? `did not answer within ${settings.timeoutSeconds} s` : kind === 'missing' ? 'is missing' : 'failed'}: ${errorMessage(error)}`;
    if (!mustBlock) return { findings: [], warning: `${what} (not required, so not blocked)` };
    // The runners' messages end with the fix; a message that does not gets it here.
    const fix = what.includes('required = false')
      ? ''
      : '; fix the classifier (classifier_model / classifier_command / classifier_agent under [settings.screening]) or set required = false to accept the risk';
    return { findings: [], failure: { action: 'block', reason: `blocked: ${what}${fix}` } };
  }
}

function missingClassifier(): string {
  return 'no classifier is configured and screening requires one: set classifier_model (a folder with a Prompt Guard model.onnx and tokenizer.json) classifier_command (a program that scores texts) or classifier_agent = true (the automation’s own agent CLI, asked in a tool-free call) under [settings.screening], or set required = false there to accept the risk of screening with the deterministic scanners alone';
}

function kindOf(error: unknown): string {
  return (error as { kind?: string }).kind ?? 'failed';
}

/** Rejects with a timeout `ClassifierError` when `run` takes longer than `ms` (whatever the runner does). */
async function withTimeout<T>(
  run: (signal: AbortSignal) => Promise<T>,
  ms: number,
  outer: AbortSignal,
): Promise<T> {
  const controller = new AbortController();
  const onAbort = (): void => controller.abort(outer.reason);
  outer.addEventListener('abort', onAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(new ClassifierError('timeout', `no answer after ${ms / 1000} s`));
    }, ms);
  });
  try {
    return await Promise.race([run(controller.signal), timeout]);
  } finally {
    clearTimeout(timer);
    outer.removeEventListener('abort', onAbort);
  }
}

function classifierFindings(
  fields: readonly ScreenField[],
  scores: readonly number[],
  threshold: number,
  description: string,
): Finding[] {
  const { excerptOf } = scanners!; // loaded by gateTask before any classifier runs
  const findings: Finding[] = [];
  fields.forEach((field, i) => {
    const score = scores[i]!;
    if (!(score >= threshold)) return;
    findings.push({
      scanner: 'classifier',
      rule: 'score',
      severity: 'high',
      field: field.name,
      offset: 0,
      excerpt: `${description} scored ${score.toFixed(2)} ≥ ${threshold}: ${excerptOf(field.text, 0, Math.min(field.text.length, 80))}`,
    });
  });
  return findings;
}

export async function trustRules(deps: GateDeps, screening: ScreeningSettings): Promise<TrustRules> {
  const teams = await deps.teams.resolve(deps.github, teamsIn(screening.trustedAuthors), (team, error) =>
    deps.log.warn(
      { team, error: errorMessage(error) },
      'Could not read a trusted team; its members are not trusted',
    ),
  );
  return {
    trustedAuthors: screening.trustedAuthors,
    minAuthorAssociation: screening.minAuthorAssociation,
    teams,
  };
}

/** Who last applied one of the labels the automation matches on, and whether they are trusted. */
export interface Labeler {
  label: string;
  /** Undefined when the timeline shows no labeled event for it; null for a deleted account. */
  actor?: Actor | null;
  /** Why the actor is trusted; undefined when not. */
  trusted?: string;
}

/** An actor's association where the item shows it (as its author or a commenter). */
function knownAssociation(actor: Actor, context: ItemContext): Actor {
  if (actor.association !== undefined) return actor;
  const same = (other: Actor | null): boolean => other?.login.toLowerCase() === actor.login.toLowerCase();
  const association = same(context.author)
    ? context.author?.association
    : context.comments.find((c) => same(c.author))?.author?.association;
  return association === undefined ? actor : { ...actor, association };
}

/**
 * An actor's association where the item does not show it (a labeler, a commit's author): the repository's owner is OWNER; a
 * person with write or admin permission on the repository is (at least) a COLLABORATOR; anyone
 * else, or a permission that cannot be read, stays unknown (not trusted unless listed).
 */
async function actorAssociation(deps: GateDeps, repo: string, actor: Actor): Promise<Actor> {
  if (actor.bot) return actor;
  if (repo.split('/')[0]!.toLowerCase() === actor.login.toLowerCase())
    return { ...actor, association: 'OWNER' };
  try {
    const { permission } = await getCollaboratorPermission(deps.github(), repo, actor.login);
    return permission === 'admin' || permission === 'write'
      ? { ...actor, association: 'COLLABORATOR' }
      : actor;
  } catch (error) {
    deps.log.warn(
      { repo, login: actor.login, error: errorMessage(error) },
      "Could not read a person's permission on the repository; they do not vouch for the item",
    );
    return actor;
  }
}

/**
 * The author as GitHub shows them, or, where the source shows no association (a commit's author),
 * their permission on the repository looked up as a labeler's is: a commit on the branch by a
 * writer is vouched for, one by a stranger is not.
 */
async function authorWithAssociation(
  deps: GateDeps,
  target: ScreenTarget,
  author: Actor | null,
  rules: TrustRules,
): Promise<Actor | null> {
  const repo = target.repository ?? target.source?.repo;
  if (!author || author.association !== undefined || author.bot || !repo) return author;
  if (trustReason(author, rules) !== undefined) return author;
  return actorAssociation(deps, repo, author);
}

/** Each matching label's last labeler and their trust (read from the timeline, once per dispatch). */
async function labelersOf(
  deps: GateDeps,
  target: ScreenTarget,
  context: ItemContext,
  rules: TrustRules,
): Promise<Labeler[]> {
  const out: Labeler[] = [];
  const looked = new Map<string, Promise<Actor>>();
  for (const label of target.labels) {
    const event = context.labelEvents.findLast((e) => e.label.toLowerCase() === label.toLowerCase());
    if (!event) {
      out.push({ label });
      continue;
    }
    let actor = event.actor ? knownAssociation(event.actor, context) : null;
    // The author's association is what GitHub says of them; anyone else who labelled the item and
    // is not trusted by what the item shows (their association as a commenter, if any) is looked up.
    const isAuthor = actor?.login.toLowerCase() === context.author?.login.toLowerCase();
    if (actor && !isAuthor && trustReason(actor, rules) === undefined && target.source) {
      const key = actor.login.toLowerCase();
      if (!looked.has(key)) looked.set(key, actorAssociation(deps, target.source.repo, actor));
      actor = await looked.get(key)!;
    }
    const trusted = trustReason(actor, rules);
    out.push({ label, actor, ...(trusted ? { trusted } : {}) });
  }
  return out;
}

/** Why the item is vouched for (its author, or every matching label's labeler), or undefined. */
export function vouchOf(
  author: Actor | null,
  rules: TrustRules,
  target: ScreenTarget,
  labelers: readonly Labeler[],
): string | undefined {
  const byAuthor = trustReason(author, rules);
  if (byAuthor) return `author @${author!.login}: ${byAuthor}`;
  if (target.labels.length === 0 || labelers.some((l) => !l.trusted)) return undefined;
  return labelers.map((l) => `'${l.label}' applied by @${l.actor!.login}: ${l.trusted}`).join('; ');
}

function unvouchedWhy(
  author: Actor | null,
  labelers: readonly Labeler[],
  screening: ScreeningSettings,
): string {
  const who = author
    ? `its author @${author.login} (association ${author.association ?? 'unknown'}, below ${screening.minAuthorAssociation}, and not in trusted_authors) is not trusted`
    : 'its author is no GitHub account (a git identity GitHub matched to no user, or a deleted user)';
  const labels =
    labelers.length === 0
      ? 'the automation matches on no label'
      : labelers
          .filter((l) => !l.trusted)
          .map((l) =>
            l.actor === undefined
              ? `the timeline does not show who applied '${l.label}'`
              : `'${l.label}' was applied by @${l.actor?.login ?? 'ghost'}, who is not trusted`,
          )
          .join('; ');
  return `the item is not vouched for: ${who} and ${labels}`;
}

function labelerProblem(
  id: string,
  target: ScreenTarget,
  labelers: readonly Labeler[],
  screening: ScreeningSettings,
): string | undefined {
  if (target.labels.length === 0)
    return `require_trusted_labeler: automation '${id}' matches on no label, so no labeler can be checked`;
  for (const { label, actor, trusted } of labelers) {
    if (actor === undefined)
      return `require_trusted_labeler: the item's timeline does not show who applied '${label}'`;
    if (!trusted)
      return `require_trusted_labeler: '${label}' was applied by @${actor?.login ?? 'ghost'}, who is not trusted (not in trusted_authors, and association ${actor?.association ?? 'unknown'} is below ${screening.minAuthorAssociation})`;
  }
  return undefined;
}

function screenFields(
  target: ScreenTarget,
  author: Actor | null,
  comments: readonly ContextComment[],
): ScreenField[] {
  const fields: ScreenField[] = [
    { name: 'title', text: target.title },
    { name: 'body', text: target.body },
    { name: 'author', text: author?.login ?? '' },
  ];
  if (target.headBranch !== undefined) fields.push({ name: 'head_branch', text: target.headBranch });
  comments.forEach((c, i) => {
    fields.push({ name: `comment[${i}]`, text: c.body });
  });
  return fields;
}

/** sha256 over every screened field: the exact text an allowance lets through. */
export function digestOf(fields: readonly ScreenField[]): string {
  return createHash('sha256')
    .update(JSON.stringify(fields.map((f) => [f.name, f.text])))
    .digest('hex');
}

/** Trusted comments as one prompt field: each headed by its author, association and time. */
export function renderComments(comments: readonly ContextComment[]): string {
  return comments
    .map(
      (c) =>
        `@${c.author?.login ?? 'ghost'} (${c.author?.association ?? 'NONE'}, ${c.createdAt}):\n${c.body}`,
    )
    .join('\n\n');
}

function withComments(task: Task, comments: string): Task {
  return { ...task, item: { ...task.item, volatile: { ...(task.item.volatile ?? {}), comments } } };
}

async function recordRun(
  deps: GateDeps,
  automation: ResolvedAutomation,
  task: Task,
  status: RunRecord['status'],
  reason: string,
  extra: Partial<Parameters<Store['createRun']>[0]> = {},
): Promise<RunRecord> {
  const run = await deps.store.createRun({ ...runInit(automation, task, status), reason, ...extra });
  return deps.store.updateRun(run.id, { finishedAt: new Date(deps.clock.now()).toISOString() });
}
