/**
 * An in-process async mutex keyed by a string (a checkout path). Clones, fetches, worktree additions
 * and removals on one repository run one at a time, so two runs never clone twice or race on git's
 * ref locks. Different keys never wait for each other.
 */
import { resolve } from 'node:path';

const tails = new Map<string, Promise<void>>();

/** Runs `fn` once every earlier holder of `key` has finished, then lets the next one in. */
export async function withLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
  const previous = tails.get(key) ?? Promise.resolve();
  let release!: () => void;
  const mine = new Promise<void>((done) => {
    release = done;
  });
  const tail = previous.then(() => mine);
  tails.set(key, tail);
  await previous;
  try {
    return await fn();
  } finally {
    release();
    if (tails.get(key) === tail) tails.delete(key);
  }
}

/** The lock key of a repository checkout: its absolute, normalised path. */
export function repoLockKey(checkoutPath: string): string {
  return `repo:${resolve(checkoutPath)}`;
}
