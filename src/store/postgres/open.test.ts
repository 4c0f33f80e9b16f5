/**
 * What only the PostgreSQL store does: schemas, migrations under a lock, connection errors that
 * never show the password, and read-modify-writes that stay right when several processes share
 * the database. The behaviour both backends share is in ../store.contract.test.ts.
 */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { freshSchema, TEST_PG_URL, type TestSchema } from '../../../test/helpers/pg.js';
import { StateError } from '../../core/errors.js';
import { openStore, stateLocation } from '../index.js';
import type { RunInit, Store } from '../types.js';
import { connectionOf, openPostgresStore, redactUrl } from './open.js';
import { PG_SCHEMA_VERSION } from './schema.js';
import { PG_ATTENTION_SQL } from './store.js';

const SECRET = 'S3cret-Pw_9z';

let schema: TestSchema;
let opened: Store[];
let admin: pg.Client;

beforeEach(async () => {
  schema = await freshSchema('pgopen');
  opened = [];
  admin = new pg.Client({ connectionString: TEST_PG_URL });
  await admin.connect();
});
afterEach(async () => {
  for (const store of opened) await store.close().catch(() => {});
  await admin.end();
  await schema.drop();
});

async function open(url = schema.url, options: { readonly?: boolean } = {}): Promise<Store> {
  const store = await openPostgresStore(url, {
    now: () => Date.parse('2026-12-01T10:00:00.000Z'),
    ...options,
  });
  opened.push(store);
  return store;
}

