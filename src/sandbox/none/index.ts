/**
 * No sandbox: the agent runs as curupira's user, with what that user can reach (today's
 * behaviour before issue 26). `sandbox = "none"`, or `auto` where no other backend starts.
 */
import type { SandboxBackend } from '../types.js';

export function createNoSandbox(): SandboxBackend {
  return {
    name: 'none',
    probe: async () => ({ ok: true }),
    wrap: async (_spec, executable, args) => ({
      executable,
      args: [...args],
      unenforced: [],
      dispose: async () => {},
    }),
  };
}
