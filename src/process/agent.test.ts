import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentNotFoundError, CurupiraError } from '../core/errors.js';
import { registerSecret } from '../log.js';
import { type SpawnAgentOptions, spawnAgent } from './agent.js';
import { agentHelperPid, useAgentHelper, warmAgentHelper } from './agent-spawner.js';

const root = mkdtempSync(join(tmpdir(), 'curupira-agent-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const baseEnv = { PATH: dirname(process.execPath) };
let counter = 0;

/** Writes a small Node program and returns options that run it. */
function script(source: string, extra: Partial<SpawnAgentOptions> = {}): SpawnAgentOptions {
  counter += 1;
  const file = join(root, `child-${counter}.mjs`);
  writeFileSync(file, source);
  return {
    executable: 'node',
    args: [file],
    cwd: root,
    env: baseEnv,
    maxOutputBytes: 64 * 1024,
    killGraceMs: 500,
    ...extra,
  };
}

/** Running means: exists and is not a zombie waiting to be reaped. */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return !existsSync('/proc/self');
  }
}

/** A grandchild that ignores SIGTERM, holds the output pipes, and announces its pid. */
const SPAWN_STUBBORN_GRANDCHILD = `
import { spawn } from 'node:child_process';
const g = spawn(process.execPath, ['-e', "process.on('SIGTERM', () => {}); setInterval(() => {}, 1000)"], {
  stdio: ['ignore', 'inherit', 'inherit'],
});
console.log('grandchild ' + g.pid);
g.unref();
`;

