import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { agentOutcome } from '../core/outcome.js';
import { hiddenPathHint } from './hidden-path.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function planted(): string {
  const dir = mkdtempSync(join(tmpdir(), 'curupira-hidden-'));
  dirs.push(dir);
  const file = join(dir, 'agent.mjs');
  writeFileSync(file, '');
  return file;
}

describe('a path the sandbox hid from the agent', () => {
  it('is named, with what to do, when the agent says it is missing and it exists outside', () => {
    const file = planted();
    const outputs = [
      `node:internal/modules/cjs/loader:1210\n  throw err;\nError: Cannot find module '${file}'\n    at Module._resolveFilename`,
      `Error: ENOENT: no such file or directory, open '${file}'`,
      `/bin/sh: 1: ${file}: No such file or directory`,
      `python3: can't open file '${file}': [Errno 2] No such file or directory`,
    ];
    for (const stderr of outputs) {
      const hint = hiddenPathHint(stderr, 'bubblewrap');
      expect(hint, stderr).toContain(`${file} exists but the bubblewrap sandbox hides it`);
      expect(hint).toContain(`add ${join(file, '..')} to the profile's sandbox_read_paths`);
    }
  });

  it('says nothing when the path is missing outside too, or nothing names one', () => {
    const file = planted();
    expect(hiddenPathHint(`Error: Cannot find module '${file}.gone'`, 'bubblewrap')).toBeUndefined();
    expect(hiddenPathHint("Error: Cannot find module 'left-pad'", 'bubblewrap')).toBeUndefined();
    expect(hiddenPathHint('fatal: not a git repository', 'bubblewrap')).toBeUndefined();
  });

  it('ends the failed run reason', () => {
    const { status, reason } = agentOutcome({
      executable: '/opt/bin/claude',
      exitCode: 1,
      signal: null,
      cancelled: false,
      timedOut: false,
      stderrTail: "Error: Cannot find module '/home/me/tools/agent.mjs'",
      hint: 'the hint',
      stalled: false,
      stallMs: 0,
      timeoutMs: 1000,
      stopping: false,
      reported: false,
      doneWithError: false,
      knownSession: false,
      parkUntil: 0,
    });
    expect(status).toBe('failed');
    expect(reason).toBe(
      "/opt/bin/claude exited with status 1: the hint; its error output: Error: Cannot find module '/home/me/tools/agent.mjs'",
    );
  });
});