async function openError(url: string, options: { readonly?: boolean } = {}): Promise<StateError> {
  const error = await open(url, options).then(
    () => {
      throw new Error('the open should have failed');
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(StateError);
  return error as StateError;
}

/** `TEST_PG_URL` with a password in it (trust auth ignores it), user and more query text. */
function withPassword(url: string, user = 'postgres'): string {
  const parsed = new URL(url);
  parsed.username = user;
  parsed.password = SECRET;
  return parsed.toString();
}

async function versions(name: string): Promise<number[]> {
  const result = await admin.query<{ version: number }>(
    `SELECT version FROM "${name}".curupira_schema ORDER BY version`,
  );
  return result.rows.map((r) => r.version);
}

async function tables(name: string): Promise<string[]> {
  const result = await admin.query<{ table_name: string }>(
    'SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1',
    [name],
  );
  return result.rows.map((r) => r.table_name);
}

const RUN: RunInit = {
  automationId: 'fix',
  taskKey: '["fix","acme/api","github-issues","7"]',
  repo: 'acme/api',
  taskType: 'github-issues',
  itemId: '7',
  itemKey: 'issue:7',
  itemTitle: 'Crash',
  itemUrl: 'https://github.com/acme/api/issues/7',
  status: 'blocked',
};

describe('the state_db_url', () => {
  it('picks the schema from ?schema= (default curupira), checks its name, and keeps it out of the connection', () => {
    const parsed = connectionOf('postgres://bob@db.example:5433/state?schema=team_a&sslmode=require');
    expect(parsed.info).toMatchObject({
      schema: 'team_a',
      host: 'db.example',
      port: '5433',
      database: 'state',
    });
    expect(parsed.connectionString).toBe('postgres://bob@db.example:5433/state?sslmode=require');
    expect(connectionOf('postgresql://bob@db.example/state').info.schema).toBe('curupira');
    for (const bad of ['Team', '1st', 'a-b', 'x'.repeat(64), '']) {
      expect(() => connectionOf(`postgres://bob@db/state?schema=${bad}`)).toThrow(
        /must be lowercase letters/,
      );
    }
    expect(() => connectionOf(`postgres://bob:${SECRET}@[oops/state`)).toThrow(StateError);
    expect(() => connectionOf(`postgres://bob:${SECRET}@[oops/state`)).not.toThrow(SECRET);
  });

  it('prints without its password, in the user part or the query', () => {
    expect(redactUrl(`postgres://bob:${SECRET}@db:5432/state?schema=x`)).toBe(
      'postgres://bob@db:5432/state?schema=x',
    );
    expect(redactUrl(`postgres://bob@db/state?password=${SECRET}&schema=x`)).toBe(
      'postgres://bob@db/state?schema=x',
    );
    expect(redactUrl(`postgres://bob:${SECRET}@[oops/state`)).not.toContain(SECRET);
  });

  it('openStore takes the URL where it would take the file, and stateLocation prefers it', async () => {
    expect(stateLocation({ state_db_path: '/var/state.sqlite3' })).toBe('/var/state.sqlite3');
    expect(stateLocation({ state_db_path: '/var/state.sqlite3', state_db_url: schema.url })).toBe(schema.url);
    const store = await openStore(withPassword(schema.url));
    opened.push(store);
    expect(store.backend).toBe('postgres');
    expect(store.path).not.toContain(SECRET);
    expect(store.path).toContain(`schema=${schema.schema}`);
    // Still the redacting store: a token written through it is not kept.
    await store.setMeta('note', 'token ghp_abcdefghijklmnopqrstuvwxyz0123456789');
    expect(await store.getMeta('note')).not.toContain('ghp_abcdefghijklmnopqrstuvwxyz0123456789');
  });
});

describe('the schema', () => {
  it('is created when missing and migrated once, even when several processes open it at once', async () => {
    await admin.query(`DROP SCHEMA "${schema.schema}"`);
    const stores = await Promise.all([open(), open(), open(), open()]);
    expect(await versions(schema.schema)).toEqual(Array.from({ length: PG_SCHEMA_VERSION }, (_, i) => i + 1));
    expect(await tables(schema.schema)).toEqual(
      expect.arrayContaining(['runs', 'sessions', 'curupira_schema']),
    );
    await stores[0]!.setMeta('k', 'v');
    expect(await stores[3]!.getMeta('k')).toBe('v');
    await open();
    expect(await versions(schema.schema)).toHaveLength(PG_SCHEMA_VERSION);
  });

  it('keeps each schema apart: the same database holds several states', async () => {
    const other = await freshSchema('pgopen');
    try {
      const a = await open();
      const b = await open(other.url);
      await a.setMeta('who', 'a');
      expect(await b.getMeta('who')).toBeUndefined();
      expect(await tables(other.schema)).toContain('runs');
    } finally {
      await other.drop();
    }
  });

  it('refuses a schema written by a newer curupira, for writing and for reading', async () => {
    const store = await open();
    await store.close();
    await admin.query(
      `INSERT INTO "${schema.schema}".curupira_schema (version, applied_at) VALUES ($1, 'later')`,
      [PG_SCHEMA_VERSION + 1],
    );
    const error = await openError(schema.url);
    expect(error.message).toMatch(
      new RegExp(
        `newer curupira \\(schema version ${PG_SCHEMA_VERSION + 1}; this one knows up to ${PG_SCHEMA_VERSION}\\)`,
      ),
    );
    expect((await openError(schema.url, { readonly: true })).message).toMatch(/newer curupira/);
  });

  it('refuses a schema that holds tables of another application, and leaves it as it is', async () => {
    await admin.query(`CREATE TABLE "${schema.schema}".orders (id int)`);
    const error = await openError(schema.url);
    expect(error.message).toMatch(/holds tables that are not curupira's \(orders\)/);
    expect(await tables(schema.schema)).toEqual(['orders']);
  });

  it('a read-only open of a schema that is not there shows an empty state and creates nothing', async () => {
    await admin.query(`DROP SCHEMA "${schema.schema}"`);
    const store = await open(schema.url, { readonly: true });
    expect(await store.listRuns()).toEqual([]);
    expect(await store.getMeta('k')).toBeUndefined();
    await expect(store.setMeta('k', 'v')).rejects.toThrow(/read-only/);
    const exists = await admin.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema.schema]);
    expect(exists.rowCount).toBe(0);
  });

  it('keeps the server options the URL gives, next to the schema', async () => {
    const url = `${schema.url}&options=${encodeURIComponent('-c statement_timeout=4321')}`;
    const store = await open(url);
    await store.setMeta('k', 'v');
    expect(await store.getMeta('k')).toBe('v');
    expect(store.path).toContain('statement_timeout');
  });
});

describe('connection errors', () => {
  it('a server that is not there: says so, without the password', async () => {
    const url = `postgres://bob:${SECRET}@127.0.0.1:1/test?schema=x`;
    const error = await openError(url);
    expect(error.message).toMatch(/cannot be reached: is it running/);
    expect(error.message).toContain('127.0.0.1:1');
    expect(error.message).not.toContain(SECRET);
    expect(String(error.cause)).not.toContain(SECRET);
  });

  it('a login the server refuses: points at the user and PGPASSWORD, without the password', async () => {
    const url = withPassword(schema.url, 'no_such_user_curupira');
    const error = await openError(url);
    expect(error.message).toMatch(
      /refused the login of user 'no_such_user_curupira'.*PGPASSWORD or ~\/\.pgpass/,
    );
    expect(error.message).not.toContain(SECRET);
  });

  it('a database that does not exist: says which', async () => {
    const url = new URL(withPassword(schema.url));
    url.pathname = '/no_such_db_curupira';
    const error = await openError(url.toString());
    expect(error.message).toMatch(/database 'no_such_db_curupira' does not exist/);
    expect(error.message).not.toContain(SECRET);
  });
});

describe('the password', () => {
  /**
   * A server that asks for a cleartext password, records it, and refuses the login as PostgreSQL
   * does (28P01): the wire protocol's startup, password and error messages, nothing more.
   */
  async function refusingServer(): Promise<{ port: number; passwords: string[]; close(): Promise<void> }> {
    const passwords: string[] = [];
    const server = createServer((socket) => {
      let buffer = Buffer.alloc(0);
      let started = false;
      socket.on('data', (chunk) => {
        buffer = Buffer.concat([buffer, chunk]);
        if (!started && buffer.length >= 4 && buffer.length >= buffer.readInt32BE(0)) {
          started = true;
          buffer = buffer.subarray(buffer.readInt32BE(0));
          const ask = Buffer.alloc(9);
          ask.write('R', 0);
          ask.writeInt32BE(8, 1);
          ask.writeInt32BE(3, 5);
          socket.write(ask);
        }
        if (
          started &&
          buffer.length >= 5 &&
          buffer[0] === 0x70 &&
          buffer.length >= 1 + buffer.readInt32BE(1)
        ) {
          passwords.push(buffer.subarray(5, buffer.readInt32BE(1)).toString('utf8'));
          const fields = Buffer.from(
            'SFATAL\0VFATAL\0C28P01\0Mpassword authentication failed for user "bob"\0\0',
          );
          const error = Buffer.alloc(5);
          error.write('E', 0);
          error.writeInt32BE(4 + fields.length, 1);
          socket.end(Buffer.concat([error, fields]));
        }
      });
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    return { port, passwords, close: () => new Promise((resolve) => server.close(() => resolve())) };
  }

  let dir: string;
  const saved = { PGPASSWORD: process.env.PGPASSWORD, PGPASSFILE: process.env.PGPASSFILE };
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'curupira-pgpass-'));
    delete process.env.PGPASSWORD;
  });
  afterEach(() => {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('comes from the password file, and a refused login names what to fix, never the password', async () => {
    const server = await refusingServer();
    try {
      const file = join(dir, 'pgpass');
      writeFileSync(file, `127.0.0.1:${server.port}:state:bob:${SECRET}\n`, { mode: 0o600 });
      process.env.PGPASSFILE = file;
      const warnings: string[] = [];
      const onWarning = (warning: Error) => warnings.push(warning.message);
      process.on('warning', onWarning);
      const error = await openError(`postgres://bob@127.0.0.1:${server.port}/state?schema=x`);
      await new Promise((resolve) => setTimeout(resolve, 20));
      process.off('warning', onWarning);
      // Read by curupira, not by the driver (which warns that its own reading is deprecated).
      expect(warnings.filter((w) => w.includes('pgpass'))).toEqual([]);
      expect(server.passwords).toEqual([SECRET]);
      expect(error.message).toMatch(/refused the login of user 'bob'/);
      expect(error.message).not.toContain(SECRET);

      process.env.PGPASSWORD = 'from-the-environment';
      await openError(`postgres://bob@127.0.0.1:${server.port}/state`);
      expect(server.passwords.at(-1)).toBe('from-the-environment');
    } finally {
      await server.close();
    }
  });

  it('a password file others may read is not used, and the login error says so', async () => {
    const server = await refusingServer();
    try {
      const file = join(dir, 'pgpass');
      writeFileSync(file, `*:*:*:*:${SECRET}\n`);
      chmodSync(file, 0o644);
      process.env.PGPASSFILE = file;
      const error = await openError(`postgres://bob@127.0.0.1:${server.port}/state`);
      expect(server.passwords).toEqual(['']);
      expect(error.message).toContain(
        `the password file ${file} was ignored: others may read it (chmod 600 ${file})`,
      );
      expect(error.message).not.toContain(SECRET);
    } finally {
      await server.close();
    }
  });
});

describe('several processes on one database', () => {
  it('count every failure of an item when they record at once (no lost update)', async () => {
    const [a, b] = [await open(), await open()];
    const failure = (store: Store, i: number) =>
      store.recordItemFailure({
        taskKey: RUN.taskKey,
        automationId: 'fix',
        itemKey: 'issue:7',
        runId: `r${i}`,
        textDigest: 'aaaa',
        limit: 25,
      });
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => failure(i % 2 ? a : b, i)));
    expect((await a.getItemFailures(RUN.taskKey))?.failures).toBe(40);
    expect(results.map((r) => r.failures).sort((x, y) => x - y)).toEqual(
      Array.from({ length: 40 }, (_, i) => i + 1),
    );
    // Escalated once, at the 25th, and kept.
    const escalated = results.filter((r) => r.escalatedAt !== null);
    expect(Math.min(...escalated.map((r) => r.failures))).toBe(25);
    expect(escalated).toHaveLength(16);
  });

  it('count every failed resume and never use one allowance twice', async () => {
    const [a, b] = [await open(), await open()];
    await a.saveSession({
      taskKey: RUN.taskKey,
      automationId: 'fix',
      runId: 'r_1',
      provider: 'claude',
      profile: 'default',
      sessionId: 's1',
      prompt: 'p',
      promptTemplateHash: 'h',
      task: {} as never,
      worktreePath: null,
      branch: null,
      createdAt: 'x',
      updatedAt: 'x',
    });
    await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).recordResumeFailure(RUN.taskKey)));
    expect((await b.getSession(RUN.taskKey))?.resumeFailures).toBe(20);

    const run = await a.createRun({ ...RUN, screenedDigest: 'd1' });
    await a.addAllowance(run.id, 'alice');
    await b.addAllowance(run.id, 'bob');
    const taken = await Promise.all(
      Array.from({ length: 6 }, (_, i) => (i % 2 ? a : b).takeAllowance(RUN.taskKey, 'd1')),
    );
    const used = taken.filter((t) => t !== undefined).map((t) => t.allowedBy);
    expect(used.sort()).toEqual(['alice', 'bob']);
    expect(await a.listAllowances({ pending: true })).toEqual([]);
  });

  it('make distinct run ids when they create runs at once, on one clock', async () => {
    const [a, b] = [await open(), await open()];
    const runs = await Promise.all(
      Array.from({ length: 30 }, (_, i) => (i % 2 ? a : b).createRun({ ...RUN, itemId: String(i) })),
    );
    expect(new Set(runs.map((r) => r.id)).size).toBe(30);
    expect(await a.countRuns()).toBe(30);
  });
});

