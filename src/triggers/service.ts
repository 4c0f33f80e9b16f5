/**
 * What a trigger whose items live outside GitHub (Linear, Jira) needs from curupira: its
 * credential, read from the environment or a file (never from the settings file), and HTTP to its
 * service. Tests hand in a `fetch` that reaches a local stand-in; the credential is registered with
 * the logger the moment it is read, so no log line, error or page can print it.
 */
import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { SourceAuthError } from '../core/errors.js';
import { registerSecret } from '../log.js';

/** Where a credential is: an environment variable, else a file (relative to the settings file's folder). */
export interface SecretRef {
  env?: string | undefined;
  file?: string | undefined;
}

export interface ServiceKit {
  /**
   * The credential `ref` points at, trimmed; `what` names it in the error when there is none
   * (`the Linear API key`). The error says where it looked, never a value.
   */
  secret(ref: SecretRef, what: string): string;
  /** HTTP to the trigger's service (the platform's `fetch`, or a test's). */
  fetch(url: string, init: RequestInit): Promise<Response>;
}

export interface ServiceKitOptions {
  env: NodeJS.ProcessEnv;
  /** The settings file's folder: a relative credential file is read from there. */
  dir: string;
  fetch?: (url: string, init: RequestInit) => Promise<Response>;
}

export function createServiceKit(options: ServiceKitOptions): ServiceKit {
  const fetcher = options.fetch ?? ((url: string, init: RequestInit) => globalThis.fetch(url, init));
  return {
    secret(ref, what) {
      const fromEnv = ref.env === undefined ? undefined : options.env[ref.env]?.trim();
      if (fromEnv) {
        registerSecret(fromEnv);
        return fromEnv;
      }
      if (ref.file !== undefined) {
        const path = isAbsolute(ref.file) ? ref.file : resolve(options.dir, ref.file);
        let text: string;
        try {
          text = readFileSync(path, 'utf8').trim();
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
          throw new SourceAuthError(`${what}: cannot read the file ${path} (${code})`);
        }
        if (text === '') throw new SourceAuthError(`${what}: the file ${path} is empty`);
        registerSecret(text);
        return text;
      }
      const where = [
        ref.env === undefined ? undefined : `the ${ref.env} environment variable is not set`,
        'no file is named',
      ].filter(Boolean);
      throw new SourceAuthError(`${what} is missing: ${where.join(' and ')}`);
    },
    fetch: fetcher,
  };
}

/** A kit for places that reach no service (a schedule's doctor check); every use fails, saying so. */
export const noService: ServiceKit = {
  secret(_ref, what) {
    throw new SourceAuthError(`${what}: no credentials here`);
  },
  fetch() {
    return Promise.reject(new Error('no service access here'));
  },
};

/**
 * The write-back keys a tracker trigger (Linear, Jira) shares: a result comment, a state after the
 * run, a state once its pull requests merged. True when any of them asks for a write.
 */
export function trackerWritesWanted(config: {
  result_comment?: boolean | undefined;
  result_state?: string | undefined;
  merged_state?: string | undefined;
}): boolean {
  return (
    config.result_comment === true || config.result_state !== undefined || config.merged_state !== undefined
  );
}
