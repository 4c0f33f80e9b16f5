/**
 * `curupira gc` in process, on a real checkout and state file: what it lists, `--json`, and the
 * question (or `--yes`) before it deletes work found nowhere else.
 */
import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { identityKey } from '../core/types.js';
import { silentLogger } from '../log.js';
import { openStore } from '../store/index.js';
import { branchExists } from '../workspace/git.js';
import { ensureCheckout, finishWorktree, prepareWorktree, worktreePath } from '../workspace/index.js';
import { commitFiles, createOrigin, isolateGitForTests, type OriginRepo } from '../workspace/testing.js';
import type { CliIo } from './io.js';
import { runCli } from './program.js';

const log = silentLogger();
let origin: OriginRepo | undefined;

beforeAll(() => isolateGitForTests());
afterEach(async () => {
  await origin?.cleanup();
  origin = undefined;
});

interface World {
  settingsFile: string;
  checkoutPath: string;
  statePath: string;
}

async function world(): Promise<World> {
  origin = await createOrigin();
  const dir = origin.dir;
  const checkoutPath = join(dir, 'workspaces', 'api');
  const statePath = join(dir, 'state', 'state.sqlite3');
  const settingsFile = join(dir, 'settings.toml');
  await writeFile(
    settingsFile,
    `[settings]
workspace_dir = "${join(dir, 'workspaces')}"
state_db_path = "${statePath}"

[repositories.api]
remote = "file://${origin.url}"

[agents.defaults]
profile = "main"

[agents.profiles.main]
provider = "claude"

[automations.fix]
trigger_type = "github-issues"
repository = "api"
repo = "acme/api"
labels = ["agent-ready"]
prompt = "Fix it"
`,
  );
  await ensureCheckout({
    alias: 'api',
    remote: `file://${origin.url}`,
    path: checkoutPath,
    timeoutMs: 20_000,
    log,
  });
  return { settingsFile, checkoutPath, statePath };
}

/** A worktree the run kept because it holds one unpushed commit. */
async function keptWithCommit(w: World, taskId: string) {
  const made = await prepareWorktree({
    checkoutPath: w.checkoutPath,
    automationId: 'fix',
    taskType: 'github-issues',
    taskId,
    log,
  });
  await commitFiles(made.path, { 'fix.txt': 'the fix' });
  expect((await finishWorktree({ checkoutPath: w.checkoutPath, ...made, log })).kept).toBe(true);
  return made;
}

interface Captured {
  io: CliIo;
  out: () => string;
  err: () => string;
  stdin: PassThrough & { isTTY?: boolean };
}

function capture(options: { terminal?: boolean } = {}): Captured {
  const stdout = Object.assign(new PassThrough(), { isTTY: options.terminal ?? false });
  const stderr = new PassThrough();
  const stdin = Object.assign(new PassThrough(), { isTTY: options.terminal ?? false });
  let out = '';
  let err = '';
  stdout.on('data', (chunk) => {
    out += String(chunk);
  });
  stderr.on('data', (chunk) => {
    err += String(chunk);
  });
  return {
    io: { stdout, stderr, stdin, env: {}, cwd: process.cwd(), programName: 'curupira' },
    out: () => out,
    err: () => err,
    stdin,
  };
}

async function gc(
  w: World,
  args: string[],
  c = capture(),
): Promise<{ code: number; out: string; err: string }> {
  const code = await runCli(['--config', w.settingsFile, 'gc', ...args], c.io);
  return { code, out: c.out(), err: c.err() };
}

