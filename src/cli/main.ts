#!/usr/bin/env node
import { setFlagsFromString } from 'node:v8';
import { packageVersion, programNameFrom } from '../version.js';

// `--version` answers from this module and version.js alone: not the program (commander, the
// settings loader, the logger), not even io.js and the redaction patterns it loads.
const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
  process.stdout.write(`${programNameFrom(process.argv[1])} ${packageVersion()}\n`);
} else {
  // V8's young generation starts at 1 MiB a semi-space and doubles up to 16 MiB while start-up and the
  // first polls allocate; it never shrinks back, and two grown semi-spaces were most of what an idle
  // `run --watch` held beyond its code (bench/README.md). Growth factor 1 keeps it at 1 MiB: more,
  // smaller scavenges. Unlike `--max-semi-space-size`, this flag takes effect when set at run time.
  setFlagsFromString('--semi-space-growth-factor=1');
  // A reader that went away (`curupira runs show … | head`) is not a crash: what is left to print
  // is dropped, and the command (a daemon too) goes on to its normal end.
  for (const stream of [process.stdout, process.stderr])
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
    });
  const [{ runCli }, { processIo }] = await Promise.all([import('./program.js'), import('./io.js')]);
  process.exitCode = await runCli(argv, processIo());
}
