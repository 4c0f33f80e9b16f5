#!/usr/bin/env node
import { processIo } from './io.js';

// `--version` answers without loading the program (commander, the settings loader, the logger).
const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
  const { packageVersion } = await import('./version.js');
  process.stdout.write(`${processIo().programName} ${packageVersion()}\n`);
} else {
  const { runCli } = await import('./program.js');
  process.exitCode = await runCli(argv, processIo());
}
