/**
 * Where each key of a TOML document is written, so configuration errors can say `FILE:LINE:COL`.
 * smol-toml gives values without positions; this scanner walks the same (already validated) text
 * and records the position of every key, table header and array element.
 */

export interface Position {
  line: number;
  column: number;
}

export type KeyPath = readonly (string | number)[];

export class TomlLocations {
  private readonly positions = new Map<string, Position>();

  set(path: KeyPath, position: Position): void {
    const key = JSON.stringify(path);
    if (!this.positions.has(key)) this.positions.set(key, position);
  }

  /** The position of `path`, or of its nearest written ancestor (a missing key points at its table). */
  find(path: KeyPath): Position | undefined {
    for (let end = path.length; end > 0; end -= 1) {
      const found = this.positions.get(JSON.stringify(path.slice(0, end)));
      if (found) return found;
    }
    return undefined;
  }

  /** Only the exact path. */
  exact(path: KeyPath): Position | undefined {
    return this.positions.get(JSON.stringify(path));
  }
}

const BARE_KEY = /[A-Za-z0-9_-]/;

export function locateKeys(source: string): TomlLocations {
  const locations = new TomlLocations();
  const lineStarts = [0];
  for (let i = 0; i < source.length; i += 1) if (source[i] === '\n') lineStarts.push(i + 1);
  const at = (index: number): Position => {
    let lo = 0;
    let hi = lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (lineStarts[mid]! <= index) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: index - lineStarts[lo]! + 1 };
  };

  let i = 0;
  const arrayTableCounts = new Map<string, number>();
  let table: (string | number)[] = [];

  const peek = (offset = 0): string => source[i + offset] ?? '';
  const startsWith = (text: string): boolean => source.startsWith(text, i);

  function skipInline(): void {
    while (i < source.length && (peek() === ' ' || peek() === '\t')) i += 1;
    if (peek() === '#') while (i < source.length && peek() !== '\n') i += 1;
  }

  function skipAll(): void {
    for (;;) {
      skipInline();
      if (peek() === '\n' || peek() === '\r') {
        i += 1;
        continue;
      }
      return;
    }
  }

  function readString(): string {
    if (startsWith('"""')) {
      i += 3;
      const start = i;
      while (i < source.length) {
        if (peek() === '\\') {
          i += 2;
          continue;
        }
        if (startsWith('"""')) {
          while (source[i + 3] === '"') i += 1;
          const text = source.slice(start, i);
          i += 3;
          return text;
        }
        i += 1;
      }
      return source.slice(start);
    }
    if (startsWith("'''")) {
      i += 3;
      const end = source.indexOf("'''", i);
      let close = end < 0 ? source.length : end;
      while (source[close + 3] === "'") close += 1;
      const text = source.slice(i, close);
      i = close + 3;
      return text;
    }
    if (peek() === '"') {
      const start = i;
      i += 1;
      while (i < source.length && peek() !== '"' && peek() !== '\n') i += peek() === '\\' ? 2 : 1;
      i += 1;
      try {
        return JSON.parse(source.slice(start, i)) as string;
      } catch {
        return source.slice(start + 1, i - 1);
      }
    }
    // literal string
    i += 1;
    const start = i;
    while (i < source.length && peek() !== "'" && peek() !== '\n') i += 1;
    const text = source.slice(start, i);
    i += 1;
    return text;
  }

  function readKey(): string[] {
    const parts: string[] = [];
    for (;;) {
      skipInline();
      if (peek() === '"' || peek() === "'") parts.push(readString());
      else {
        const start = i;
        while (i < source.length && BARE_KEY.test(peek())) i += 1;
        if (i === start) throw new Error('unexpected character in key');
        parts.push(source.slice(start, i));
      }
      skipInline();
      if (peek() !== '.') return parts;
      i += 1;
    }
  }

  function readValue(path: (string | number)[]): void {
    skipInline();
    const c = peek();
    if (c === '"' || c === "'") {
      readString();
      return;
    }
    if (c === '[') {
      i += 1;
      let index = 0;
      for (;;) {
        skipAll();
        if (peek() === ']' || i >= source.length) {
          i += 1;
          return;
        }
        locations.set([...path, index], at(i));
        readValue([...path, index]);
        skipAll();
        if (peek() === ',') {
          i += 1;
          index += 1;
        }
      }
    }
    if (c === '{') {
      i += 1;
      for (;;) {
        skipInline();
        if (peek() === '}' || i >= source.length) {
          i += 1;
          return;
        }
        const keyStart = i;
        const key = readKey();
        const full = [...path, ...key];
        locations.set(full, at(keyStart));
        skipInline();
        if (peek() === '=') i += 1;
        readValue(full);
        skipInline();
        if (peek() === ',') i += 1;
      }
    }
    while (i < source.length && !',]}#\n\r'.includes(peek())) i += 1;
  }

  try {
    for (;;) {
      skipAll();
      if (i >= source.length) break;
      const start = i;
      if (startsWith('[[')) {
        i += 2;
        const key = readKey();
        skipInline();
        i += 2; // ]]
        const name = JSON.stringify(key);
        const index = arrayTableCounts.get(name) ?? 0;
        arrayTableCounts.set(name, index + 1);
        locations.set(key, at(start));
        table = [...key, index];
        locations.set(table, at(start));
        continue;
      }
      if (peek() === '[') {
        i += 1;
        const key = readKey();
        skipInline();
        i += 1; // ]
        table = key;
        locations.set(table, at(start));
        continue;
      }
      const key = readKey();
      const full = [...table, ...key];
      for (let n = table.length + 1; n <= full.length; n += 1) locations.set(full.slice(0, n), at(start));
      skipInline();
      if (peek() === '=') i += 1;
      readValue(full);
    }
  } catch {
    // The document parsed already; a scanner slip only costs precision, never a crash.
  }
  return locations;
}