describe('curupira gc', () => {
  it('lists a folder at a task’s worktree path that git does not know, even when a saved session names it', async () => {
    const w = await world();
    const target = worktreePath(w.checkoutPath, 'fix', 'github-issues', '5');
    await mkdir(target, { recursive: true });
    await writeFile(join(target, 'left.txt'), 'by a kill');
    const store = await openStore(w.statePath);
    const identity = { automationId: 'fix', repo: 'acme/api', taskType: 'github-issues', id: '5' };
    const key = identityKey(identity);
    await store.saveSession({
      taskKey: key,
      automationId: 'fix',
      runId: 'r_0000000000AAAAAAAA',
      provider: 'claude',
      profile: 'main',
      sessionId: 's-5',
      prompt: 'Fix it',
      promptTemplateHash: 'h',
      task: {
        identity,
        key,
        fingerprint: 'f',
        item: { id: '5', title: 't', url: 'u', body: '', fields: {}, itemKey: 'issue:5' },
      },
      worktreePath: target,
      branch: null,
      createdAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-01T00:00:00.000Z',
    });
    await store.close();

    const listed = await gc(w, []);
    expect(listed.out).toContain(
      `keep         ${target} (not a worktree git knows; no branch; files git does not track; untouched for`,
    );
    expect(listed.out).toContain('1 kept worktree; remove with --older-than AGE or --all');
    const removed = await gc(w, ['--all', '--yes']);
    expect(removed.code).toBe(0);
    expect(removed.out).toContain('Removed 1 worktree.');
    expect(existsSync(target)).toBe(false);
  });

  // Found from outside: an operator-cancelled run's worktree held an unpushed commit, and gc said
  // "No kept worktrees."
  it('lists a saved session’s worktree holding work as held, and never removes it', async () => {
    const w = await world();
    const made = await keptWithCommit(w, '6');
    const store = await openStore(w.statePath);
    const identity = { automationId: 'fix', repo: 'acme/api', taskType: 'github-issues', id: '6' };
    const key = identityKey(identity);
    await store.saveSession({
      taskKey: key,
      automationId: 'fix',
      runId: 'r_0000000000BBBBBBBB',
      provider: 'claude',
      profile: 'main',
      sessionId: 's-6',
      prompt: 'Fix it',
      promptTemplateHash: 'h',
      task: {
        identity,
        key,
        fingerprint: 'f',
        item: { id: '6', title: 't', url: 'u', body: '', fields: {}, itemKey: 'issue:6' },
      },
      worktreePath: made.path,
      branch: made.branch,
      createdAt: '2026-01-01T00:00:00.000Z',
      updatedAt: '2026-01-01T00:00:00.000Z',
    });
    await store.close();
    const listed = await gc(w, []);
    expect(listed.out).toContain(
      `held         ${made.path} (${made.branch}; 1 unpushed commit; untouched for`,
    );
    expect(listed.out).toContain('never removed by gc');
    expect(listed.out).toContain('No other kept worktrees.');
    const json = JSON.parse((await gc(w, ['--json'])).out) as {
      held: { path: string; unpushedCommits: number }[];
    };
    expect(json.held).toEqual([expect.objectContaining({ path: made.path, unpushedCommits: 1 })]);
    const all = await gc(w, ['--all', '--yes']);
    expect(all.code).toBe(0);
    expect(existsSync(made.path)).toBe(true);
  });

  it('without a terminal and without --yes, refuses to delete worktrees holding unpushed commits and says to pass --yes', async () => {
    const w = await world();
    const made = await keptWithCommit(w, '1');
    const refused = await gc(w, ['--all']);
    expect(refused.code).toBe(1);
    expect(refused.out).toContain(`refused      ${made.path} (${made.branch}; 1 unpushed commit;`);
    expect(refused.err).toContain(
      'Did not remove 1 worktree holding unpushed commits or uncommitted changes: there is no terminal to ask. Pass --yes to remove them.',
    );
    expect(existsSync(made.path)).toBe(true);
    expect(await branchExists(w.checkoutPath, made.branch)).toBe(true);

    const yes = await gc(w, ['--all', '--yes']);
    expect(yes.code).toBe(0);
    expect(yes.out).toContain('Removed 1 worktree.');
    expect(await branchExists(w.checkoutPath, made.branch)).toBe(false);
  });

  it('on a terminal lists the worktrees holding work and asks; "n" keeps them, "y" deletes them', async () => {
    const w = await world();
    const made = await keptWithCommit(w, '1');
    const no = capture({ terminal: true });
    no.stdin.end('n\n');
    const declined = await gc(w, ['--all'], no);
    expect(declined.out).toContain('1 worktree to remove hold work found nowhere else:');
    expect(declined.out).toContain(`  ${made.path} (1 unpushed commit)`);
    expect(declined.out).toContain('Delete them and their branches? [y/N] ');
    expect(declined.out).toContain('Kept 1 worktree holding work, as answered.');
    expect(await branchExists(w.checkoutPath, made.branch)).toBe(true);

    const yes = capture({ terminal: true });
    yes.stdin.end('y\n');
    const accepted = await gc(w, ['--all'], yes);
    expect(accepted.code).toBe(0);
    expect(accepted.out).toContain('Removed 1 worktree.');
    expect(existsSync(made.path)).toBe(false);
    expect(await branchExists(w.checkoutPath, made.branch)).toBe(false);
  });

  it('prints JSON with --json: worktrees, stray files and what was done', async () => {
    const w = await world();
    const made = await keptWithCommit(w, '1');
    const gone = worktreePath(w.checkoutPath, 'fix', 'github-issues', '2');
    await writeFile(`${gone}.opencode.db`, 'sqlite');
    const listed = await gc(w, ['--json']);
    expect(listed.code).toBe(0);
    const data = JSON.parse(listed.out);
    expect(data).toMatchObject({
      worktrees: [
        {
          action: 'keep',
          kind: 'worktree',
          path: made.path,
          checkout: w.checkoutPath,
          automation: 'fix',
          branch: made.branch,
          unpushedCommits: 1,
          dirty: false,
          locked: false,
        },
      ],
      strayFiles: [{ action: 'keep', path: `${gone}.opencode.db`, worktree: gone, sizeBytes: 6 }],
      dryRun: false,
      removed: 0,
      refused: 0,
    });
    expect(typeof data.worktrees[0].untouchedSeconds).toBe('number');

    const refused = JSON.parse((await gc(w, ['--all', '--json'])).out);
    expect(refused).toMatchObject({
      worktrees: [{ action: 'refused' }],
      strayFiles: [{ action: 'remove' }],
      removed: 1,
      refused: 1,
    });
    expect(existsSync(`${gone}.opencode.db`)).toBe(false);
    const removed = JSON.parse((await gc(w, ['--all', '--yes', '--json'])).out);
    expect(removed).toMatchObject({ worktrees: [{ action: 'remove' }], removed: 1 });
  });
});
