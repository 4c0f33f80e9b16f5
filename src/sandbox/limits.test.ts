import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { primeControlGroupMoves } from './limits.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A control-group tree of plain files: `procs` is what the own group's `cgroup.procs` lists. */
function fakeTree(selfCgroup: string, procs: string, own = 'curupira') {
  const dir = mkdtempSync(join(tmpdir(), 'sbx-limits-'));
  dirs.push(dir);
  const root = join(dir, 'cgroup');
  mkdirSync(join(root, 'pids', own), { recursive: true });
  writeFileSync(join(root, 'pids', own, 'cgroup.procs'), procs);
  const self = join(dir, 'self-cgroup');
  writeFileSync(self, selfCgroup);
  return { root, self, procsFile: join(root, 'pids', own, 'cgroup.procs') };
}

describe('priming a move into a control group', () => {
  it('writes curupira’s own pid into the group that lists it already (a move to where it is)', async () => {
    const tree = fakeTree(`8:pids:/curupira\n4:memory:/other\n`, `1\n${process.pid}\n77\n`);
    const primed = await primeControlGroupMoves({ root: tree.root, selfCgroup: tree.self });
    expect(primed).toBe(true);
    expect(readFileSync(tree.procsFile, 'utf8')).toBe(String(process.pid));
  });

  it('writes nothing where the group curupira names as its own does not list it', async () => {
    const tree = fakeTree(`8:pids:/curupira\n`, `1\n${process.pid + 1}\n`);
    const primed = await primeControlGroupMoves({ root: tree.root, selfCgroup: tree.self });
    expect(primed).toBe(false);
    expect(readFileSync(tree.procsFile, 'utf8')).toBe(`1\n${process.pid + 1}\n`);
  });

  it('writes nothing without a hierarchy it can use', async () => {
    const tree = fakeTree(`2:cpu:/curupira\n`, `${process.pid}\n`);
    const primed = await primeControlGroupMoves({ root: tree.root, selfCgroup: tree.self });
    expect(primed).toBe(false);
    expect(readFileSync(tree.procsFile, 'utf8')).toBe(`${process.pid}\n`);
  });
});
