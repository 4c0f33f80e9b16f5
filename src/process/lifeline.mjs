#!/usr/bin/env node
/**
 * A fleet worker's lifeline (issue 17): a tiny process that outlives its parent only to stop the
 * agents the parent left. The parent writes `+PGID` when an agent group starts and `-PGID` when it
 * ends, one per line, on this process's stdin. When stdin ends (the parent exited, however: even
 * SIGKILL closes the pipe), every group still listed gets SIGTERM, then SIGKILL after the grace
 * (argv[2], ms), and this process exits. Without it an agent of a killed worker would keep running
 * while the poller restarts its task on another host: two live agents of one item.
 *
 * No dependencies: it runs from `src/` in tests and from `dist/` after the build copies it.
 */
const grace = Number(process.argv[2]) > 0 ? Number(process.argv[2]) : 5000;
const groups = new Set();
let pending = '';

function alive(pgid) {
  // kill(-1) would reach every process, kill(0) our own group: never a group id below 2.
  if (!Number.isInteger(pgid) || pgid < 2) return false;
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

function signal(pgid, name) {
  if (!Number.isInteger(pgid) || pgid < 2) return;
  try {
    process.kill(-pgid, name);
  } catch {
    // Gone already.
  }
}

let reaping = false;
function reap() {
  if (reaping) return;
  reaping = true;
  const left = [...groups].filter(alive);
  if (left.length === 0) process.exit(0);
  for (const pgid of left) signal(pgid, 'SIGTERM');
  const deadline = Date.now() + grace;
  const timer = setInterval(() => {
    const still = left.filter(alive);
    if (still.length === 0 || Date.now() >= deadline) {
      for (const pgid of still) signal(pgid, 'SIGKILL');
      clearInterval(timer);
      process.exit(0);
    }
  }, 50);
}

// Signals that reach this process stop nothing: only the parent's end does.
for (const name of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(name, () => {});
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  pending += chunk;
  const lines = pending.split('\n');
  pending = lines.pop() ?? '';
  for (const line of lines) {
    const match = /^([+-])(\d+)$/.exec(line.trim());
    if (!match) continue;
    const pgid = Number(match[2]);
    if (pgid <= 1) continue;
    if (match[1] === '+') groups.add(pgid);
    else groups.delete(pgid);
  }
});
process.stdin.on('end', reap);
process.stdin.on('close', reap);
process.stdin.on('error', reap);
