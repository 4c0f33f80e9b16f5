/**
 * The second half of `curupira demo`: the pull request the demo's run delivered, followed to its
 * end, offline. Scripted people act in the simulator (a reviewer with write access asks for a change,
 * CI reports a check run, the reviewer approves) and the real engine answers each of them as
 * `curupira run --watch` would: its follower reads the pull request, starts a remediation run that
 * resumes the agent's session and pushes to the same branch, merges (`merge = "auto"`) and closes
 * the issue.
 *
 * A watch-mode engine looks at each delivered pull request at its first sweep, then once per
 * `follow_interval` (at least 10 s). So that the demo takes seconds, each look is a watch-mode engine
 * of its own, stopped as soon as what the demo waits for happened: the same code and the same state
 * file, without the waiting.
 */
import type { Settings } from '../config/types.js';
import type { RunRecord } from '../core/types.js';
import { REMEDIATION_MARKS } from '../delivery/remediation.js';
import { MERGE_MARKS } from '../delivery/steps/merge.js';
import { type EngineOptions, runEngine } from '../features.js';
import { simChecks } from '../simulator/checks.js';
import { setPermission, submitReview } from '../simulator/reviews.js';
import type { SimWorld } from '../simulator/world.js';
import { openStore, stateLocation } from '../store/index.js';
import type { PullRequestRecord, Store } from '../store/types.js';
import { git } from '../workspace/index.js';
import { type CliIo, writeLine } from './io.js';

/** The demo's reviewer: a person with write access, so curupira acts on what she says. */
export const DEMO_REVIEWER = 'mona';

/** How long one look may take before the demo gives up (a remediation runs the scripted agent). */
const LOOK_LIMIT_MS = 60_000;

export interface DemoLoopDeps {
  io: CliIo;
  settings: Settings;
  world: SimWorld;
  /** `owner/name` of the demo repository. */
  repo: string;
  /** The bare repository behind it (the settings' `remote`). */
  remote: string;
  /** The engine's options for one look (mode, stop signal and onRun are set here). */
  engine(store: Store): Omit<EngineOptions, 'mode' | 'stopSignal' | 'onRun'>;
}

export interface DemoLoopResult {
  ok: boolean;
  /** The remediation run, once it ran. */
  remediation?: RunRecord;
}

const short = (sha: string | null | undefined) => (sha ? sha.slice(0, 7) : '-');

/**
 * One look at the delivered pull requests: a watch-mode engine until `until` holds, then stopped.
 * Returns the runs it finished (a remediation run, when one was started).
 */
