/**
 * A sandboxed run's tools, served by the engine itself on the socket in the sandbox's run folder
 * (src/mcp/socket.ts): the same tools `curupira mcp --run` serves for that run, acting on the
 * engine's own store. The agent's CLI reaches them through the relay (src/sandbox/relay.ts).
 */
import type { ResolvedAutomation } from '../../config/types.js';
import type { Logger } from '../../log.js';
import { runTools } from '../../mcp/run-tools.js';
import { type RunSocket, serveRunSocket } from '../../mcp/socket.js';
import type { Store } from '../../store/types.js';
import { packageVersion } from '../../version.js';

export function runToolsSocket(options: {
  store: Store;
  runId: string;
  automation: ResolvedAutomation;
  /** The commit a review is pinned to (the trigger's `agentTools`). */
  commit: string | undefined;
  log: Logger;
  fields: Record<string, string>;
}): (socketPath: string) => Promise<RunSocket> {
  const { store, runId, automation, commit, log, fields } = options;
  return (socketPath) =>
    serveRunSocket({
      socketPath,
      runId,
      async session() {
        const run = await store.getRun(runId);
        if (!run) throw new Error(`no run with id ${runId}`);
        const { tools, instructions } = runTools({
          run,
          automation: { config: automation.config, offersTools: automation.trigger.agentTools !== undefined },
          commit,
          withStore: (use) => use(store),
        });
        return { tools, info: { name: 'curupira', version: packageVersion(), instructions } };
      },
      onError: (error) =>
        log.warn(
          { ...fields, error: error instanceof Error ? error.message : String(error) },
          'A tool of the run’s sandboxed agent failed',
        ),
    });
}
