/**
 * kill -9 and the GitHub write queue (issue 12, item 7): a child process runs the built queue
 * (`node scripts/build.mjs` first) and kills itself with SIGKILL at a crash point — after the write
 * is queued but before it is sent, or after GitHub created the comment but before the queue noted
 * it. A second process on the same state file must then leave exactly one comment.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from '../../src/simulator/server.js';
import { SimWorld } from '../../src/simulator/world.js';
import { openStore } from '../../src/store/index.js';
import { ROOT } from '../helpers/harness.js';

const TOKEN = 'ghp_writeQueueCrashToken000000000000001';
const DIST = pathToFileURL(join(ROOT, 'dist')).href;

const CHILD = `
const dist = process.env.DIST;
const { openStore } = await import(dist + '/store/index.js');
const { createGitHubClient } = await import(dist + '/github/client.js');
const { staticTokenSource } = await import(dist + '/github/token.js');
const { WriteQueue } = await import(dist + '/github/write-queue.js');
const store = await openStore(process.env.STATE_FILE);
const client = createGitHubClient({ apiUrl: process.env.API_URL, tokens: staticTokenSource(process.env.SIM_TOKEN), maxAttempts: 1 });
const queue = new WriteQueue({ store, client, paceMs: 0 });
if (process.env.ENQUEUE) await queue.enqueue(JSON.parse(process.env.ENQUEUE));
const result = await queue.runUntilIdle();
await store.close();
process.stdout.write(JSON.stringify(result));
`;

let dir: string;
let sim: Simulator;
let world: SimWorld;

function child(
  env: Record<string, string>,
): Promise<{ code: number | null; signal: string | null; out: string }> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ['--input-type=module', '-e', CHILD], {
      env: {
        PATH: process.env.PATH ?? '',
        DIST,
        STATE_FILE: join(dir, 'state.sqlite3'),
        API_URL: sim.url,
        SIM_TOKEN: TOKEN,
        ...env,
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    proc.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
    });
    proc.on('error', reject);
    proc.on('exit', (code, signal) => resolve({ code, signal, out }));
  });
}

const WRITE = {
  marker: 'result run=r_crash',
  repo: 'acme/api',
  number: 1,
  write: { kind: 'comment', body: 'Run r_crash succeeded.' },
};

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'curupira-queue-crash-'));
  world = new SimWorld();
  world.addToken(TOKEN, 'curupira-bot');
  world.addRepo('acme/api');
  world.addIssue('acme/api', { title: 'Crash me' });
  sim = await startSimulator({ world });
});

afterEach(async () => {
  await sim.close();
  await rm(dir, { recursive: true, force: true });
});

describe('the write queue across kill -9', () => {
  it('killed between enqueue and send: the restarted process sends it, exactly once', async () => {
    const killed = await child({ ENQUEUE: JSON.stringify(WRITE), CURUPIRA_TEST_CRASH_AT: 'write-enqueued' });
    expect(killed.signal).toBe('SIGKILL');
    expect(sim.requests.filter((r) => r.method !== 'GET')).toEqual([]);
    expect(world.item('acme/api', 1)!.comments).toEqual([]);

    const restarted = await child({});
    expect(restarted.code).toBe(0);
    expect(JSON.parse(restarted.out)).toEqual({ sent: 1, failed: 0, retried: 0 });
    expect(world.item('acme/api', 1)!.comments.map((c) => c.body)).toEqual([
      'Run r_crash succeeded.\n\n<!-- curupira:result run=r_crash -->',
    ]);
  }, 30_000);

  it('killed after GitHub created the comment but before the queue noted it: no second comment', async () => {
    const killed = await child({ ENQUEUE: JSON.stringify(WRITE), CURUPIRA_TEST_CRASH_AT: 'write-posted' });
    expect(killed.signal).toBe('SIGKILL');
    expect(world.item('acme/api', 1)!.comments).toHaveLength(1);

    const restarted = await child({});
    expect(JSON.parse(restarted.out)).toEqual({ sent: 1, failed: 0, retried: 0 });
    expect(world.item('acme/api', 1)!.comments).toHaveLength(1);
    expect(sim.requests.filter((r) => r.method === 'POST')).toHaveLength(1);
    const store = await openStore(join(dir, 'state.sqlite3'));
    try {
      const [row] = await store.listWrites();
      expect(row).toMatchObject({
        status: 'sent',
        attempts: 2,
        resultId: world.item('acme/api', 1)!.comments[0]!.databaseId,
      });
    } finally {
      await store.close();
    }
  }, 30_000);
});
