/**
 * Issue 13 (conflicts and a moving base, end to end): a real engine in watch mode follows the pull
 * request it delivered (simulator backed by a bare repository, real git, the fake agent). The base
 * then changes the very file the agent added: GitHub (git) says the pull request cannot merge, and
 * curupira posts one notice for that (head, base) pair, needs a person (`resolve_conflicts` off),
 * notifies `needs_human` once; it never rewrites a branch (the bare repository's reflogs show only
 * fast-forwards).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Engine } from '../../src/engine/engine.js';
import type { NotificationEvent, Notifier } from '../../src/notify/index.js';
import { commitToBranch, forcedUpdates } from '../../src/simulator/merging.js';
import { git } from '../../src/workspace/git.js';
import { createHarness, type Harness, issueAutomation, onlyRun, waitFor } from '../helpers/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

function recordingNotifier(events: NotificationEvent[]): Notifier {
  const double = {
    notify: async (event: NotificationEvent) => {
      events.push(event);
      return [];
    },
    run: async () => undefined,
    drain: async () => undefined,
  };
  return double as unknown as Notifier;
}

describe('a delivered pull request whose base comes to conflict with it', () => {
  it('one notice per (head, base) pair, needs a person, notified once; nothing forced', async () => {
    h = await createHarness({
      issues: [{ title: 'Conflict [[fake:commit]]', body: 'Please fix.', labels: ['agent-ready'] }],
      automation: issueAutomation('fix', { prompt: '${issue_title}', extra: 'deliver = "pr"' }),
      settingsExtra: '[settings.polling]\npoll_interval_seconds = 0.2',
    });
    const run = onlyRun((await h.run()).runs);
    expect(run.status).toBe('succeeded');
    const gitDir = h.origin.url;
    // The file the agent added, added on the base too with other content: an add/add conflict.
    const [file] = (await git(['diff', '--name-only', `main...${run.branch}`], { cwd: gitDir }))
      .trim()
      .split('\n');
    expect(file).toMatch(/^fake-claude-/);
    const base = commitToBranch(gitDir, 'main', { [file!]: 'the base wrote this first\n' });
    const head = (await git(['rev-parse', `refs/heads/${run.branch}`], { cwd: gitDir })).trim();

    const events: NotificationEvent[] = [];
    const store = await h.openStore();
    const stop = new AbortController();
    const engine = new Engine({
      ...h.engineOptions(store, { mode: 'watch', stop: stop.signal }),
      notifier: recordingNotifier(events),
    });
    const done = engine.run();
    const harness = h;
    try {
      await waitFor(
        'the conflict notice',
        async () =>
          (await store.getPullRequest(run.id))?.gate === 'needs_human' &&
          harness.world.item('acme/api', 2)!.comments.length > 0,
        30_000,
      );
    } finally {
      stop.abort();
      await done;
    }
    const delivery = (await store.getPullRequest(run.id))!;
    await store.close();
    expect(delivery).toMatchObject({ state: 'open', gate: 'needs_human' });
    expect(delivery.gateDetail).toContain('resolve_conflicts is off');
    const comments = h.world.item('acme/api', 2)!.comments;
    expect(comments).toHaveLength(1);
    expect(comments[0]!.body).toContain(`<!-- curupira:conflict run=${run.id} pair=${head}..${base} -->`);
    expect(comments[0]!.body).toContain(`merge \`main\` into the branch`);
    expect(events.map((e) => [e.event, e.id])).toEqual([
      ['needs_human', `pr:${run.id}:conflict:${head}..${base}`],
    ]);
    expect(forcedUpdates(gitDir)).toEqual([]);
  }, 90_000);
});
