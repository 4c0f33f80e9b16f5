/**
 * A backend is assembled from parts, one responsibility each (the run ledger, retries, gates,
 * automation state, queues, findings), built around one shared connection: no class holds every
 * method of `Store`. `assemble` puts the parts' methods, bound to their part, into one object that
 * the backend types as `Store`, so a method `Store` gains and no part offers fails to compile.
 *
 * A new method goes into the part of its responsibility (or a new part, one more argument of
 * `assemble` in the backend's store.ts), in both backends.
 */

type AnyFunction = (...args: never[]) => unknown;

/** The methods of `T` (its fields left out). */
export type MethodsOf<T> = { [K in keyof T as T[K] extends AnyFunction ? K : never]: T[K] };

type Intersection<U> = (U extends unknown ? (part: U) => void : never) extends (part: infer I) => void
  ? I
  : never;

/** The methods of every part in `P`, as one type. */
export type Assembled<P extends readonly object[]> = Intersection<
  { [I in keyof P]: MethodsOf<P[I]> }[number]
>;

/** The names of `part`'s methods: its own function-valued properties and its classes' methods. */
function methodNames(part: object): string[] {
  const names = new Set<string>();
  for (
    let level: object | null = part;
    level && level !== Object.prototype;
    level = Object.getPrototypeOf(level)
  ) {
    for (const name of Object.getOwnPropertyNames(level)) {
      if (name === 'constructor') continue;
      const descriptor = Object.getOwnPropertyDescriptor(level, name);
      if (typeof descriptor?.value === 'function') names.add(name);
    }
  }
  return [...names];
}

/**
 * Every part's methods, each bound to its part, in one plain object. Two parts offering the same
 * method is a mistake in the backend's assembly, thrown at once rather than one silently winning.
 */
export function assemble<P extends readonly object[]>(...parts: P): Assembled<P> {
  const methods: Record<string, AnyFunction> = {};
  for (const part of parts) {
    for (const name of methodNames(part)) {
      if (Object.hasOwn(methods, name)) throw new Error(`two parts of the store offer ${name}`);
      const method = (part as Record<string, AnyFunction>)[name]!;
      methods[name] = method.bind(part);
    }
  }
  return methods as Assembled<P>;
}
