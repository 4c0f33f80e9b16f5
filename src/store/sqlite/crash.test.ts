/**
 * Kill -9 in the middle of writes: a child process applies our exported schema and then commits
 * multi-statement transactions in a loop until it is killed with SIGKILL. The file must then open
 * cleanly and show every transaction either whole or not at all.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from './open.js';
import { APPLICATION_ID, MIGRATIONS } from './schema.js';

const WRITER = `
const { default: Database } = await import(process.env.SQLITE_MODULE);
const db = new Database(process.env.DB_PATH);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = FULL');
for (const [index, sql] of JSON.parse(process.env.MIGRATIONS).entries()) {
  db.transaction(() => {
    if (db.pragma('user_version', { simple: true }) > index) return;
    db.exec(sql);
    db.pragma('application_id = ' + process.env.APPLICATION_ID);
    db.pragma('user_version = ' + (index + 1));
  }).immediate();
}
const prompt = 'p'.repeat(6000);
const id = (n) => 'r_' + String(n).padStart(18, '0');
const open = db.prepare(\`INSERT INTO runs (id, automation_id, task_key, repo, task_type, item_id, item_key,
  item_title, item_url, status, created_at, prompt) VALUES (?, 'crash', ?, 'acme/api', 'cron', ?, ?, 't', 'u',
  'running', ?, ?)\`);
const finish = db.prepare("UPDATE runs SET status = 'succeeded', finished_at = ?, commits = ? WHERE id = ?");
const session = db.prepare(\`INSERT INTO sessions (task_key, automation_id, run_id, provider, profile, session_id,
  prompt, prompt_template_hash, task_json, created_at, updated_at) VALUES ('k', 'crash', ?, 'claude', 'p', ?, ?, 'h',
  '{}', 'c', 'u') ON CONFLICT (task_key) DO UPDATE SET run_id = excluded.run_id, session_id = excluded.session_id\`);
const count = db.prepare("INSERT INTO meta (key, value) VALUES ('count', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value");
const step = db.transaction((n) => {
  const now = new Date().toISOString();
  if (n > 1) finish.run(now, n - 1, id(n - 1));
  open.run(id(n), 'task-' + n, String(n), 'cron:' + n, now, prompt);
  session.run(id(n), 's-' + n, prompt);
  count.run(String(n));
});
const start = Number(db.prepare("SELECT value FROM meta WHERE key = 'count'").pluck().get() ?? 0) + 1;
for (let n = start; ; n++) {
  step.immediate(n);
  if (n === start + 100) process.stdout.write('ready\\n');
}
`;

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'curupira-crash-'));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Starts the writer, lets it commit for a while, and kills it with SIGKILL mid-loop. */
async function writeThenKill(path: string, extraMs: number): Promise<void> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', WRITER], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: {
      PATH: process.env.PATH,
      SQLITE_MODULE: pathToFileURL(createRequire(import.meta.url).resolve('better-sqlite3')).href,
      DB_PATH: path,
      MIGRATIONS: JSON.stringify(MIGRATIONS),
      APPLICATION_ID: String(APPLICATION_ID),
    },
  });
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.once('exit', (_code, signal) => resolve(signal)),
  );
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('ready')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`writer exited early with code ${code}`)));
  });
  await new Promise((resolve) => setTimeout(resolve, extraMs));
  child.kill('SIGKILL');
  expect(await exited).toBe('SIGKILL');
}

describe('crash safety', () => {
  it('opens a file whose writer was killed mid-transaction, with every transaction whole', async () => {
    const path = join(dir, 'state.sqlite3');
    let previous = 0;
    for (const extraMs of [5, 23, 41]) {
      await writeThenKill(path, extraMs);

      const store = await openStore(path);
      const count = Number(await store.getMeta('count'));
      expect(count).toBeGreaterThan(previous + 100);
      previous = count;

      const runs = await store.listRuns({ automationId: 'crash', limit: Number.POSITIVE_INFINITY });
      expect(runs).toHaveLength(count);
      expect(runs[0]!.itemId).toBe(String(count));
      const unfinished = await store.listUnfinishedRuns();
      expect(unfinished.map((r) => r.itemId)).toEqual([String(count)]);
      expect(runs.slice(1).every((r) => r.status === 'succeeded' && r.commits === Number(r.itemId))).toBe(
        true,
      );
      expect((await store.listSessions()).map((s) => [s.runId, s.sessionId])).toEqual([
        [runs[0]!.id, `s-${count}`],
      ]);

      const fresh = await store.createRun({
        automationId: 'after-crash',
        taskKey: 'k',
        repo: 'acme/api',
        taskType: 'cron',
        itemId: 'x',
        itemKey: 'cron:x',
        itemTitle: 't',
        itemUrl: 'u',
        status: 'queued',
      });
      expect(fresh.id > runs[0]!.id).toBe(true);
      expect(await store.pruneRuns('after-crash', 0)).toEqual([]);
      await store.updateRun(fresh.id, { status: 'cancelled' });
      expect((await store.pruneRuns('after-crash', 0)).map((r) => r.id)).toEqual([fresh.id]);
      await store.close();
    }
  });
});
