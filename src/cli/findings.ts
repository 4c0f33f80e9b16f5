/**
 * `curupira findings`: the findings of code-review watches (issue 29), read from the state file:
 * open ones by default, oldest first, one line each; `--json` for all their fields.
 */
import type { Command } from 'commander';
import { loadSettings } from '../config/load.js';
import { UsageError } from '../core/errors.js';
import { makeVisible } from '../screening/text.js';
import { openStore, stateLocation } from '../store/index.js';
import type { FindingRecord } from '../store/types.js';
import { type CliIo, writeJson, writeLine } from './io.js';
import type { GlobalOptions } from './program.js';

const STATUSES = ['open', 'resolved', 'all'] as const;

/** One finding in one line; the agent wrote the title, so what cannot be seen is shown. */
export function findingLine(f: FindingRecord): string {
  const lines = f.lineStart === f.lineEnd ? `${f.lineStart}` : `${f.lineStart}-${f.lineEnd}`;
  const seen =
    f.status === 'resolved'
      ? `resolved at ${(f.resolvedCommit ?? '').slice(0, 12)}`
      : `last seen at ${f.lastSeenCommit.slice(0, 12)}`;
  return `#${String(f.id).padEnd(5)} ${f.watch.padEnd(16)} ${f.severity.padEnd(8)} ${f.category.padEnd(15)} ${makeVisible(`${f.file}:${lines}`)}  ${makeVisible(f.title)}  (${seen})`;
}

export function registerFindings(program: Command, io: CliIo, globals: () => GlobalOptions): void {
  program
    .command('findings')
    .description('List the findings of code-review watches (open ones by default), from the state file.')
    .option('--watch <id>', 'only this watch (its automation id)')
    .option('--status <status>', `open, resolved or all (default open)`, 'open')
    .option('--json', 'print JSON')
    .action(async (options: { watch?: string; status: string; json?: boolean }) => {
      if (!(STATUSES as readonly string[]).includes(options.status))
        throw new UsageError(`--status must be one of ${STATUSES.join(', ')}, got '${options.status}'`);
      const status = options.status as (typeof STATUSES)[number];
      const { settings } = loadSettings(globals().config);
      const store = await openStore(stateLocation(settings.execution), { readonly: true });
      try {
        const findings = await store.listFindings({
          ...(options.watch ? { watch: options.watch } : {}),
          ...(status === 'all' ? {} : { status }),
        });
        if (options.json) {
          writeJson(io.stdout, findings);
          return;
        }
        if (findings.length === 0) {
          writeLine(
            io.stdout,
            `No ${status === 'all' ? '' : `${status} `}findings${options.watch ? ` for ${options.watch}` : ''}.`,
          );
          return;
        }
        for (const finding of findings) writeLine(io.stdout, findingLine(finding));
      } finally {
        await store.close();
      }
    });
}
