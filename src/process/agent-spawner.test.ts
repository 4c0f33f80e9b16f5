import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { type SpawnAgentOptions, spawnAgent } from './agent.js';
import { agentHelperPid, agentHelperSocket, useAgentHelper, warmAgentHelper } from './agent-spawner.js';

const root = mkdtempSync(join(tmpdir(), 'curupira-agent-helper-'));
afterAll(() => {
  useAgentHelper(true);
  rmSync(root, { recursive: true, force: true });
});

let counter = 0;
function script(source: string, extra: Partial<SpawnAgentOptions> = {}): SpawnAgentOptions {
  counter += 1;
  const file = join(root, `child-${counter}.mjs`);
  writeFileSync(file, source);
  return {
    executable: 'node',
    args: [file],
    cwd: root,
    env: { PATH: dirname(process.execPath) },
    maxOutputBytes: 64 * 1024,
    killGraceMs: 500,
    ...extra,
  };
}

async function until(check: () => boolean, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** A program that counts its starts in `counts`, says it started, waits for `go`, prints, exits 3. */
function counted(counts: string, go: string): string {
  return `
import { appendFileSync, existsSync } from 'node:fs';
appendFileSync(${JSON.stringify(counts)}, 'started\\n');
console.log('first ' + process.ppid);
const wait = setInterval(() => {
  if (!existsSync(${JSON.stringify(go)})) return;
  clearInterval(wait);
  console.log('second');
  process.stderr.write('bye\\n');
  process.exit(3);
}, 10);
`;
}

describe('the agent helper', () => {
  beforeEach(async () => {
    useAgentHelper(true);
    expect(await warmAgentHelper()).toBe(true);
  });

  it('starts the agent as the leader of its own group, with its output byte for byte', async () => {
    // 1 MiB in uneven writes, multi-byte characters split across them, then who it is on stderr.
    const options = script(`import { readFileSync } from 'node:fs';
const chunk = 'é€😀'.repeat(1000) + '\\n';
let left = 1024 * 1024;
function write() {
  while (left > 0) {
    const piece = chunk.slice(0, Math.min(chunk.length, 1 + (left % 997)));
    left -= Buffer.byteLength(piece);
    if (!process.stdout.write(piece)) return process.stdout.once('drain', write);
  }
  const pgid = Number(readFileSync('/proc/self/stat', 'latin1').split(') ')[1].split(' ')[2]);
  process.stderr.write(JSON.stringify({ ppid: process.ppid, pid: process.pid, pgid }) + '\\n');
}
write();`);
    const transcript = join(root, 'big.out');
    const result = await spawnAgent({ ...options, stdoutFile: transcript });
    expect(result.exitCode).toBe(0);
    const info = JSON.parse(result.stderrTail) as { ppid: number; pid: number; pgid: number };
    expect(info.ppid).toBe(agentHelperPid());
    expect(info.pid).toBe(result.pid);
    expect(info.pgid).toBe(result.pid);
    // What a direct spawn of the same program writes, for comparison.
    useAgentHelper(false);
    const directFile = join(root, 'big-direct.out');
    const direct = await spawnAgent({ ...options, stdoutFile: directFile });
    expect(direct.exitCode).toBe(0);
    expect(JSON.parse(direct.stderrTail).ppid).toBe(process.pid);
    const through = readFileSync(transcript);
    expect(through.length).toBeGreaterThan(1024 * 1024 - 10);
    expect(through.equals(readFileSync(directFile))).toBe(true);
  });

  it('sees the end of a stream that ended before the start was reported (an agent that prints nothing and exits at once)', async () => {
    // The stream's end can reach this process before the helper's word that the agent started; a
    // missed end left each such run waiting the 2 s drain for pipes that had closed long before.
    let drained = 0;
    for (let i = 0; i < 200; i += 1) {
      const result = await spawnAgent({
        executable: '/bin/sh',
        args: ['-c', 'echo one'],
        cwd: root,
        env: { PATH: '/usr/bin:/bin' },
        maxOutputBytes: 4096,
      });
      expect(result.stdoutTail).toBe('one\n');
      if (result.durationMs >= 1_900) drained += 1;
    }
    expect(drained).toBe(0);
  });

  it('when the helper is killed while the agent runs, the agent keeps running, all its output arrives, and it is never started again', async () => {
    const counts = join(root, 'counts-1');
    const go = join(root, 'go-1');
    const helper = agentHelperPid()!;
    const lines: string[] = [];
    const run = spawnAgent(script(counted(counts, go), { onStdoutLine: (line) => lines.push(line) }));
    await until(() => lines.length === 1, 'the first line');
    expect(lines[0]).toBe(`first ${helper}`);
    process.kill(helper, 'SIGKILL');
    await until(() => !alive(helper), 'the helper to die');
    writeFileSync(go, '');
    const result = await run;
    expect(lines).toEqual([`first ${helper}`, 'second']);
    expect(result.stderrTail).toBe('bye\n');
    // Its parent is gone, so its status is not known; it is not made up.
    expect(result.exitCode).toBeNull();
    expect(result.signal).toBeNull();
    expect(readFileSync(counts, 'utf8')).toBe('started\n');
    // The next agent starts a new helper, and meanwhile runs from this process.
    const next = await spawnAgent(script('process.stdout.write(String(process.ppid));'));
    expect(Number(next.stdoutTail)).toBe(process.pid);
    expect(await warmAgentHelper()).toBe(true);
    expect(agentHelperPid()).not.toBe(helper);
  });

  it('when the helper is lost before it took the request, the agent starts from this process, once', async () => {
    const counts = join(root, 'counts-2');
    const go = join(root, 'go-2');
    writeFileSync(go, '');
    const helper = agentHelperPid()!;
    // Stopped, it cannot read the request; killed, it never will.
    process.kill(helper, 'SIGSTOP');
    const lines: string[] = [];
    const run = spawnAgent(script(counted(counts, go), { onStdoutLine: (line) => lines.push(line) }));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(existsSync(counts)).toBe(false);
    process.kill(helper, 'SIGKILL');
    const result = await run;
    expect(result.exitCode).toBe(3);
    expect(lines).toEqual([`first ${process.pid}`, 'second']);
    expect(readFileSync(counts, 'utf8')).toBe('started\n');
  });

  it("removes the socket folders of processes that died without removing theirs, and keeps a live one's", async () => {
    const dead = spawnSync('/bin/true').pid!;
    const deadDir = join(tmpdir(), `cur-spawn-${dead}-test`);
    const liveDir = join(tmpdir(), 'cur-spawn-1-test');
    mkdirSync(deadDir, { recursive: true });
    mkdirSync(liveDir, { recursive: true });
    try {
      // A new helper (the next one after this one is lost) sweeps when it starts.
      const helper = agentHelperPid()!;
      process.kill(helper, 'SIGKILL');
      await until(() => !alive(helper), 'the helper to die');
      await until(() => agentHelperPid() === undefined, 'the helper to be forgotten');
      expect(await warmAgentHelper()).toBe(true);
      expect(existsSync(deadDir)).toBe(false);
      expect(existsSync(liveDir)).toBe(true);
      expect(existsSync(dirname(agentHelperSocket()!))).toBe(true);
    } finally {
      rmSync(deadDir, { recursive: true, force: true });
      rmSync(liveDir, { recursive: true, force: true });
    }
  });

  it('closes a connection that does not carry its token, and one that names no waiting agent', async () => {
    const socketPath = agentHelperSocket()!;
    expect(socketPath).toBeTruthy();
    const attempt = (header: string): Promise<{ answer: string; closed: boolean }> =>
      new Promise((resolve) => {
        const socket = createConnection(socketPath, () => socket.write(header));
        let answer = '';
        socket.on('data', (chunk) => {
          answer += chunk.toString();
        });
        socket.on('error', () => {});
        socket.on('close', () => resolve({ answer, closed: true }));
        setTimeout(() => {
          socket.destroy();
          resolve({ answer, closed: false });
        }, 3_000);
      });
    const stranger = await attempt(`${'0'.repeat(32)} 1 0\n`);
    expect(stranger).toEqual({ answer: '', closed: true });
    const garbage = await attempt('hello there\n');
    expect(garbage).toEqual({ answer: '', closed: true });
    const trailing = await attempt(`${'0'.repeat(32)} 1 0\nand more`);
    expect(trailing).toEqual({ answer: '', closed: true });
    // The helper still serves agents afterwards.
    const after = await spawnAgent(script('process.stdout.write(String(process.ppid));'));
    expect(Number(after.stdoutTail)).toBe(agentHelperPid());
  });

  it("relays a sandbox's gate (fd 3) and control channel (fd 4), and holds the agent until the gate opens", async () => {
    const order: string[] = [];
    const marks = join(root, 'marks');
    const result = await spawnAgent({
      executable: '/bin/sh',
      args: [
        '-c',
        // Waits on fd 3 (as bubblewrap's --block-fd does), then talks on fd 4.
        `read -r gate <&3; echo "ran" >> "$0"; echo "gate=$gate"; echo "hello" >&4; read -r reply <&4; echo "reply=$reply"`,
        marks,
      ],
      cwd: root,
      env: { PATH: '/usr/bin:/bin' },
      maxOutputBytes: 4096,
      beforeStart: async (pid) => {
        await new Promise((resolve) => setTimeout(resolve, 200));
        order.push(`before ${alive(pid)} ${existsSync(marks)}`);
      },
      channel: (socket) => {
        socket.setEncoding('utf8');
        socket.on('data', (text: string) => {
          if (text.includes('hello')) socket.write('world\n');
        });
      },
    });
    expect(result.exitCode).toBe(0);
    expect(order).toEqual(['before true false']);
    expect(result.stdoutTail).toBe('gate=go\nreply=world\n');
  });
});

// Last in the file: it leaves this process's helper given up on.
describe('an agent helper that cannot start', () => {
  it('is given up after three starts that never said ready; agents then start from this process', async () => {
    useAgentHelper(true);
    expect(await warmAgentHelper()).toBe(true);
    const helper = agentHelperPid()!;
    process.kill(helper, 'SIGKILL');
    await until(() => agentHelperPid() === undefined, 'the helper to be forgotten');
    const execPath = process.execPath;
    // A "node" that exits at once without reading its script, as a packaged binary that does not
    // take `-e` would; each start is counted.
    const starts = join(root, 'helper-starts');
    const fake = join(root, 'not-node.sh');
    writeFileSync(fake, `#!/bin/sh\necho start >> '${starts}'\n`, { mode: 0o755 });
    process.execPath = fake;
    try {
      for (let attempt = 0; attempt < 3; attempt += 1) expect(await warmAgentHelper()).toBe(false);
      const started: number[] = [];
      const result = await spawnAgent({
        ...script('process.stdout.write(String(process.ppid));'),
        executable: execPath,
        onSpawn: (pid) => started.push(pid),
      });
      expect(Number(result.stdoutTail)).toBe(process.pid);
      // Given up: no fourth helper is started.
      expect(await warmAgentHelper()).toBe(false);
      expect(agentHelperPid()).toBeUndefined();
      expect(readFileSync(starts, 'utf8')).toBe('start\n'.repeat(3));
    } finally {
      process.execPath = execPath;
    }
  });
});