async function look(
  deps: DemoLoopDeps,
  what: string,
  until: (store: Store) => Promise<boolean>,
): Promise<RunRecord[]> {
  const store = await openStore(stateLocation(deps.settings.execution));
  const stop = new AbortController();
  const runs = new Map<string, RunRecord>();
  let ended = false;
  let failure: unknown;
  const done = runEngine({
    ...deps.engine(store),
    mode: 'watch',
    stopSignal: stop.signal,
    onRun: (run) => runs.set(run.id, run),
  }).then(
    () => {
      ended = true;
    },
    (error: unknown) => {
      ended = true;
      failure = error;
    },
  );
  try {
    const giveUpAt = Date.now() + LOOK_LIMIT_MS;
    while (!(await until(store))) {
      if (ended) throw failure instanceof Error ? failure : new Error(`the engine stopped before ${what}`);
      if (Date.now() > giveUpAt)
        throw new Error(
          `${what} did not happen within ${LOOK_LIMIT_MS / 1000} s (see the log in the state folder)`,
        );
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  } finally {
    stop.abort();
    await done;
    await store.close();
  }
  return [...runs.values()];
}

async function delivery(deps: DemoLoopDeps, runId: string): Promise<PullRequestRecord | undefined> {
  const store = await openStore(stateLocation(deps.settings.execution));
  try {
    return await store.getPullRequest(runId);
  } finally {
    await store.close();
  }
}

/** Commits of `branch` not on `base`, newest first, as `sha7 subject`. */
async function branchCommits(remote: string, base: string, branch: string): Promise<string[]> {
  const out = await git(['log', '--format=%h %s', `${base}..${branch}`], { cwd: remote }).catch(() => '');
  return out.split('\n').filter(Boolean);
}

/**
 * Follows the pull request `deliveryRun` opened through review, remediation, green checks and the
 * merge, printing each step. `step` is the number of the demo's next printed step.
 */
export async function followDemoPullRequest(
  deps: DemoLoopDeps,
  deliveryRun: RunRecord,
  step: number,
): Promise<DemoLoopResult> {
  const { io, world, repo } = deps;
  const say = (line: string) => writeLine(io.stdout, line);
  const opened = await delivery(deps, deliveryRun.id);
  if (!opened || opened.number === null) {
    say(`${step}. No pull request was opened, so there is nothing to follow.`);
    return { ok: false };
  }
  const number = opened.number;
  const base = opened.baseBranch ?? 'main';
  const branch = opened.headBranch;
  setPermission(world, repo, DEMO_REVIEWER, 'write');

  say(
    `${step}. Following ${world.pullRequest(repo, number)?.isDraft ? 'draft ' : ''}pull request #${number}, as \`curupira run --watch\` and \`curupira serve\` do every follow_interval seconds (the demo looks at once after each scripted event):`,
  );
  const feedback = 'Please also show "(unnamed)" when the name is an empty string. [[fake:commit]]';
  submitReview(world, repo, number, {
    author: DEMO_REVIEWER,
    state: 'CHANGES_REQUESTED',
    body: feedback,
    comments: [{ path: 'src/widgets/list.ts', line: 2, body: 'An empty name slips through here.' }],
  });
  say(`   a. @${DEMO_REVIEWER} (write access on ${repo}, so curupira listens) requests changes:`);
  say(`        ${JSON.stringify(feedback)}`);
  say('        src/widgets/list.ts:2 "An empty name slips through here."');
  say('      ([[fake:commit]] tells the scripted agent to commit; a real agent reads the review itself.)');

  const handled = async (store: Store) =>
    (await store.listPullRequestMarks(deliveryRun.id)).some((m) => m.key.startsWith('handled:')) &&
    (await store.getPullRequestMark(deliveryRun.id, REMEDIATION_MARKS.action)) === undefined;
  const runs = await look(deps, 'the remediation run', handled);
  const remediation = runs.find((r) => r.upstreamRunId === deliveryRun.id);
  const afterRemediation = await delivery(deps, deliveryRun.id);
  if (!remediation) {
    say('   b. curupira started no remediation run.');
    return { ok: false };
  }
  const sameSession = remediation.sessionId === deliveryRun.sessionId;
  const fenced = fencedOnly(remediation.prompt ?? '', 'an empty string');
  say(
    `   b. curupira read the review (gate: ${afterRemediation?.gate ?? '-'}) and started remediation run ${remediation.id}: ${remediation.status}`,
  );
  say(
    `        it resumed agent session ${remediation.sessionId ?? '-'} (${sameSession ? 'the same session as' : 'NOT the session of'} run ${deliveryRun.id}), ${fenced ? 'the review fenced as untrusted data in its prompt' : 'the review NOT fenced in its prompt'}`,
  );
  const commits = await branchCommits(deps.remote, base, branch);
  say(
    `        and pushed ${short(afterRemediation?.headSha)} to ${branch} (fast-forward, never forced): pull request #${number} now has ${commits.length} commits:`,
  );
  for (const commit of commits) say(`          ${commit}`);
  if (
    remediation.status !== 'succeeded' ||
    !sameSession ||
    !fenced ||
    afterRemediation?.headSha === opened.headSha
  )
    return { ok: false, remediation };

  const head = afterRemediation!.headSha!;
  const checks = simChecks(world);
  const check = checks.addCheckRun(repo, { name: 'test', headSha: head, status: 'in_progress' });
  checks.updateCheckRun(repo, check.id, {
    status: 'completed',
    conclusion: 'success',
    output: { title: 'All tests pass', summary: '12 passed' },
  });
  say(`   c. CI (scripted): check run "test" on ${short(head)}: in progress, then success.`);
  submitReview(world, repo, number, { author: DEMO_REVIEWER, state: 'APPROVED' });
  const pr = world.pullRequest(repo, number);
  if (pr) pr.isDraft = false;
  say(`   d. @${DEMO_REVIEWER} approves, and marks the draft ready for review.`);

  // The merge step marks the head once GitHub answered (`merge:<sha>`: `merged <commit>` or
  // `refused: <why>`); the same look then ends the delivery (its state is written last) and closes
  // the issue through the write queue, when GitHub did not close it for the body's `Closes #N`.
  let attempt = '';
  await look(deps, 'the merge', async (store) => {
    attempt = (await store.getPullRequestMark(deliveryRun.id, MERGE_MARKS.attempt(head)))?.value ?? '';
    if (attempt.startsWith('refused')) return true;
    return (
      attempt !== '' &&
      (await store.getPullRequest(deliveryRun.id))?.state === 'merged' &&
      world.issue(repo, Number(deliveryRun.itemId))?.state === 'CLOSED'
    );
  });
  if (!attempt.startsWith('merged ') || world.pullRequest(repo, number)?.state !== 'MERGED') {
    say(`   e. curupira did not merge pull request #${number}: ${attempt}.`);
    return { ok: false, remediation };
  }
  const tip = (await git(['log', '-1', '--format=%h %s', base], { cwd: deps.remote }).catch(() => '')).trim();
  say(
    `   e. curupira saw it approved by @${DEMO_REVIEWER}, green and mergeable, and merged pull request #${number} (merge = "auto", ${mergeMethod(deps.settings)}): ${base} is now at ${tip || '-'}.`,
  );
  const store = await openStore(stateLocation(deps.settings.execution));
  let finalRun: RunRecord | undefined;
  try {
    finalRun = await store.getRun(deliveryRun.id);
  } finally {
    await store.close();
  }
  const issue = world.issue(repo, Number(deliveryRun.itemId));
  const issueState = issue
    ? `${issue.state.toLowerCase()}${issue.stateReason ? ` (${issue.stateReason.toLowerCase()})` : ''}`
    : 'not found';
  say(
    `   f. curupira read pull request #${number} merged and ended its delivery: run ${deliveryRun.id} is ${finalRun?.status ?? '-'}${finalRun?.reason ? ` (${finalRun.reason})` : ''}.`,
  );
  say(
    `      Issue #${deliveryRun.itemId}: ${issueState} (GitHub closes it for the body's \`Closes #${deliveryRun.itemId}\`; without one, curupira closes it).`,
  );
  return { ok: finalRun?.status === 'merged' && issue?.state === 'CLOSED', remediation };
}

/** Whether `text` is in `prompt` only inside its untrusted-data fences (src/prompt/untrusted.ts). */
function fencedOnly(prompt: string, text: string): boolean {
  const fence = /----- BEGIN UNTRUSTED DATA ([0-9a-f]+) -----\n[\s\S]*?----- END UNTRUSTED DATA \1 -----/g;
  const inside = [...prompt.matchAll(fence)].some((m) => m[0].includes(text));
  return inside && !prompt.replace(fence, '').includes(text);
}

function mergeMethod(settings: Settings): string {
  const config = settings.automations[0]?.config as { merge_method?: string } | undefined;
  return config?.merge_method ?? 'squash';
}
