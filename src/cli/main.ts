#!/usr/bin/env node
import { setFlagsFromString } from 'node:v8';
import { processIo } from './io.js';

// `--version` answers without loading the program (commander, the settings loader, the logger).
const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
  const { packageVersion } = await import('./version.js');
  process.stdout.write(`${processIo().programName} ${packageVersion()}\n`);
} else {
  // V8's young generation starts at 1 MiB a semi-space and doubles up to 16 MiB while start-up and the
  // first polls allocate; it never shrinks back, and two grown semi-spaces were most of what an idle
  // `run --watch` held beyond its code (bench/README.md). Growth factor 1 keeps it at 1 MiB: more,
  // smaller scavenges. Unlike `--max-semi-space-size`, this flag takes effect when set at run time.
  setFlagsFromString('--semi-space-growth-factor=1');
  const { runCli } = await import('./program.js');
  process.exitCode = await runCli(argv, processIo());
}
