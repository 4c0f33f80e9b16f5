/**
 * The machine's own PostgreSQL for tests (`npm test` starts it when it is not running): each test
 * file gets a schema of its own, dropped at the end, so files run in parallel without meeting.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** The server and database the tests use (trust auth on the machine's server). */
export const TEST_PG_URL = process.env.CURUPIRA_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface TestSchema {
  /** `TEST_PG_URL` with `?schema=<name>`: what `state_db_url` takes. */
  url: string;
  /** The server and database it lives on, without the schema (`TEST_PG_URL` unless another was given). */
  serverUrl: string;
  schema: string;
  /** Drops the schema (and the pg-boss schema `<name>_boss`, when one was made). */
  drop(): Promise<void>;
}

/** Creates an empty schema named `t_<random>` and returns the URL that points at it. */
export async function freshSchema(prefix = 't', serverUrl = TEST_PG_URL): Promise<TestSchema> {
  const schema = `${prefix}_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(`CREATE SCHEMA ${schema}`);
  } finally {
    await client.end();
  }
  const separator = serverUrl.includes('?') ? '&' : '?';
  return {
    url: `${serverUrl}${separator}schema=${schema}`,
    serverUrl,
    schema,
    async drop() {
      const admin = new pg.Client({ connectionString: serverUrl });
      await admin.connect();
      try {
        await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await admin.query(`DROP SCHEMA IF EXISTS ${schema}_boss CASCADE`);
      } finally {
        await admin.end();
      }
    },
  };
}
