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
  const scanner = new Scanner(source);
  try {
    scanner.document();
  } catch {
    // The document parsed already; a scanner slip only costs precision, never a crash.
  }
  return scanner.locations;
}

/** Walks TOML text (already known to parse) and records where each key is written. */
class Scanner {
  readonly locations = new TomlLocations();
  private readonly lineStarts = [0];
  private i = 0;
  private readonly arrayTableCounts = new Map<string, number>();
  private table: (string | number)[] = [];

  constructor(private readonly source: string) {
    for (let n = 0; n < source.length; n += 1) if (source[n] === '\n') this.lineStarts.push(n + 1);
  }

  private at(index: number): Position {
    const { lineStarts } = this;
    let lo = 0;
    let hi = lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (lineStarts[mid]! <= index) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: index - lineStarts[lo]! + 1 };
  }

  private peek(offset = 0): string {
    return this.source[this.i + offset] ?? '';
  }

  private startsWith(text: string): boolean {
    return this.source.startsWith(text, this.i);
  }

  private skipInline(): void {
    while (this.i < this.source.length && (this.peek() === ' ' || this.peek() === '\t')) this.i += 1;
    if (this.peek() === '#') while (this.i < this.source.length && this.peek() !== '\n') this.i += 1;
  }

  private skipAll(): void {
    for (;;) {
      this.skipInline();
      if (this.peek() === '\n' || this.peek() === '\r') {
        this.i += 1;
        continue;
      }
      return;
    }
  }

  private readString(): string {
    if (this.startsWith('"""')) return this.readMultiline();
    if (this.startsWith("'''")) return this.readMultilineLiteral();
    const { source } = this;
    if (this.peek() === '"') {
      const start = this.i;
      this.i += 1;
      while (this.i < source.length && this.peek() !== '"' && this.peek() !== '\n')
        this.i += this.peek() === '\\' ? 2 : 1;
      this.i += 1;
      try {
        return JSON.parse(source.slice(start, this.i)) as string;
      } catch {
        return source.slice(start + 1, this.i - 1);
      }
    }
    // literal string
    this.i += 1;
    const start = this.i;
    while (this.i < source.length && this.peek() !== "'" && this.peek() !== '\n') this.i += 1;
    const text = source.slice(start, this.i);
    this.i += 1;
    return text;
  }

  private readMultiline(): string {
    const { source } = this;
    this.i += 3;
    const start = this.i;
    while (this.i < source.length) {
      if (this.peek() === '\\') {
        this.i += 2;
        continue;
      }
      if (this.startsWith('"""')) {
        while (source[this.i + 3] === '"') this.i += 1;
        const text = source.slice(start, this.i);
        this.i += 3;
        return text;
      }
      this.i += 1;
    }
    return source.slice(start);
  }

  private readMultilineLiteral(): string {
    const { source } = this;
    this.i += 3;
    const end = source.indexOf("'''", this.i);
    let close = end < 0 ? source.length : end;
    while (source[close + 3] === "'") close += 1;
    const text = source.slice(this.i, close);
    this.i = close + 3;
    return text;
  }

  private readKey(): string[] {
    const parts: string[] = [];
    for (;;) {
      this.skipInline();
      if (this.peek() === '"' || this.peek() === "'") parts.push(this.readString());
      else {
        const start = this.i;
        while (this.i < this.source.length && BARE_KEY.test(this.peek())) this.i += 1;
        if (this.i === start) throw new Error('unexpected character in key');
        parts.push(this.source.slice(start, this.i));
      }
      this.skipInline();
      if (this.peek() !== '.') return parts;
      this.i += 1;
    }
  }

  private readValue(path: (string | number)[]): void {
    this.skipInline();
    const c = this.peek();
    if (c === '"' || c === "'") {
      this.readString();
      return;
    }
    if (c === '[') this.readArray(path);
    else if (c === '{') this.readInlineTable(path);
    else while (this.i < this.source.length && !',]}#\n\r'.includes(this.peek())) this.i += 1;
  }

  private readArray(path: (string | number)[]): void {
    this.i += 1;
    let index = 0;
    for (;;) {
      this.skipAll();
      if (this.peek() === ']' || this.i >= this.source.length) {
        this.i += 1;
        return;
      }
      this.locations.set([...path, index], this.at(this.i));
      this.readValue([...path, index]);
      this.skipAll();
      if (this.peek() === ',') {
        this.i += 1;
        index += 1;
      }
    }
  }

  private readInlineTable(path: (string | number)[]): void {
    this.i += 1;
    for (;;) {
      this.skipInline();
      if (this.peek() === '}' || this.i >= this.source.length) {
        this.i += 1;
        return;
      }
      const keyStart = this.i;
      const key = this.readKey();
      const full = [...path, ...key];
      this.locations.set(full, this.at(keyStart));
      this.skipInline();
      if (this.peek() === '=') this.i += 1;
      this.readValue(full);
      this.skipInline();
      if (this.peek() === ',') this.i += 1;
    }
  }

  /** Table headers (`[a.b]`, `[[a.b]]`) and `key = value` lines, to the end of the text. */
  document(): void {
    for (;;) {
      this.skipAll();
      if (this.i >= this.source.length) return;
      const start = this.i;
      if (this.startsWith('[[')) this.arrayTableHeader(start);
      else if (this.peek() === '[') this.tableHeader(start);
      else this.keyValue(start);
    }
  }

  private arrayTableHeader(start: number): void {
    this.i += 2;
    const key = this.readKey();
    this.skipInline();
    this.i += 2; // ]]
    const name = JSON.stringify(key);
    const index = this.arrayTableCounts.get(name) ?? 0;
    this.arrayTableCounts.set(name, index + 1);
    this.locations.set(key, this.at(start));
    this.table = [...key, index];
    this.locations.set(this.table, this.at(start));
  }

  private tableHeader(start: number): void {
    this.i += 1;
    const key = this.readKey();
    this.skipInline();
    this.i += 1; // ]
    this.table = key;
    this.locations.set(this.table, this.at(start));
  }

  private keyValue(start: number): void {
    const key = this.readKey();
    const full = [...this.table, ...key];
    for (let n = this.table.length + 1; n <= full.length; n += 1)
      this.locations.set(full.slice(0, n), this.at(start));
    this.skipInline();
    if (this.peek() === '=') this.i += 1;
    this.readValue(full);
  }
}
