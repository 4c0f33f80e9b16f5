import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSettingsFromText } from '../config/load.js';
import type { RunRecord } from '../core/types.js';
import { openStore } from '../store/index.js';
import type { PullRequestRecord } from '../store/types.js';
import { deliveryLines, runLines } from './runs.js';
import { runCliCaptured } from './testing.js';

const dir = mkdtempSync(join(tmpdir(), 'curupira-runs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = join(dir, 'settings.toml');
const statePath = join(dir, 'state', 'state.sqlite3');
writeFileSync(
  file,
  `[settings]
state_db_path = "state/state.sqlite3"
[repositories.api]
remote = "https://github.com/acme/api.git"
[automations.fix]
repository = "api"
repo = "acme/api"
prompt = "Fix \${issue_number}"
`,
);

let runs: RunRecord[] = [];
beforeAll(async () => {
  let now = Date.parse('2026-03-01T10:00:00.000Z');
  const store = await openStore(statePath, { now: () => now });
  for (const [n, status] of [
    ['1', 'succeeded'],
    ['2', 'succeeded'],
  ] as const) {
    const run = await store.createRun({
      automationId: 'fix',
      taskKey: `fix:issue:${n}`,
      repo: 'acme/api',
      taskType: 'issue',
      itemId: n,
      itemKey: `issue:${n}`,
      itemTitle: `Issue ${n}`,
      itemUrl: `https://github.com/acme/api/issues/${n}`,
      status,
    });
    runs.push(run);
    now += 90_000;
  }
  await store.close();
  runs = runs.reverse(); // newest first, as listed
});

describe('curupira runs', () => {
  it('lists runs under a header that says times are UTC', async () => {
    const result = await runCliCaptured(['runs', '-c', file]);
    expect(result.code).toBe(0);
    expect(result.stdout.split('\n')).toEqual([
      'ID                    STATUS     CREATED (UTC)        TIME  COST  AUTOMATION  ITEM        TITLE',
      `${runs[0]!.id}  succeeded  2026-03-01 10:01:30     -     –  fix         acme/api#2  "Issue 2"`,
      `${runs[1]!.id}  succeeded  2026-03-01 10:00:00     -     –  fix         acme/api#1  "Issue 1"`,
      '',
    ]);
  });

  it('says no runs match a filter, rather than that there are none', async () => {
    const failed = await runCliCaptured(['runs', '-c', file, '--status', 'failed']);
    expect(failed).toEqual({
      code: 0,
      stdout: 'No runs match --status failed; `curupira runs` lists them all.\n',
      stderr: '',
    });
    const other = await runCliCaptured([
      'runs',
      '-c',
      file,
      '--automation',
      'fix',
      '--status',
      'failed,timed_out',
    ]);
    expect(other.stdout).toBe(
      'No runs match --automation fix --status failed,timed_out; `curupira runs` lists them all.\n',
    );
  });

  it('says "No runs yet." when the history is empty', async () => {
    const empty = join(dir, 'empty.toml');
    writeFileSync(
      empty,
      `[settings]\nstate_db_path = "none/state.sqlite3"\n${'[repositories.api]\nremote = "https://github.com/acme/api.git"\n[automations.fix]\nrepository = "api"\nrepo = "acme/api"\nprompt = "x"\n'}`,
    );
    const result = await runCliCaptured(['runs', '-c', empty, '--status', 'failed']);
    expect(result.stdout).toBe('No runs yet.\n');
  });

  it('never writes the state file or creates files beside it', async () => {
    const mtime = statSync(statePath).mtimeMs;
    const files = readdirSync(join(dir, 'state')).sort();
    await runCliCaptured(['runs', '-c', file]);
    await runCliCaptured(['runs', 'show', runs[0]!.id, '-c', file]);
    expect(readdirSync(join(dir, 'state')).sort()).toEqual(files);
    expect(statSync(statePath).mtimeMs).toBe(mtime);
  });
});

describe('curupira runs show', () => {
  it('accepts a unique id prefix, in any case', async () => {
    const id = runs[0]!.id;
    const full = await runCliCaptured(['runs', 'show', id, '-c', file]);
    expect(full.code).toBe(0);
    expect(full.stdout.split('\n')[0]).toBe(`run ${id}`);
    expect(full.stdout).toContain('  created:     2026-03-01T10:01:30.000Z (times are UTC)');
    // The ids share their time-ordered head; the first character where they differ makes a prefix unique.
    const other = runs[1]!.id;
    let n = 0;
    while (id[n] === other[n]) n += 1;
    const prefix = id.slice(0, n + 1).toLowerCase();
    const short = await runCliCaptured(['runs', 'show', prefix, '-c', file]);
    expect(short).toEqual(full);
  });

  it('lists the candidates when a prefix is ambiguous, exit 1', async () => {
    const result = await runCliCaptured(['runs', 'show', 'r_', '-c', file]);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines[0]).toBe('Run id prefix r_ is ambiguous; it matches:');
    expect(lines[1]).toMatch(/^ {2}ID +STATUS/);
    expect(lines.slice(2).map((l) => l.trim().split(' ')[0])).toEqual(runs.map((r) => r.id));
  });

  it('says so when nothing has that id', async () => {
    const result = await runCliCaptured(['runs', 'show', 'r_ZZZ', '-c', file]);
    expect(result).toEqual({
      code: 1,
      stdout: '',
      stderr: 'No run with id r_ZZZ; `curupira runs` lists them.\n',
    });
  });
});

describe('deliveryLines', () => {
  const record: PullRequestRecord = {
    runId: 'r_1',
    automationId: 'fix',
    taskKey: 'issue:1',
    repo: 'acme/api',
    delivery: 'pr',
    headBranch: 'curupira/fix/github-issues-1',
    headSha: '3416e04a636e0000000000000000000000000000',
    baseBranch: 'main',
    number: 2,
    url: 'https://github.com/acme/api/pull/2',
    adopted: false,
    state: 'open',
    detail: null,
    since: '2026-12-01T16:07:20.544Z',
    gate: 'changes_requested',
    gateSince: '2026-12-01T16:09:00.000Z',
    gateDetail: 'changes requested by @alice',
    createdAt: '2026-12-01T16:07:20.544Z',
    updatedAt: '2026-12-01T16:09:00.000Z',
  };

  it('shows the follow-up gate of an open pull request: what the follower waits for', () => {
    expect(deliveryLines(record)).toEqual([
      '  pushed:      curupira/fix/github-issues-1 at 3416e04a636e (pull request)',
      '  pull req.:   #2 https://github.com/acme/api/pull/2 open since 2026-12-01T16:07:20.544Z',
      '  follow-up:   changes requested since 2026-12-01T16:09:00.000Z: changes requested by @alice',
    ]);
  });

  it('shows no gate once the pull request is merged', () => {
    const lines = deliveryLines({ ...record, state: 'merged', detail: 'merged at 2026-12-01T17:00:00Z' });
    expect(lines.at(-1)).toBe('  delivery:    merged at 2026-12-01T17:00:00Z');
    expect(lines.join('\n')).not.toContain('follow-up:');
  });
});

describe('runs show: a kept worktree', () => {
  it('says a worktree kept by keep_worktree = "always" is kept for inspection and that gc removes it', () => {
    const text = (keep: string) =>
      loadSettingsFromText(
        `[repositories.api]
remote = "https://github.com/acme/api.git"
[automations.fix]
repository = "api"
repo = "acme/api"
labels = ["ready"]
prompt = "Fix \${issue_number}"
${keep}
`,
        join(dir, 'keep.toml'),
      ).settings.automations;
    const always = text('keep_worktree = "always"');
    const run: RunRecord = {
      ...runs[0]!,
      taskType: always[0]!.triggerType,
      worktreePath: '/w/api.worktrees/fix/x',
      worktreeKept: true,
      commits: 0,
    };
    const line = (automations: typeof always, record: RunRecord = run) =>
      runLines(record, undefined, [], undefined, automations).find((l) => l.startsWith('  worktree:'));
    expect(line(always)).toBe(
      '  worktree:    /w/api.worktrees/fix/x (kept for inspection: keep_worktree = "always"; `curupira gc` removes it)',
    );
    expect(line(text(''))).toBe(
      '  worktree:    /w/api.worktrees/fix/x (kept: 0 unpushed commits or uncommitted changes)',
    );
    expect(line(always, { ...run, worktreeKept: false })).toBe(
      '  worktree:    /w/api.worktrees/fix/x (removed)',
    );
  });
});
