/**
 * `curupira allow RUN_ID`: lets the exact text a screening block stopped run once. The allowance is
 * recorded with who and when; the next time the item is dispatched with that same text (same
 * digest), it runs, and the allowance is used up. Edited text is screened again as usual.
 */
import { userInfo } from 'node:os';
import type { Command } from 'commander';
import { loadSettings } from '../config/load.js';
import type { Settings } from '../config/types.js';
import { blockedByScreening } from '../core/types.js';
import { stateDir } from '../engine/paths.js';
import { connectDaemon } from '../server/client.js';
import { openStore, stateLocation } from '../store/index.js';
import { runItemName } from '../triggers/registry.js';
import { EXIT, setExitCode } from './exit-codes.js';
import { type CliIo, writeLine } from './io.js';
import type { GlobalOptions } from './program.js';
import { runFromArgument } from './runs.js';

function localUser(env: NodeJS.ProcessEnv): string {
  try {
    return userInfo().username;
  } catch {
    return env.USER ?? env.LOGNAME ?? 'unknown';
  }
}

/**
 * With a daemon serving these settings, the allowance goes through it (recorded with `by`), so it
 * offers the item now instead of at its next poll; one already waiting is kept, never doubled.
 * Undefined when no daemon answers.
 */
async function allowThroughDaemon(
  settings: Settings,
  runId: string,
  by: string,
): Promise<{ allowedBy: string; allowedAt: string } | undefined> {
  const daemon = await connectDaemon(stateDir(settings));
  if (!daemon) return undefined;
  try {
    const answer = await daemon.call('POST', `/runs/${encodeURIComponent(runId)}/allow`, { by });
    return answer.status === 202 ? (answer.body as { allowedBy: string; allowedAt: string }) : undefined;
  } catch {
    return undefined;
  }
}

export function registerAllow(program: Command, io: CliIo, globals: () => GlobalOptions): void {
  program
    .command('allow <run-id>')
    .description(
      'Let the text a screening block stopped run once (the run id, or a prefix only one run has); recorded with who and when.',
    )
    .option('--by <name>', 'who allows it (default: the local user)')
    .action(async (id: string, options: { by?: string }) => {
      const { settings } = loadSettings(globals().config);
      const store = await openStore(stateLocation(settings.execution));
      try {
        const run = await runFromArgument(
          store,
          id,
          io,
          '`curupira runs --status blocked` lists blocked runs.',
        );
        if (!run) return;
        if (!blockedByScreening(run)) {
          writeLine(
            io.stderr,
            `Run ${run.id} was not blocked by screening (its status is ${run.status}); nothing to allow.`,
          );
          setExitCode(EXIT.failure);
          return;
        }
        const waiting = (await store.listAllowances({ runId: run.id, pending: true }))[0];
        if (waiting) {
          writeLine(
            io.stdout,
            `Run ${run.id} is already allowed (by ${waiting.allowedBy} at ${waiting.allowedAt}); its text runs once when ${runItemName(run)} is next dispatched.`,
          );
          return;
        }
        const by = options.by?.trim() || localUser(io.env);
        const viaDaemon = await allowThroughDaemon(settings, run.id, by);
        const allowance = viaDaemon ?? (await store.addAllowance(run.id, by));
        const when = viaDaemon
          ? 'the running daemon dispatches the item now'
          : 'it runs the next time the item is dispatched (`curupira run`, or a daemon’s next poll)';
        writeLine(
          io.stdout,
          `Allowed run ${run.id} (${run.automationId} ${runItemName(run)}) once, by ${allowance.allowedBy} at ${allowance.allowedAt}: its exact text runs once; ${when}. Edited text is screened again.`,
        );
      } finally {
        await store.close();
      }
    });
}
