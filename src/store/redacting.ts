/**
 * Nothing secret reaches the state file: every value handed to the store (run records and their
 * reasons, prompts, outcomes, summaries, sessions, whatever a later field holds) has its strings
 * redacted first (`src/security/redact.ts`). A proxy rather than a list of methods, so a method or
 * field added to `Store` later is covered without anyone remembering to.
 */
import { redactDeep } from '../security/redact.js';
import type { Store } from './types.js';

export function redactingStore(store: Store): Store {
  return new Proxy(store, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => value.apply(target, args.map(redactDeep));
    },
  });
}
