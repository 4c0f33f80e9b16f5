/**
 * Output plumbing for long-running children: split a stream into lines without letting one
 * endless line grow memory, and keep only the last N bytes of what was seen.
 */

/**
 * Receives text chunks, calls `emit` once per line. A line is ended by `\n` (`terminated` true) or
 * cut at `maxLineLength` characters (`terminated` false; the rest follows as the next piece), and
 * whatever is left when `end()` is called comes out unterminated.
 */
export class LineSplitter {
  #pending = '';
  readonly #maxLineLength: number;
  readonly #emit: (line: string, terminated: boolean, cut: boolean) => void;

  /** `cut` marks a piece of a line longer than `maxLineLength` (more of that line follows). */
  constructor(maxLineLength: number, emit: (line: string, terminated: boolean, cut: boolean) => void) {
    this.#maxLineLength = Math.max(1, maxLineLength);
    this.#emit = emit;
  }

  push(text: string): void {
    let start = 0;
    for (;;) {
      const newline = text.indexOf('\n', start);
      if (newline === -1) break;
      const line = this.#pending + text.slice(start, newline);
      this.#pending = '';
      this.#emit(line, true, false);
      start = newline + 1;
    }
    this.#pending += text.slice(start);
    while (this.#pending.length > this.#maxLineLength) {
      const piece = this.#pending.slice(0, this.#maxLineLength);
      this.#pending = this.#pending.slice(this.#maxLineLength);
      this.#emit(piece, false, true);
    }
  }

  end(): void {
    if (this.#pending === '') return;
    const rest = this.#pending;
    this.#pending = '';
    this.#emit(rest, false, false);
  }
}

/**
 * Reads a helper process's protocol: one JSON object per line, each handed to `onMessage` once its
 * line is complete; a line that is not JSON is skipped.
 */
export function jsonLineReader<T>(onMessage: (message: T) => void): (text: string) => void {
  const splitter = new LineSplitter(Number.POSITIVE_INFINITY, (line, terminated) => {
    if (!terminated) return;
    let message: T;
    try {
      message = JSON.parse(line) as T;
    } catch {
      return;
    }
    onMessage(message);
  });
  return (text) => splitter.push(text);
}

/** Keeps the last `maxBytes` bytes of everything appended. */
export class BoundedTail {
  readonly #maxBytes: number;
  #chunks: Buffer[] = [];
  #size = 0;

  constructor(maxBytes: number) {
    this.#maxBytes = Math.max(0, maxBytes);
  }

  append(text: string): void {
    if (this.#maxBytes === 0 || text === '') return;
    let chunk = Buffer.from(text, 'utf8');
    if (chunk.length > this.#maxBytes) chunk = chunk.subarray(chunk.length - this.#maxBytes);
    this.#chunks.push(chunk);
    this.#size += chunk.length;
    while (this.#size - this.#chunks[0]!.length >= this.#maxBytes) {
      this.#size -= this.#chunks.shift()!.length;
    }
    // Many tiny appends would keep many tiny buffers alive: fold them into one now and then.
    if (this.#chunks.length > 256) {
      let all = Buffer.concat(this.#chunks, this.#size);
      if (all.length > this.#maxBytes) all = all.subarray(all.length - this.#maxBytes);
      this.#chunks = [Buffer.from(all)];
      this.#size = all.length;
    }
  }

  /** The kept bytes as text; a character cut in half at the start is dropped. */
  toString(): string {
    let all = Buffer.concat(this.#chunks, this.#size);
    if (all.length > this.#maxBytes) all = all.subarray(all.length - this.#maxBytes);
    let start = 0;
    // UTF-8 continuation bytes (10xxxxxx) cannot start a character.
    while (start < all.length && start < 4 && (all[start]! & 0xc0) === 0x80) start += 1;
    return all.subarray(start).toString('utf8');
  }
}
