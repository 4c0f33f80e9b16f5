/**
 * Agents that die with their fleet worker (issue 17): see lifeline.mjs. The worker registers each
 * agent's process group while it runs; if the worker dies (even by SIGKILL), the lifeline stops
 * those groups at once, so the poller's restart of the task elsewhere never meets a live agent.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export interface Lifeline {
  /** An agent group started: stopped if this process dies before `forget`. */
  watch(pgid: number): void;
  /** The group ended (or was stopped here). */
  forget(pgid: number): void;
  /** This process ends cleanly: the lifeline exits (stopping whatever is still listed). */
  close(): void;
}

/** Where the script is: beside this module (built) or in `src/` (a checkout's `dist/`). */
function lifelineScript(): string {
  const candidates = [
    fileURLToPath(new URL('./lifeline.mjs', import.meta.url)),
    fileURLToPath(new URL('../../src/process/lifeline.mjs', import.meta.url)),
  ];
  const found = candidates.find((path) => existsSync(path));
  if (!found) throw new Error(`lifeline script not found; looked in ${candidates.join(', ')}`);
  return found;
}

/** Starts the lifeline process; `graceMs` between its SIGTERM and SIGKILL of a left group. */
export function startLifeline(graceMs: number): Lifeline {
  const child = spawn(process.execPath, [lifelineScript(), String(Math.max(1, Math.round(graceMs)))], {
    stdio: ['pipe', 'ignore', 'ignore'],
    // Its own group: a signal meant for this process's group (Ctrl+C) does not end it first.
    detached: true,
    env: {},
  });
  child.unref();
  child.on('error', () => {});
  const stdin = child.stdin;
  stdin.on('error', () => {});
  (stdin as unknown as { unref?: () => void }).unref?.();
  const send = (line: string): void => {
    if (!stdin.destroyed) stdin.write(`${line}\n`);
  };
  return {
    watch: (pgid) => send(`+${pgid}`),
    forget: (pgid) => send(`-${pgid}`),
    close: () => {
      if (!stdin.destroyed) stdin.end();
    },
  };
}
