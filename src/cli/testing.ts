/** In-process CLI runs for tests: the real program with captured stdout and stderr. */
import { PassThrough } from 'node:stream';
import type { CliIo } from './io.js';
import { runCli } from './program.js';

export interface CapturedRun {
  code: number;
  stdout: string;
  stderr: string;
}

function capture(): { stream: PassThrough; text: () => string } {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (chunk: Buffer) => {
    text += chunk.toString();
  });
  return { stream, text: () => text };
}

export async function runCliCaptured(
  argv: readonly string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string } = {},
): Promise<CapturedRun> {
  const out = capture();
  const err = capture();
  const io: CliIo = {
    stdout: out.stream,
    stderr: err.stream,
    env: options.env ?? { PATH: process.env.PATH },
    cwd: options.cwd ?? process.cwd(),
    programName: 'curupira',
  };
  const code = await runCli(argv, io);
  await new Promise((resolve) => setImmediate(resolve));
  return { code, stdout: out.text(), stderr: err.text() };
}