describe('indexes', () => {
  it('the attention query (with the calm statuses added since) uses its partial index', async () => {
    await (await open()).close();
    const client = new pg.Client({
      connectionString: TEST_PG_URL,
      options: `-c search_path=${schema.schema}`,
    });
    await client.connect();
    try {
      await client.query('SET enable_seqscan = off');
      const plan = await client.query<{ 'QUERY PLAN': string }>(
        `EXPLAIN SELECT * FROM runs WHERE ${PG_ATTENTION_SQL}`,
      );
      expect(plan.rows.map((r) => r['QUERY PLAN']).join('\n')).toContain('runs_attention');
    } finally {
      await client.end();
    }
  });
});

describe('run ids', () => {
  it('takes the next id when another process stored the one it made', async () => {
    const store = await open();
    const first = await store.createRun(RUN);
    // The id this store makes next on a clock that stands still: the same time, the sequence + 1.
    const digits = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
    const sequence = [...first.id.slice(-8)].reduce((n, c) => n * 32 + digits.indexOf(c), 0) + 1;
    let encoded = '';
    for (let rest = sequence, i = 0; i < 8; i++, rest = Math.floor(rest / 32))
      encoded = digits[rest % 32] + encoded;
    const taken = first.id.slice(0, -8) + encoded;
    await admin.query(
      `INSERT INTO "${schema.schema}".runs (id, automation_id, task_key, repo, task_type, item_id, item_key,
         item_title, item_url, status, created_at)
       VALUES ($1, 'other', 'k', 'r', 't', 'i', 'ik', 'title', 'url', 'queued', 'now')`,
      [taken],
    );
    const second = await store.createRun(RUN);
    expect(second.id > taken).toBe(true);
    expect((await store.getRun(taken))?.automationId).toBe('other');
    expect(await store.countRuns()).toBe(3);
  });
});

describe('the queues and deliveries', () => {
  it('go to the same schema through the store, and obey its read-only and closed states', async () => {
    const store = await open();
    const write = await store.enqueueWrite({
      marker: 'result:r_1',
      repo: 'acme/api',
      number: 7,
      write: { kind: 'comment', body: 'done' },
    });
    await store.beginPullRequest({
      runId: 'r_1',
      automationId: 'fix',
      taskKey: RUN.taskKey,
      repo: 'acme/api',
      delivery: 'pr',
      headBranch: 'curupira/fix/7',
    });
    const reader = await open(schema.url, { readonly: true });
    expect((await reader.listWrites()).map((w) => w.id)).toEqual([write.id]);
    expect((await reader.getPullRequest('r_1'))?.state).toBe('pushing');
    await expect(reader.setPullRequestMark('r_1', 'k', 'v')).rejects.toThrow(/read-only/);
    await store.close();
    await expect(store.listWrites()).rejects.toThrow(/is closed/);
    const rows = await admin.query(`SELECT count(*)::int AS n FROM "${schema.schema}".writes`);
    expect(rows.rows[0]).toEqual({ n: 1 });
  });
});
