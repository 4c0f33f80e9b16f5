/**
 * `curupira reset RUN_ID`: lifts the local failure budget of the item that run worked on (issue 12):
 * its failures are forgotten, an escalation is removed, and the automation runs the item again the
 * next time it comes up (`curupira run`; a running daemon that held it back polls it again at once).
 * With `escalated_label`, the label on GitHub still holds the item back until a person removes it:
 * the message says so.
 */
import type { Command } from 'commander';
import { loadSettings } from '../config/load.js';
import { escalatedLabel } from '../coordination/escalation.js';
import { openStore, stateLocation } from '../store/index.js';
import { runItemName } from '../triggers/registry.js';
import { type CliIo, writeLine } from './io.js';
import type { GlobalOptions } from './program.js';
import { runFromArgument } from './runs.js';

export function registerReset(program: Command, io: CliIo, globals: () => GlobalOptions): void {
  program
    .command('reset <run-id>')
    .description(
      'Forget the failures of the item a run worked on (any run of it, or a prefix only one run has): an escalated item runs again.',
    )
    .action(async (id: string) => {
      const { settings } = loadSettings(globals().config);
      const store = await openStore(stateLocation(settings.execution));
      try {
        const run = await runFromArgument(
          store,
          id,
          io,
          '`curupira runs --status escalated` lists escalated items.',
        );
        if (!run) return;
        const what = `${run.automationId} ${runItemName(run)}`;
        const state = await store.getItemFailures(run.taskKey);
        if (!state || !(await store.clearItemFailures(run.taskKey))) {
          writeLine(io.stdout, `No failures are counted for ${what}; nothing to reset.`);
          return;
        }
        const automation = settings.automations.find((a) => a.id === run.automationId);
        const label = automation ? escalatedLabel(settings, automation) : undefined;
        writeLine(
          io.stdout,
          !state.escalatedAt
            ? `Reset ${what}: its ${state.failures} counted failure${state.failures === 1 ? '' : 's'} are forgotten.`
            : label
              ? // The label on GitHub holds the item back on every host until a person removes it.
                `Reset ${what}: its escalation (${state.failures} failures) is removed here, but the item still carries the label '${label}' (escalated_label) on GitHub, which holds it back: remove that label and it runs again the next time it is dispatched.`
              : `Reset ${what}: its escalation (${state.failures} failures) is removed; it runs again the next time it is dispatched.`,
        );
      } finally {
        await store.close();
      }
    });
}
