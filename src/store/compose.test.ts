import { describe, expect, it } from 'vitest';
import { assemble } from './compose.js';

class Counter {
  #count = 0;
  add(n: number): number {
    this.#count += n;
    return this.#count;
  }
}

class Greeter {
  readonly name = 'greeter';
  greet(who: string): string {
    return `hello ${who}`;
  }
}

describe('assemble', () => {
  it('puts every part’s methods, bound to their part, into one plain object, without fields', () => {
    const store = assemble(new Counter(), new Greeter());
    const { add } = store;
    add(2);
    expect(store.add(3)).toBe(5);
    expect(store.greet('you')).toBe('hello you');
    expect(Object.keys(store).sort()).toEqual(['add', 'greet']);
  });

  it('refuses two parts offering the same method', () => {
    expect(() => assemble(new Counter(), new Counter())).toThrow('two parts of the store offer add');
  });
});