// Every test of spawnAgent runs twice: the agent spawned from this process, and from the agent
// helper (agent-spawner.ts), which a daemon uses once it is ready.
describe.each([
  ['from this process', false],
  ['from the agent helper', true],
])('agents started %s', (_how, viaHelper) => {
  beforeAll(async () => {
    mkdirSync(join(root, String(viaHelper)), { recursive: true });
    useAgentHelper(viaHelper);
    if (viaHelper) expect(await warmAgentHelper()).toBe(true);
  });
  afterAll(() => useAgentHelper(true));

  it('starts the agent where it says', async () => {
    const result = await spawnAgent(script('process.stdout.write(String(process.ppid));'));
    expect(result.exitCode).toBe(0);
    expect(Number(result.stdoutTail)).toBe(viaHelper ? agentHelperPid() : process.pid);
  });

  describe('spawnAgent', () => {
    it('streams lines to the callback and the full stream to the transcript, keeping a bounded tail', async () => {
      const transcript = join(root, String(viaHelper), 'runs', 'one', 'transcript.jsonl');
      const lines: string[] = [];
      const result = await spawnAgent(
        script(
          `for (let i = 0; i < 3000; i++) process.stdout.write(JSON.stringify({ i, pad: 'x'.repeat(80) }) + '\\n');
           process.stdout.write('{"last":true}');`,
          { maxOutputBytes: 1000, stdoutFile: transcript, onStdoutLine: (line) => lines.push(line) },
        ),
      );
      expect(result.exitCode).toBe(0);
      expect(result.timedOut).toBe(false);
      expect(lines).toHaveLength(3001);
      expect(JSON.parse(lines[2999]!)).toMatchObject({ i: 2999 });
      expect(lines[3000]).toBe('{"last":true}');
      const file = readFileSync(transcript, 'utf8');
      expect(file.split('\n')).toHaveLength(3001);
      expect(file.endsWith('{"last":true}')).toBe(true);
      expect(Buffer.byteLength(result.stdoutTail)).toBeLessThanOrEqual(1000);
      expect(file.endsWith(result.stdoutTail)).toBe(true);
    });

    it('appends to an existing transcript and captures stderr separately', async () => {
      const stdoutFile = join(root, String(viaHelper), 'append.out');
      const stderrFile = join(root, String(viaHelper), 'append.err');
      writeFileSync(stdoutFile, 'earlier\n');
      const stderrLines: string[] = [];
      const result = await spawnAgent(
        script(`console.log('now'); console.error('warning: disk'); process.exit(3)`, {
          stdoutFile,
          stderrFile,
          onStderrLine: (l) => stderrLines.push(l),
        }),
      );
      expect(result.exitCode).toBe(3);
      expect(readFileSync(stdoutFile, 'utf8')).toBe('earlier\nnow\n');
      expect(readFileSync(stderrFile, 'utf8')).toBe('warning: disk\n');
      expect(stderrLines).toEqual(['warning: disk']);
      expect(result.stderrTail).toBe('warning: disk\n');
    });

    it('never writes a registered secret or a token-shaped string to the transcript', async () => {
      registerSecret('curupira-test-secret-4242');
      const stdoutFile = join(root, String(viaHelper), 'secret.out');
      const seen: string[] = [];
      await spawnAgent(
        script(
          `console.log(JSON.stringify({ env: 'curupira-test-secret-4242', gh: 'ghp_${'a'.repeat(36)}' }))`,
          { stdoutFile, onStdoutLine: (l) => seen.push(l) },
        ),
      );
      const file = readFileSync(stdoutFile, 'utf8');
      expect(file).not.toContain('curupira-test-secret-4242');
      expect(file).not.toContain('ghp_aaaa');
      expect(JSON.parse(file)).toEqual({ env: '[redacted]', gh: '[redacted]' });
      expect(seen[0]).not.toContain('curupira-test-secret-4242');
    });

    it('gives the agent exactly the environment it is handed and an empty, closed stdin', async () => {
      const lines: string[] = [];
      await spawnAgent(
        script(
          `let n = 0;
           process.stdin.on('data', (d) => { n += d.length; });
           process.stdin.on('end', () => {
             console.log(JSON.stringify({ keys: Object.keys(process.env).sort(), stdin: n, cwd: process.cwd() }));
           });`,
          { env: { ...baseEnv, ONLY_THIS: 'yes' }, onStdoutLine: (l) => lines.push(l) },
        ),
      );
      expect(JSON.parse(lines[0]!)).toEqual({ keys: ['ONLY_THIS', 'PATH'], stdin: 0, cwd: root });
    });

    it('passes arguments as they are, with no shell in between', async () => {
      const lines: string[] = [];
      const options = script(`console.log(JSON.stringify(process.argv.slice(2)))`, {
        onStdoutLine: (l) => lines.push(l),
      });
      const tricky = ['--', '-rf', '$(touch pwned)', '; echo hi', 'it\'s "quoted"'];
      await spawnAgent({ ...options, args: [...options.args, ...tricky] });
      expect(JSON.parse(lines[0]!)).toEqual(tricky);
      expect(existsSync(join(root, 'pwned'))).toBe(false);
    });

    it('on timeout stops the whole process group, including a grandchild that ignores SIGTERM', async () => {
      let grandchild = 0;
      const result = await spawnAgent(
        script(`${SPAWN_STUBBORN_GRANDCHILD}\nsetInterval(() => {}, 1000);`, {
          timeoutMs: 400,
          killGraceMs: 300,
          onStdoutLine: (l) => {
            if (l.startsWith('grandchild ')) grandchild = Number(l.slice(11));
          },
        }),
      );
      expect(result.timedOut).toBe(true);
      expect(result.cancelled).toBe(false);
      expect(result.exitCode).toBeNull();
      expect(result.signal).toBe('SIGTERM');
      expect(grandchild).toBeGreaterThan(0);
      expect(isRunning(result.pid)).toBe(false);
      expect(isRunning(grandchild)).toBe(false);
    });

    it('escalates to SIGKILL when the agent itself ignores SIGTERM', async () => {
      const result = await spawnAgent(
        script(`process.on('SIGTERM', () => {}); console.log('up'); setInterval(() => {}, 1000);`, {
          timeoutMs: 300,
          killGraceMs: 300,
        }),
      );
      expect(result.timedOut).toBe(true);
      expect(result.signal).toBe('SIGKILL');
      expect(isRunning(result.pid)).toBe(false);
    });

    it('after the agent exits on its own, leaves nothing of its group running', async () => {
      let grandchild = 0;
      const result = await spawnAgent(
        script(`${SPAWN_STUBBORN_GRANDCHILD}\nsetTimeout(() => process.exit(0), 100);`, {
          killGraceMs: 300,
          onStdoutLine: (l) => {
            if (l.startsWith('grandchild ')) grandchild = Number(l.slice(11));
          },
        }),
      );
      expect(result.exitCode).toBe(0);
      expect(result.timedOut).toBe(false);
      expect(grandchild).toBeGreaterThan(0);
      expect(isRunning(grandchild)).toBe(false);
    });

    it('stops the agent when the caller aborts', async () => {
      const controller = new AbortController();
      const result = await spawnAgent(
        script(`console.log('working'); setInterval(() => {}, 1000);`, {
          signal: controller.signal,
          onStdoutLine: () => controller.abort(),
        }),
      );
      expect(result.cancelled).toBe(true);
      expect(result.timedOut).toBe(false);
      expect(result.signal).toBe('SIGTERM');
      expect(isRunning(result.pid)).toBe(false);
    });

    it('stops the agent and rejects when a line callback throws', async () => {
      let pid = 0;
      const run = spawnAgent(
        script(`console.log('{"session_id":"s1"}'); setInterval(() => {}, 1000);`, {
          onSpawn: (p) => {
            pid = p;
          },
          onStdoutLine: () => {
            throw new Error('state database is gone');
          },
        }),
      );
      await expect(run).rejects.toThrow('state database is gone');
      expect(isRunning(pid)).toBe(false);
    });

    it('reports a missing executable before starting anything, using the PATH it is handed', async () => {
      const options = script('');
      const missing = spawnAgent({ ...options, executable: 'curupira-no-such-agent' });
      await expect(missing).rejects.toBeInstanceOf(AgentNotFoundError);
      await expect(missing).rejects.toThrow('Required executable not found: curupira-no-such-agent');
      const notOnGivenPath = spawnAgent({ ...options, env: { PATH: '/nonexistent' } });
      await expect(notOnGivenPath).rejects.toThrow('Required executable not found: node');
    });

    it('reports a working directory that does not exist', async () => {
      const gone = join(root, 'no-such-worktree');
      const run = spawnAgent({ ...script(''), cwd: gone });
      await expect(run).rejects.toBeInstanceOf(CurupiraError);
      await expect(run).rejects.toThrow(`could not start node: working directory does not exist: ${gone}`);
    });
  });

  describe('spawnAgent when things go wrong around the agent', () => {
    it('a transcript that cannot be written (a full disk) stops the agent and says where, without throwing', async () => {
      // /dev/full answers every write with ENOSPC, exactly as a full disk does.
      const started = Date.now();
      const result = await spawnAgent(
        script(`setInterval(() => console.log('{"type":"tick"}'), 20);`, {
          stdoutFile: '/dev/full',
          killGraceMs: 200,
        }),
      );
      expect(result.writeError).toMatchObject({ path: '/dev/full', code: 'ENOSPC' });
      expect(result.exitCode === null || result.signal !== null || result.exitCode !== 0).toBe(true);
      expect(Date.now() - started).toBeLessThan(20_000);
    });

    it('drops an output line longer than the limit instead of parsing it, and keeps it in the transcript', async () => {
      const transcript = join(root, String(viaHelper), 'long', 'transcript.jsonl');
      const lines: string[] = [];
      const result = await spawnAgent(
        script(
          `console.log('{"a":1}'); console.log('{"big":"' + 'x'.repeat(5000) + '"}'); process.stdout.write('{"last":true}');`,
          { maxLineLength: 1024, stdoutFile: transcript, onStdoutLine: (line) => lines.push(line) },
        ),
      );
      expect(result.exitCode).toBe(0);
      expect(lines).toEqual(['{"a":1}', '{"last":true}']);
      expect(result.droppedLines).toBe(1);
      expect(readFileSync(transcript, 'utf8')).toContain('x'.repeat(5000));
    });
  });
});

describe('longTimeout', () => {
  it('holds waits longer than a Node timer can (2^31 ms), in several steps', async () => {
    const { vi } = await import('vitest');
    vi.useFakeTimers();
    try {
      const { longTimeout } = await import('./agent.js');
      let fired = 0;
      longTimeout(() => {
        fired += 1;
      }, 40_000 * 60_000);
      vi.advanceTimersByTime(2 ** 31 - 1);
      expect(fired).toBe(0);
      vi.advanceTimersByTime(40_000 * 60_000 - (2 ** 31 - 1) - 1);
      expect(fired).toBe(0);
      vi.advanceTimersByTime(1);
      expect(fired).toBe(1);
      const cancelled = longTimeout(() => {
        fired += 1;
      }, 10);
      cancelled.cancel();
      vi.advanceTimersByTime(100);
      expect(fired).toBe(1);
    } finally {
      vi.useRealTimers();
    }
  });
});
