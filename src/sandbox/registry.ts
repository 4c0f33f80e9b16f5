/**
 * The sandbox backends, by name. A new backend (a container, a microVM) is one folder
 * implementing `SandboxBackend` (./types.ts) and one line here; `auto` and `required` take the
 * first one in `PREFERRED` that starts.
 */
import { createBubblewrapBackend } from './bubblewrap/index.js';
import type { SandboxBackend } from './types.js';

export const PREFERRED = ['bubblewrap'] as const;

let backends: Map<string, SandboxBackend> | undefined;

/** One instance per process: each caches its probe. */
export function sandboxBackend(name: (typeof PREFERRED)[number]): SandboxBackend {
  backends ??= new Map([['bubblewrap', createBubblewrapBackend()]]);
  const backend = backends.get(name);
  if (!backend) throw new Error(`unknown sandbox backend ${name}`);
  return backend;
}
