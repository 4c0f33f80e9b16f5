import { describe, expect, it } from 'vitest';
import { AgentNotFoundError } from '../core/errors.js';
import { CommandError, runChecked, runCommand } from './command.js';

describe('runCommand', () => {
  it('passes argv without a shell and captures output', async () => {
    const result = await runCommand(
      'node',
      ['-e', 'process.stdout.write(process.argv[1])', '$(echo hi); rm -rf /'],
      {
        env: { PATH: process.env.PATH },
      },
    );
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe('$(echo hi); rm -rf /');
  });

  it('gives the child only the environment it was handed', async () => {
    const result = await runCommand(
      'node',
      ['-e', 'process.stdout.write(JSON.stringify(Object.keys(process.env)))'],
      {
        env: { PATH: process.env.PATH, ONLY_THIS: '1' },
      },
    );
    expect(JSON.parse(result.stdout).sort()).toEqual(['ONLY_THIS', 'PATH']);
  });

  it('reports a missing executable as AgentNotFoundError', async () => {
    await expect(runCommand('curupira-no-such-exe', [])).rejects.toBeInstanceOf(AgentNotFoundError);
  });

  it('runChecked throws CommandError with stderr on failure', async () => {
    const failing = runChecked('node', ['-e', 'console.error("boom"); process.exit(3)']);
    await expect(failing).rejects.toBeInstanceOf(CommandError);
    await expect(failing).rejects.toThrow(/exited with status 3: boom/);
  });

  it('writes the input to stdin', async () => {
    const result = await runCommand(
      'node',
      [
        '-e',
        'let s="";process.stdin.on("data",(c)=>s+=c).on("end",()=>process.stdout.write(s.toUpperCase()))',
      ],
      { input: 'piped text\n' },
    );
    expect(result).toEqual({ exitCode: 0, stdout: 'PIPED TEXT\n', stderr: '', timedOut: false });
  });

  it('stops a command at its deadline and says so', async () => {
    const result = await runCommand('node', ['-e', 'setTimeout(() => {}, 60_000)'], { timeoutMs: 200 });
    expect(result.timedOut).toBe(true);
    expect(result.exitCode).toBe(-1);
    await expect(
      runChecked('node', ['-e', 'setTimeout(() => {}, 60_000)'], { timeoutMs: 200 }),
    ).rejects.toThrow(/did not finish in time/);
  });

  it('an abort stops the command and rejects', async () => {
    const controller = new AbortController();
    const running = runCommand('node', ['-e', 'setTimeout(() => {}, 60_000)'], { signal: controller.signal });
    setTimeout(() => controller.abort(), 100);
    await expect(running).rejects.toThrow(/could not start node/);
    await expect(runCommand('node', ['-e', '0'], { signal: controller.signal })).rejects.toThrow(/aborted/);
  });
});
