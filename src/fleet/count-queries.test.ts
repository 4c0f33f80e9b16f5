/**
 * CURUPIRA_COUNT_QUERIES (the fleet benchmark's statement count): off without a file; with one,
 * statements are counted per connection name and written with the process's own tallies.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { TEST_PG_URL } from '../../test/helpers/pg.js';
import { startQueryCount } from './count-queries.js';

let dir: string | undefined;

afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('startQueryCount', () => {
  it('does nothing without a file', () => {
    expect(startQueryCount(undefined)).toBeUndefined();
    expect(startQueryCount('')).toBeUndefined();
  });

  it('counts statements per application_name and writes them with the tallies', async () => {
    dir = mkdtempSync(join(tmpdir(), 'curupira-count-'));
    const file = join(dir, 'queries.json');
    const count = startQueryCount(file);
    let tally = 0;
    count?.also('fleetDbQueries', () => tally);
    const pool = new pg.Pool({ connectionString: TEST_PG_URL, application_name: 'curupira-fleet', max: 1 });
    const client = new pg.Client({ connectionString: TEST_PG_URL, application_name: 'curupira-queue' });
    try {
      await pool.query('SELECT 1');
      await pool.query('SELECT 2');
      tally = 2;
      await client.connect();
      await client.query('SELECT 3');
    } finally {
      await pool.end();
      await client.end();
    }
    count?.stop();
    const written = JSON.parse(readFileSync(file, 'utf8')) as {
      pid: number;
      statements: Record<string, number>;
      counters: Record<string, number>;
    };
    expect(written.pid).toBe(process.pid);
    expect(written.statements['curupira-fleet']).toBe(2);
    expect(written.statements['curupira-queue']).toBe(1);
    expect(written.counters).toEqual({ fleetDbQueries: 2 });
  });
});
