import { redact, redactedJson } from '../security/redact.js';
import { programNameFrom } from '../version.js';

export { programNameFrom };

/** What a command may touch of the outside world; tests hand in their own. */
export interface CliIo {
  stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  /** For the rare question a command asks on a terminal (`gc` before deleting work); absent in tests. */
  stdin?: NodeJS.ReadableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** `curupira` or `curu`, from how the program was invoked. */
  programName: string;
}

export function processIo(): CliIo {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    env: process.env,
    cwd: process.cwd(),
    programName: programNameFrom(process.argv[1]),
  };
}

/** On a redacting stream: the stream under it (`writeJson` redacts before serializing instead). */
const UNREDACTED = Symbol('unredacted');

/**
 * A stream whose writes are redacted (`src/security/redact.ts`); everything else is the stream's own
 * (`isTTY`, `columns`, events), so it stands in wherever the stream did.
 */
export function redactingStream<S extends NodeJS.WritableStream>(stream: S): S {
  return new Proxy(stream, {
    get(target, property) {
      if (property === UNREDACTED) return target;
      if (property === 'write') {
        return (chunk: unknown, ...rest: unknown[]) =>
          (target.write as (...args: unknown[]) => boolean)(
            typeof chunk === 'string'
              ? redact(chunk)
              : chunk instanceof Uint8Array
                ? redact(Buffer.from(chunk).toString('utf8'))
                : chunk,
            ...rest,
          );
      }
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/**
 * Prints `value` as JSON (indented, one line break after), its strings redacted before it is
 * serialized; the redacting stream's pass over the text is skipped, since redacting serialized
 * JSON can break it (`src/security/redact.ts`, `redactedJson`).
 */
export function writeJson(stream: NodeJS.WritableStream, value: unknown): void {
  unredacted(stream).write(`${redactedJson(value, 2)}\n`);
}

/** The stream under a redacting one (for a writer that redacts values before it serializes them). */
export function unredacted(stream: NodeJS.WritableStream): NodeJS.WritableStream {
  return (stream as { [UNREDACTED]?: NodeJS.WritableStream })[UNREDACTED] ?? stream;
}

/** `io` with what it prints redacted. */
export function redactingIo(io: CliIo): CliIo {
  return { ...io, stdout: redactingStream(io.stdout), stderr: redactingStream(io.stderr) };
}

export function writeLine(stream: NodeJS.WritableStream, text = ''): void {
  stream.write(`${text}\n`);
}
