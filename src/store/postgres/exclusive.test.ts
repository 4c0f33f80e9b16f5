/**
 * `Store.exclusive` on PostgreSQL: actions of one name never overlap across processes sharing a
 * state (two stores on one schema stand for two hosts); other names do not wait for each other.
 */
import { afterEach, beforeEach, expect, it } from 'vitest';
import { freshSchema, type TestSchema } from '../../../test/helpers/pg.js';
import type { Store } from '../types.js';
import { openPostgresStore } from './open.js';

let schema: TestSchema;
let stores: Store[];

beforeEach(async () => {
  schema = await freshSchema('excl');
  stores = [await openPostgresStore(schema.url), await openPostgresStore(schema.url)];
});

afterEach(async () => {
  for (const store of stores) await store.close();
  await schema.drop();
});

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

it('runs actions of one name one at a time across stores, and lets other names through', async () => {
  let inside = 0;
  let most = 0;
  const spans: string[] = [];
  const action = (who: string) => async () => {
    inside += 1;
    most = Math.max(most, inside);
    spans.push(`${who}+`);
    await pause(40);
    spans.push(`${who}-`);
    inside -= 1;
    return who;
  };
  const results = await Promise.all(
    Array.from({ length: 6 }, (_, i) => stores[i % 2]!.exclusive!('drain', action(`a${i}`))),
  );
  expect(results).toEqual(['a0', 'a1', 'a2', 'a3', 'a4', 'a5']);
  expect(most).toBe(1);
  // Each action's end comes right after its start.
  for (let i = 0; i < spans.length; i += 2) expect(spans[i + 1]).toBe(spans[i]!.replace('+', '-'));

  // A held lock of one name does not hold another name back.
  let release!: () => void;
  const held = stores[0]!.exclusive!('one', () => new Promise<void>((resolve) => (release = resolve)));
  await pause(50);
  await expect(stores[1]!.exclusive!('other', async () => 'through')).resolves.toBe('through');
  release();
  await held;
});

it('frees the lock when the action throws', async () => {
  await expect(
    stores[0]!.exclusive!('drain', async () => {
      throw new Error('boom');
    }),
  ).rejects.toThrow('boom');
  await expect(stores[1]!.exclusive!('drain', async () => 'next')).resolves.toBe('next');
});
