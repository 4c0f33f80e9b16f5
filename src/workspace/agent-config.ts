/**
 * Agent configuration a pull request cannot rewrite (issue 27, point 5), the workspace half: in the
 * worktree of a run for a pull request (or a remediation of one), every agent-facing configuration
 * file (src/agents/config-paths.ts) is made what the base commit has, whatever the worktree was cut
 * from (the default branch, or the pull request's head):
 * - a file the head changed gets the base's content;
 * - a file the head added is removed;
 * - a file the head deleted is written back.
 * Files the head tracks are marked `skip-worktree` in the worktree's index, so the restored copies
 * are not staged, committed or shown by `git status` (the pull request's own changes stay in its
 * history, untouched). A file written back that the head deleted is untracked: an agent that
 * commits everything would commit it, and the delivery review then holds that commit for a person.
 */
import { chmod, mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { isAgentConfigPath } from '../agents/config-paths.js';
import { git, gitResult } from './git.js';

interface Entry {
  mode: string;
  oid: string;
}

/** The agent-configuration files of a tree: path → mode and blob id (submodules and links skipped). */
async function agentConfigFiles(cwd: string, rev: string): Promise<Map<string, Entry>> {
  const out = await git(['ls-tree', '-r', '-z', '--full-tree', rev], { cwd });
  const files = new Map<string, Entry>();
  for (const record of out.split('\0')) {
    const tab = record.indexOf('\t');
    if (tab === -1) continue;
    const [mode, type, oid] = record.slice(0, tab).split(' ');
    const path = record.slice(tab + 1);
    if (type !== 'blob' || mode === '120000' || !isAgentConfigPath(path)) continue;
    files.set(path, { mode: mode!, oid: oid! });
  }
  return files;
}

export interface PinnedConfig {
  /** The paths whose copy in the worktree now comes from the base (changed, added or deleted by the head). */
  restored: string[];
}

/** Makes the worktree's agent configuration the base's (see the module comment). */
export async function pinAgentConfig(options: { cwd: string; base: string }): Promise<PinnedConfig> {
  const { cwd, base } = options;
  const baseFiles = await agentConfigFiles(cwd, base);
  const headFiles = await agentConfigFiles(cwd, 'HEAD');
  const restored: string[] = [];
  for (const path of new Set([...baseFiles.keys(), ...headFiles.keys()])) {
    const want = baseFiles.get(path);
    const have = headFiles.get(path);
    if (want && have && want.oid === have.oid && want.mode === have.mode) continue;
    const file = join(cwd, path);
    if (want) {
      const content = await gitBlob(cwd, want.oid);
      await mkdir(dirname(file), { recursive: true });
      await rm(file, { force: true, recursive: true });
      await writeFile(file, content);
      await chmod(file, want.mode === '100755' ? 0o755 : 0o644);
    } else {
      await rm(file, { force: true });
    }
    if (have) await git(['update-index', '--skip-worktree', '--', path], { cwd });
    restored.push(path);
  }
  return { restored: restored.sort() };
}

async function gitBlob(cwd: string, oid: string): Promise<Buffer> {
  const result = await gitResult(['cat-file', 'blob', oid], { cwd });
  if (result.exitCode !== 0) throw new Error(`git cat-file blob ${oid} failed: ${result.stderr}`);
  return Buffer.from(result.stdout, 'utf8');
}
