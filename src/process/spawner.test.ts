import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCommand } from './command.js';
import { helperPid } from './spawner.js';

const node = process.execPath;
const env = { PATH: process.env.PATH };

describe('the command helper', () => {
  it('starts commands from a helper process, not from this one', async () => {
    const result = await runCommand(node, ['-e', 'process.stdout.write(String(process.ppid))'], { env });
    expect(result.exitCode).toBe(0);
    const parent = Number(result.stdout);
    expect(parent).not.toBe(process.pid);
    expect(parent).toBe(helperPid());
  });

  it('runs commands at the same time', async () => {
    // Each prints when it started and when it ended; every one starts before the first one ends.
    const script = 'const t = Date.now(); setTimeout(() => process.stdout.write(t + " " + Date.now()), 500)';
    const results = await Promise.all([1, 2, 3, 4].map(() => runCommand(node, ['-e', script], { env })));
    const spans = results.map((r) => r.stdout.split(' ').map(Number) as [number, number]);
    const lastStart = Math.max(...spans.map(([start]) => start));
    const firstEnd = Math.min(...spans.map(([, end]) => end));
    expect(lastStart).toBeLessThan(firstEnd);
  });

  it('reports a command as failed, not run again, when the helper dies under it; the next one starts a new helper', async () => {
    await runCommand(node, ['-e', '0'], { env });
    const first = helperPid()!;
    // The command says it runs by creating a file; the helper is killed under it once it does.
    const started = join(mkdtempSync(join(tmpdir(), 'curupira-spawner-')), 'started');
    const script = `require('node:fs').writeFileSync(${JSON.stringify(started)}, ''); setTimeout(() => {}, 3000)`;
    const running = runCommand(node, ['-e', script], { env });
    for (let i = 0; i < 500 && !existsSync(started); i += 1)
      await new Promise((done) => setTimeout(done, 10));
    expect(existsSync(started)).toBe(true);
    process.kill(first, 'SIGKILL');
    await expect(running).rejects.toThrow(/helper exited while the command ran/);
    const after = await runCommand(node, ['-e', 'process.stdout.write(String(process.ppid))'], { env });
    expect(after.exitCode).toBe(0);
    expect(Number(after.stdout)).not.toBe(first);
    expect(Number(after.stdout)).toBe(helperPid());
  });

  it('passes output that is not one line, and large output, intact', async () => {
    const script =
      'process.stdout.write("x\\n".repeat(200000) + "é\\u0000end"); process.stderr.write("e\\n")';
    const result = await runCommand(node, ['-e', script], { env });
    expect(result.stdout).toBe(`${'x\n'.repeat(200000)}é\u0000end`);
    expect(result.stderr).toBe('e\n');
  });
});
