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

/** `curu` when invoked as `curu` (any folder, `.exe`/`.js` stripped), else `curupira`. */
export function programNameFrom(argv1: string | undefined): string {
  const base = (argv1 ?? '').split(/[\\/]/).pop() ?? '';
  const name = base.replace(/\.(exe|js|cmd|mjs)$/i, '');
  return name === 'curu' ? 'curu' : 'curupira';
}

export function writeLine(stream: NodeJS.WritableStream, text = ''): void {
  stream.write(`${text}\n`);
}
