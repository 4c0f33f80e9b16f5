/**
 * `curupira retry RUN_ID`: a person asks for a finished run's item again, as Retry on the board
 * does. It lifts what holds the item (an operator's cancel, an escalation). With a daemon serving
 * these settings the daemon does it and starts the item now (its saved session resumes, a schedule
 * fires again, an event trigger polls); without one the holds are lifted in the state file and the
 * next `curupira run` runs the item.
 */
import type { Command } from 'commander';
import { loadSettings } from '../config/load.js';
import { liftCancelHold } from '../coordination/cancel-hold-feature.js';
import { blockedByScreening, isTerminal, type RunRecord } from '../core/types.js';
import { stateDir } from '../engine/paths.js';
import { connectDaemon } from '../server/client.js';
import { openStore, stateLocation } from '../store/index.js';
import type { Store } from '../store/types.js';
import { runItemName } from '../triggers/registry.js';
import { EXIT, setExitCode } from './exit-codes.js';
import { type CliIo, writeLine } from './io.js';
import type { GlobalOptions } from './program.js';
import { runFromArgument } from './runs.js';

const DAEMON_WORDS: Readonly<Record<string, string>> = {
  resumed: 'the running daemon resumes its saved session now',
  fired: 'the running daemon fires its schedule again now',
  polling: 'the running daemon polls its automation now and runs the item when it still matches',
};

/** Without a daemon: what held the item, lifted in the state file (the daemon's Retry does the same). */
async function liftHolds(store: Store, run: RunRecord): Promise<string[]> {
  const lifted: string[] = [];
  if (await liftCancelHold(store, run.taskKey)) lifted.push('the cancel that held it');
  if (run.status === 'escalated' && (await store.clearItemFailures(run.taskKey)))
    lifted.push('its escalation');
  return lifted;
}

export function registerRetry(program: Command, io: CliIo, globals: () => GlobalOptions): void {
  program
    .command('retry <run-id>')
    .description(
      'Run a finished run’s item again, as Retry on the board does: lifts a cancel or an escalation that holds it (with a daemon, it starts now).',
    )
    .action(async (id: string) => {
      const { settings } = loadSettings(globals().config);
      const store = await openStore(stateLocation(settings.execution));
      try {
        const run = await runFromArgument(store, id, io, '`curupira runs` lists runs.');
        if (!run) return;
        const what = `${run.automationId} ${runItemName(run, settings.automations)}`;
        if (!isTerminal(run.status)) {
          writeLine(io.stderr, `Run ${run.id} (${what}) has not finished (${run.status}); nothing to retry.`);
          setExitCode(EXIT.failure);
          return;
        }
        if (blockedByScreening(run)) {
          // The same text would be blocked again: a person lets it through with `allow`.
          writeLine(
            io.stderr,
            `Run ${run.id} (${what}) was blocked by screening; retrying would block the same text again. \`curupira allow ${run.id}\` lets it run once.`,
          );
          setExitCode(EXIT.failure);
          return;
        }
        const daemon = await connectDaemon(stateDir(settings));
        if (daemon) {
          const answer = await daemon.call('POST', `/runs/${encodeURIComponent(run.id)}/retry`);
          if (answer.status >= 300) {
            const error = answer.body.error as { code: string; message: string } | undefined;
            writeLine(
              io.stderr,
              `Could not retry ${run.id}: ${error?.message ?? `the daemon answered ${answer.status}`}`,
            );
            setExitCode(EXIT.failure);
            return;
          }
          const result = String(answer.body.result);
          writeLine(io.stdout, `Retrying ${run.id} (${what}): ${DAEMON_WORDS[result] ?? result}.`);
          return;
        }
        const lifted = await liftHolds(store, run);
        writeLine(
          io.stdout,
          `${lifted.length > 0 ? `Lifted ${lifted.join(' and ')} for` : 'Nothing held'} ${what}; no daemon is running: the next \`curupira run\` runs it (its saved session resumes, if it has one).`,
        );
      } finally {
        await store.close();
      }
    });
}
