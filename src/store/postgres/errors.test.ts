/**
 * Which driver errors count as the database not answering (a retry later may cure them), read
 * from the machine's PostgreSQL as the driver really reports them.
 */
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { TEST_PG_URL } from '../../../test/helpers/pg.js';
import { isConnectionError } from './errors.js';

describe('isConnectionError', () => {
  it('counts a pool too busy to lend a connection and an unanswered statement as the database not answering', async () => {
    const pool = new pg.Pool({
      connectionString: TEST_PG_URL,
      max: 1,
      connectionTimeoutMillis: 200,
      query_timeout: 300,
    });
    pool.on('error', () => {});
    try {
      // Its only connection is lent out: the next statement waits for connectionTimeoutMillis.
      const held = await pool.connect();
      const busy: unknown = await pool.query('SELECT 1').catch((error: unknown) => error);
      held.release();
      expect(busy).toBeInstanceOf(Error);
      expect(isConnectionError(busy)).toBe(true);
      // A statement unanswered for query_timeout (it may still take effect, as after a cut).
      const slow: unknown = await pool.query('SELECT pg_sleep(2)').catch((error: unknown) => error);
      expect(slow).toBeInstanceOf(Error);
      expect(isConnectionError(slow)).toBe(true);
      // An error of the statement itself is not one: sent again, it fails again.
      const wrong: unknown = await pool.query('SELECT 1/0').catch((error: unknown) => error);
      expect(isConnectionError(wrong)).toBe(false);
    } finally {
      await pool.end();
    }
  });
});
