/**
 * A state file damaged on disk after a clean exit (pages overwritten in the middle, or the file cut
 * short) is refused by every command that opens the state, with the message `doctor` gives and the
 * documented exit code 1 (README, Commands: a runtime error), and left exactly as it was. Before,
 * opens skipped SQLite's full read after a clean exit, so a one-shot `run` that met no damaged page
 * printed "No matching task is currently available." and exited 0 while `doctor` rejected the file.
 */
import { copyFileSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, runBuiltCli } from '../helpers/harness.js';

let h: Harness;
let statePath: string;
let pristine: string;
let runId: string;

function cli(args: string[]) {
  return runBuiltCli(['--config', h.settingsFile, ...args], { env: h.env, timeoutMs: 30_000 });
}

/**
 * Overwrites, with garbage, the page in the middle of the file that holds the item memory: a table
 * a run that finds nothing to do never reads, so only a full read of the file sees the damage.
 */
function overwriteMiddle(bytes: Buffer): Buffer {
  const copy = join(h.dir, 'inspect.sqlite3');
  writeFileSync(copy, bytes);
  const db = new Database(copy, { readonly: true });
  const root = db
    .prepare("SELECT rootpage FROM sqlite_master WHERE name = 'item_memory'")
    .pluck()
    .get() as number;
  db.close();
  const damaged = Buffer.from(bytes);
  const pageSize = damaged.readUInt16BE(16);
  expect(root).toBeGreaterThan(2);
  expect(root).toBeLessThan(damaged.length / pageSize - 2);
  damaged.fill(0xa5, (root - 1) * pageSize, root * pageSize);
  return damaged;
}

/** Cuts the file at half its length. */
function truncateHalf(bytes: Buffer): Buffer {
  return Buffer.from(bytes.subarray(0, Math.floor(bytes.length / 2)));
}

beforeAll(async () => {
  h = await createHarness({
    issues: [
      { title: 'one', body: '[[fake:commit]]' },
      { title: 'two', body: '[[fake:commit]]' },
    ],
  });
  statePath = join(h.dir, 'state', 'state.sqlite3');
  const first = await cli(['run']);
  expect(first.code, first.stderr).toBe(0);
  expect(first.stdout).toMatch(/^2 runs: 2 succeeded/);
  const list = await cli(['runs']);
  runId = /\b(r_[A-Za-z0-9_-]+)/.exec(list.stdout)![1]!;
  // A clean exit: no write-ahead log beside the file, so an open would not read every page.
  expect(existsSync(`${statePath}-wal`)).toBe(false);
  // Nothing left to do: a run that read the state wrongly would say so and exit 0.
  h.world.closeIssue('acme/api', 1);
  h.world.closeIssue('acme/api', 2);
  pristine = join(h.dir, 'pristine.sqlite3');
  copyFileSync(statePath, pristine);
}, 120_000);

afterAll(async () => {
  await h?.cleanup();
});

const COMMANDS: [string, () => string[]][] = [
  ['run', () => ['run']],
  ['run --watch', () => ['run', '--watch']],
  ['serve', () => ['serve', '--port', '0']],
  ['runs', () => ['runs']],
  ['runs show', () => ['runs', 'show', runId]],
  ['status', () => ['status']],
  ['gc', () => ['gc', '--dry-run']],
  ['allow', () => ['allow', runId]],
  ['reset', () => ['reset', runId]],
  ['pause', () => ['pause', 'fix']],
  ['resume', () => ['resume', 'fix']],
];

describe.each([
  ['a page in the middle overwritten', overwriteMiddle],
  ['the file cut in half', truncateHalf],
])('a state file damaged on disk after a clean exit: %s', (_, damage) => {
  let damaged: Buffer;
  let doctorSays: string;

  beforeAll(async () => {
    damaged = damage(readFileSync(pristine));
    for (const extra of [`${statePath}-wal`, `${statePath}-shm`]) rmSync(extra, { force: true });
    writeFileSync(statePath, damaged);
    const doctor = await cli(['doctor']);
    expect(doctor.code).toBe(1);
    const line = doctor.stdout.split('\n').find((l) => l.includes('state file'));
    expect(line).toBeDefined();
    doctorSays = /Cannot safely read state database .*$/.exec(line!)![0];
    expect(doctorSays).toContain(`${statePath}. The file was preserved`);
    expect(doctorSays).toMatch(/It is corrupt/);
  }, 60_000);

  it.each(COMMANDS)(
    '%s refuses it with doctor’s message and exit code 1, and leaves it as it was',
    async (_, args) => {
      const result = await cli(args());
      expect(result.stdout).not.toContain('No matching task');
      expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(1);
      expect(result.stderr).toContain(
        `Cannot safely read state database ${statePath}. The file was preserved; choose a new state_db_path or inspect and back up this file. It is corrupt`,
      );
      expect(readFileSync(statePath).equals(damaged)).toBe(true);
      expect(doctorSays).toContain('It is corrupt');
    },
  );
});
