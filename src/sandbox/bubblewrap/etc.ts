/**
 * The sandbox's /etc: the few entries programs need (users, name resolution, certificates, time,
 * the dynamic linker's cache) with as few mounts as possible (each bind costs bubblewrap two mount
 * calls and a read of the mount table, which grows with every mount). The files and symbolic links
 * among them are copied into one folder, bound read-only at /etc; the folders among them
 * (certificates, alternatives) are bound read-only over empty folders made in that copy, so that
 * they stay current and need no copy of their hundreds of links.
 *
 * The copy is made once per process and again when one of its entries changes (inode, size or
 * modification time), under a name that says which version it is, so that a running sandbox keeps
 * the copy it started with.
 */
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readlinkSync,
  renameSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import { basename, join } from 'node:path';

/** The entries of /etc programs need to resolve names, users, certificates and time; not the rest. */
export const ETC_ENTRIES = [
  '/etc/alternatives',
  '/etc/ca-certificates',
  '/etc/ca-certificates.conf',
  '/etc/crypto-policies',
  '/etc/gitconfig',
  '/etc/group',
  '/etc/host.conf',
  '/etc/hosts',
  '/etc/ld.so.cache',
  '/etc/ld.so.conf',
  '/etc/ld.so.conf.d',
  '/etc/localtime',
  '/etc/mime.types',
  '/etc/nsswitch.conf',
  '/etc/os-release',
  '/etc/passwd',
  '/etc/pki',
  '/etc/resolv.conf',
  '/etc/ssl',
  '/etc/timezone',
];

export interface EtcLayout {
  /** The folder to bind read-only at /etc. */
  dir: string;
  /** Folders of /etc to bind read-only over their empty stand-ins in `dir`. */
  folders: string[];
}

type Kind = 'file' | 'link' | 'dir';

function kinds(entries: readonly string[]): { entry: string; kind: Kind; stamp: string }[] {
  const out: { entry: string; kind: Kind; stamp: string }[] = [];
  for (const entry of entries) {
    try {
      const stat = lstatSync(entry);
      const kind: Kind = stat.isSymbolicLink() ? 'link' : stat.isDirectory() ? 'dir' : 'file';
      out.push({ entry, kind, stamp: `${stat.ino}:${stat.size}:${stat.mtimeMs}:${stat.mode}` });
    } catch {
      // absent here
    }
  }
  return out;
}

const made = new Map<string, string>();

/** The /etc of a sandbox, made below `cacheDir` when missing. */
export function etcLayout(cacheDir: string, entries: readonly string[] = ETC_ENTRIES): EtcLayout {
  const present = kinds(entries);
  const hash = createHash('sha256');
  // Folders are bound, not copied: only whether they are there names the version.
  for (const { entry, kind, stamp } of present) hash.update(`${entry}\0${kind === 'dir' ? 'dir' : stamp}\n`);
  const dir = join(cacheDir, 'etc', hash.digest('hex').slice(0, 16));
  const folders = present.filter(({ kind }) => kind === 'dir').map(({ entry }) => entry);
  if (made.get(cacheDir) === dir || existsSync(dir)) {
    made.set(cacheDir, dir);
    return { dir, folders };
  }
  const building = `${dir}.${process.pid}.tmp`;
  rmSync(building, { recursive: true, force: true });
  mkdirSync(building, { recursive: true, mode: 0o755 });
  for (const { entry, kind } of present) {
    const target = join(building, basename(entry));
    try {
      if (kind === 'dir') mkdirSync(target);
      else if (kind === 'link') symlinkSync(readlinkSync(entry), target);
      else copyFileSync(entry, target);
    } catch {
      // unreadable (a permission): the sandbox goes without it, as without a missing entry
    }
  }
  try {
    renameSync(building, dir);
  } catch {
    // another process made it first
    rmSync(building, { recursive: true, force: true });
  }
  made.set(cacheDir, dir);
  return { dir, folders };
}
