/**
 * `classifier_command`: a program the user names, started for every batch of texts. It receives
 * `{"texts": ["…", …]}` as JSON on stdin and must print `{"scores": [0.03, 0.97, …]}` on stdout,
 * one number in [0, 1] per text, in order, and exit 0. It runs in its own process group with
 * curupira's environment minus every secret-looking variable and GitHub token; a timeout or an
 * abort stops the whole group.
 */
import { AgentNotFoundError } from '../../core/errors.js';
import { GITHUB_TOKEN_ENV, isSecretEnvName } from '../../process/env.js';
import { runFilter } from '../../process/filter.js';
import { tailOf, withHint } from './messages.js';
import { type Classifier, ClassifierError, type ClassifyOptions } from './types.js';

/** The answer is a short JSON line; anything far larger is not one. */
const MAX_STDOUT_BYTES = 4 * 1024 * 1024;
const MAX_STDERR_BYTES = 16 * 1024;

/** The classifier's environment: ours, without secrets (it reads untrusted text and needs none of them). */
export function classifierEnv(source: NodeJS.ProcessEnv): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(source)) {
    if (value === undefined || isSecretEnvName(name) || GITHUB_TOKEN_ENV.includes(name)) continue;
    env[name] = value;
  }
  return env;
}

/** One number in [0, 1] per text, or a description of what is wrong with the answer. */
export function parseScores(stdout: string, count: number): number[] | string {
  let answer: unknown;
  try {
    answer = JSON.parse(stdout);
  } catch {
    const shown = tailOf(stdout, 200);
    return shown === '' ? 'it printed nothing' : `its output is not JSON: ${shown}`;
  }
  const scores = (answer as { scores?: unknown } | null)?.scores;
  if (!Array.isArray(scores)) return 'its output has no "scores" array';
  if (scores.length !== count)
    return `it answered ${scores.length} score${scores.length === 1 ? '' : 's'} for ${count} text${count === 1 ? '' : 's'}`;
  for (const [index, score] of scores.entries()) {
    if (typeof score !== 'number' || !Number.isFinite(score) || score < 0 || score > 1)
      return `score ${index} is ${JSON.stringify(score)}, not a number from 0 to 1`;
  }
  return scores as number[];
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('The classification was aborted', 'AbortError');
}

export function createCommandClassifier(
  argv: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): Classifier {
  const [executable = '', ...args] = argv;
  const shown = argv.join(' ');
  const name = `classifier command \`${shown}\``;
  return {
    description: `command ${shown}`,
    async classify(texts: readonly string[], options: ClassifyOptions): Promise<number[]> {
      if (options.signal?.aborted) throw abortReason(options.signal);
      if (texts.length === 0) return [];
      if (executable === '') throw new ClassifierError('missing', withHint('`classifier_command` is empty'));
      let result: Awaited<ReturnType<typeof runFilter>>;
      try {
        result = await runFilter({
          executable,
          args,
          input: JSON.stringify({ texts }),
          env: classifierEnv(env),
          timeoutMs: options.timeoutMs,
          maxStdoutBytes: MAX_STDOUT_BYTES,
          maxStderrBytes: MAX_STDERR_BYTES,
          signal: options.signal,
        });
      } catch (error) {
        if (error instanceof AgentNotFoundError)
          throw new ClassifierError(
            'missing',
            withHint(`${name} cannot run: \`${executable}\` was not found (or is not executable)`),
          );
        throw new ClassifierError('failed', withHint(`${name} could not start: ${(error as Error).message}`));
      }
      if (result.cancelled && options.signal) throw abortReason(options.signal);
      const stderr = tailOf(result.stderrTail);
      const detail = stderr === '' ? '' : `; its stderr ended with: ${stderr}`;
      if (result.timedOut)
        throw new ClassifierError(
          'timeout',
          withHint(
            `${name} did not answer within ${formatSeconds(options.timeoutMs)} for ${texts.length} text${texts.length === 1 ? '' : 's'} and was stopped (raise \`classifier_timeout\` if it is just slow)${detail}`,
          ),
        );
      const problem = result.stdoutTooLarge
        ? `it printed more than ${MAX_STDOUT_BYTES / 1024 / 1024} MiB`
        : result.exitCode !== 0
          ? result.exitCode === null
            ? `it was killed by ${result.signal}`
            : `it exited with status ${result.exitCode}`
          : undefined;
      const scores = problem ?? parseScores(result.stdout, texts.length);
      if (typeof scores === 'string')
        throw new ClassifierError('failed', withHint(`${name} failed: ${scores}${detail}`));
      return scores;
    },
  };
}

function formatSeconds(ms: number): string {
  const seconds = ms / 1000;
  return `${Number.isInteger(seconds) ? seconds : seconds.toFixed(1)} s`;
}
