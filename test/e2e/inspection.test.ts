/**
 * Issue 29, item 5, end to end (the simulator, real git, the fake agents): a prompt that names no
 * item gets the item appended (here its body carries the fake agent's directive, so the agent only
 * commits if the body reached it); `keep_worktree = "always"` keeps the worktree of a delivered
 * run, `runs show` says so; `transcript_in_worktree = true` leaves the transcript in it at
 * `.curupira/transcript.jsonl`, and the pushed branch does not carry it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { NO_CHANGES_REASON } from '../../src/core/outcome.js';
import { git } from '../../src/workspace/git.js';
import {
  createHarness,
  deliveredBranch,
  type Harness,
  issueAutomation,
  onlyRun,
  runBuiltCli,
} from '../helpers/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

describe('a kept worktree with its transcript, from a prompt that names no item', () => {
  it('appends the item, keeps the worktree after delivery, and never pushes the transcript', async () => {
    h = await createHarness({
      issues: [{ title: 'Broken start', body: 'It crashes. [[fake:commit]]', labels: ['agent-ready'] }],
      automation: issueAutomation('fix', {
        prompt: 'Fix the bug described below.',
        extra: 'deliver = "branch"\nkeep_worktree = "always"\ntranscript_in_worktree = true',
      }),
    });
    const run = onlyRun((await h.run()).runs);
    expect(run.status, run.reason ?? '').toBe('succeeded');
    expect(run.prompt).toMatch(
      /^Fix the bug described below\.\n\nThe item this task is about:\nNumber: 1\nTitle: /,
    );
    expect(run.prompt).toContain('It crashes. [[fake:commit]]');
    // Kept, with the transcript inside, though its commit was pushed.
    expect(run.worktreeKept).toBe(true);
    const worktree = run.worktreePath!;
    const copy = join(worktree, '.curupira', 'transcript.jsonl');
    expect(readFileSync(copy, 'utf8')).toBe(readFileSync(run.transcriptPath!, 'utf8'));
    expect(readFileSync(copy, 'utf8').length).toBeGreaterThan(0);
    expect(await git(['status', '--porcelain'], { cwd: worktree })).toBe('');
    const branch = deliveredBranch(run);
    const pushed = await git(['ls-tree', '-r', '--name-only', `refs/heads/${branch}`], { cwd: h.origin.url });
    expect(pushed.split('\n').filter(Boolean).length).toBeGreaterThan(1);
    expect(pushed).not.toContain('.curupira');
    const show = await runBuiltCli(['--config', h.settingsFile, 'runs', 'show', run.id], { env: h.env });
    expect(show.code, show.stderr).toBe(0);
    expect(show.stdout).toContain(
      `  worktree:    ${worktree} (kept for inspection: keep_worktree = "always"; \`curupira gc\` removes it)`,
    );
    const gc = await runBuiltCli(['--config', h.settingsFile, 'gc', '--all', '--yes'], { env: h.env });
    expect(gc.code, gc.stdout + gc.stderr).toBe(0);
    expect(existsSync(worktree)).toBe(false);
  }, 90_000);

  it('still says "no changes" for a kept worktree the agent left clean', async () => {
    h = await createHarness({
      issues: [{ title: 'Nothing to do', body: 'Look only.', labels: ['agent-ready'] }],
      automation: issueAutomation('fix', {
        prompt: 'Look at ${issue_title}',
        extra: 'keep_worktree = "always"',
      }),
    });
    const run = onlyRun((await h.run()).runs);
    expect(run.status).toBe('succeeded');
    expect(run.worktreeKept).toBe(true);
    expect(existsSync(run.worktreePath!)).toBe(true);
    expect(run.reason).toBe(NO_CHANGES_REASON);
  }, 60_000);
});
