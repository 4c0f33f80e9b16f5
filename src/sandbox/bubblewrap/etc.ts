/**
 * The sandbox's /etc: the few entries programs need (users, name resolution, certificates, time,
 * the dynamic linker's cache), copied into one folder that is bound read-only at /etc: one mount
 * (each bind costs bubblewrap two mount calls and a read of the mount table, which grows with every
 * mount). Folders among them (certificates, alternatives) are copied whole, their symbolic links as
 * links, but only what anyone may read: a folder or file closed to others (`/etc/ssl/private`, a
 * server's keys) stays out even where curupira runs as root, whose sandboxed agent would otherwise
 * read it as its owner.
 *
 * The copy is made once per process and again when one of its entries changes (for a file its
 * inode, size, mode or modification time; for a folder the same of every folder and file in it:
 * adding, removing or replacing an entry changes its folder's time), under a name that says which
 * version it is, so that a running sandbox keeps the copy it started with. Folders are walked again
 * at most every few seconds; the top-level entries are looked at on every call.
 */
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readlinkSync,
  renameSync,
  rmSync,
  type Stats,
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
}

type Kind = 'file' | 'link' | 'dir';

interface Entry {
  /** The path under /etc, relative to the copy's root (`ssl/certs/ca-certificates.crt`). */
  rel: string;
  /** Where it is read from. */
  source: string;
  kind: Kind;
}

/** How often, at most, the folders among the entries are walked again to see whether they changed. */
const WALK_EVERY_MS = 5_000;

/** Whether everyone may read it (and, for a folder, enter it). */
function open(stat: Stats): boolean {
  return stat.isDirectory() ? (stat.mode & 0o005) === 0o005 : (stat.mode & 0o004) !== 0;
}

function stampOf(stat: Stats): string {
  return `${stat.ino}:${stat.size}:${stat.mtimeMs}:${stat.mode}`;
}

/**
 * What of `entries` this machine has and anyone may read, folders walked whole, and a digest of
 * their stamps. A link's target is not stamped: replacing a link changes its folder's time.
 */
function survey(entries: readonly string[], walk: boolean): { found: Entry[]; stamps: string[] } {
  const found: Entry[] = [];
  const stamps: string[] = [];
  const visit = (source: string, rel: string, stat: Stats): void => {
    if (stat.isSymbolicLink()) {
      found.push({ rel, source, kind: 'link' });
      stamps.push(`${rel}\0link`);
      return;
    }
    if (!open(stat)) return;
    if (stat.isFile()) {
      found.push({ rel, source, kind: 'file' });
      stamps.push(`${rel}\0${stampOf(stat)}`);
      return;
    }
    if (!stat.isDirectory()) return;
    found.push({ rel, source, kind: 'dir' });
    stamps.push(`${rel}\0${stampOf(stat)}`);
    if (!walk) return;
    let names: string[];
    try {
      names = readdirSync(source).sort();
    } catch {
      return;
    }
    for (const name of names) {
      const path = join(source, name);
      try {
        visit(path, `${rel}/${name}`, lstatSync(path));
      } catch {
        // gone since the listing
      }
    }
  };
  for (const entry of entries) {
    try {
      visit(entry, basename(entry), lstatSync(entry));
    } catch {
      // absent here
    }
  }
  return { found, stamps };
}

/** The last layout per cache folder: its top-level stamps, and when its folders were last walked. */
const made = new Map<string, { top: string; dir: string; walkedAt: number }>();

/** The /etc of a sandbox, made below `cacheDir` when missing. */
export function etcLayout(
  cacheDir: string,
  entries: readonly string[] = ETC_ENTRIES,
  now: number = Date.now(),
): EtcLayout {
  const top = survey(entries, false).stamps.join('\n');
  const last = made.get(cacheDir);
  if (last && last.top === top && now - last.walkedAt < WALK_EVERY_MS && existsSync(last.dir))
    return { dir: last.dir };
  const { found, stamps } = survey(entries, true);
  const hash = createHash('sha256');
  for (const stamp of stamps) hash.update(`${stamp}\n`);
  const dir = join(cacheDir, 'etc', hash.digest('hex').slice(0, 16));
  made.set(cacheDir, { top, dir, walkedAt: now });
  if (existsSync(dir)) return { dir };
  const building = `${dir}.${process.pid}.tmp`;
  rmSync(building, { recursive: true, force: true });
  mkdirSync(building, { recursive: true, mode: 0o755 });
  for (const { rel, source, kind } of found) {
    const target = join(building, rel);
    try {
      if (kind === 'dir') mkdirSync(target, { mode: 0o755 });
      else if (kind === 'link') symlinkSync(readlinkSync(source), target);
      else copyFileSync(source, target);
    } catch {
      // unreadable after all, or its folder was: the sandbox goes without it
    }
  }
  try {
    renameSync(building, dir);
  } catch {
    // another process made it first
    rmSync(building, { recursive: true, force: true });
  }
  return { dir };
}
