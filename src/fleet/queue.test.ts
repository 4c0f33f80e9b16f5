import { describe, expect, it } from 'vitest';
import { freshSchema, TEST_PG_URL } from '../../test/helpers/pg.js';
import { silentLogger } from '../log.js';
import { FleetQueue } from './queue.js';

describe('FleetQueue (PostgreSQL)', () => {
  it('a poller sending and a worker fetching at once both create the host queue without an error', async () => {
    // pg-boss's createQueue run by two processes at once often ends in "deadlock detected" for one.
    const schema = await freshSchema('queue');
    const log = silentLogger();
    const poller = new FleetQueue({
      connectionString: TEST_PG_URL,
      schema: schema.schema,
      supervise: true,
      log,
    });
    const worker = new FleetQueue({
      connectionString: TEST_PG_URL,
      schema: schema.schema,
      supervise: false,
      log,
    });
    await poller.start();
    await worker.start();
    const errors: string[] = [];
    try {
      for (let i = 0; i < 8; i += 1) {
        const id = crypto.randomUUID();
        const results = await Promise.allSettled([poller.send(`h${i}`, id), worker.fetch(`h${i}`, 1)]);
        for (const r of results) if (r.status === 'rejected') errors.push(String(r.reason));
        // The job is there for the host either way.
        const fetched = [
          ...(results[1].status === 'fulfilled' ? results[1].value : []),
          ...(await worker.fetch(`h${i}`, 1)),
        ];
        expect(fetched.map((job) => job.dispatchId)).toEqual([id]);
      }
    } finally {
      await poller.stop();
      await worker.stop();
      await schema.drop();
    }
    expect(errors).toEqual([]);
  }, 120_000);
});
