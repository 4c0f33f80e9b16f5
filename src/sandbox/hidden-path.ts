/**
 * A sandboxed agent that failed because a file it needs is outside the sandbox (a wrapper script
 * that runs a program from the user's home, a CLI installed by hand somewhere else): the failure
 * says which path, that it exists outside, and how to let the agent see it.
 */
import { existsSync } from 'node:fs';
import { dirname, isAbsolute } from 'node:path';

/** Messages that name a missing absolute path, as Node.js, shells and the C library print them. */
const MISSING_PATH = [
  /Cannot find module '(\/[^']+)'/,
  /ENOENT: no such file or directory, \w+ '(\/[^']+)'/,
  /(?:^|[\s:'"])(\/[^\s:'"]+)['"]?: No such file or directory/m,
  /can't open file '(\/[^']+)'/,
];

/**
 * The hint for a failed sandboxed run, or undefined: the first absolute path the agent's error
 * output says is missing that does exist for curupira (so only the sandbox hid it).
 */
export function hiddenPathHint(
  stderr: string,
  backend: string,
  exists: (path: string) => boolean = existsSync,
): string | undefined {
  for (const pattern of MISSING_PATH) {
    const path = pattern.exec(stderr)?.[1];
    if (!path || !isAbsolute(path) || !exists(path)) continue;
    return `${path} exists but the ${backend} sandbox hides it (it shows the system folders, the CLI's install folder, the worktree and sandbox_read_paths): add ${dirname(path)} to the profile's sandbox_read_paths, or set sandbox = "none" on the automation (docs/sandbox.md)`;
  }
  return undefined;
}
