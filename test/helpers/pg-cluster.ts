/**
 * A PostgreSQL cluster of a test's own, for faults the machine's shared server must never see (a
 * stop and a start): `initdb` into a temporary folder, `pg_ctl` on a free private port, trust
 * authentication on 127.0.0.1 only. The binaries come from /usr/lib/postgresql/<version>/bin; as
 * root, they run as the `postgres` user (initdb refuses root).
 */
import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);

export interface PrivateCluster {
  /** `postgres://postgres@127.0.0.1:<port>/test`. */
  url: string;
  port: number;
  /** `pg_ctl stop -m fast`: every connection ends, new ones are refused. */
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops it and removes its folder. */
  destroy(): Promise<void>;
}

/** The newest PostgreSQL's bin folder, or undefined when none is installed. */
export function postgresBin(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(root, versions[0], 'bin');
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export async function startPrivateCluster(): Promise<PrivateCluster> {
  const bin = postgresBin();
  if (!bin) throw new Error('no PostgreSQL binaries under /usr/lib/postgresql');
  const dir = mkdtempSync(join(tmpdir(), 'curupira-pg-'));
  const data = join(dir, 'data');
  const asRoot = userInfo().uid === 0;
  const owner = asRoot ? await run('id', ['-u', 'postgres']).then((r) => Number(r.stdout.trim())) : undefined;
  const group = asRoot ? await run('id', ['-g', 'postgres']).then((r) => Number(r.stdout.trim())) : undefined;
  if (owner !== undefined && group !== undefined) chownSync(dir, owner, group);
  const pgRun = (tool: string, args: string[]) =>
    run(join(bin, tool), args, {
      ...(owner !== undefined && group !== undefined ? { uid: owner, gid: group } : {}),
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C' },
      cwd: dir,
    });
  const port = await freePort();
  await pgRun('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  const ctl = (action: 'start' | 'stop') =>
    pgRun(
      'pg_ctl',
      action === 'start'
        ? [
            '-D',
            data,
            '-l',
            join(dir, 'server.log'),
            '-w',
            '-o',
            `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`,
            'start',
          ]
        : ['-D', data, '-m', 'fast', '-w', 'stop'],
    ).then(() => undefined);
  await ctl('start');
  const url = `postgres://postgres@127.0.0.1:${port}/test`;
  const admin = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/postgres` });
  await admin.connect();
  try {
    await admin.query('CREATE DATABASE test');
  } finally {
    await admin.end();
  }
  let running = true;
  return {
    url,
    port,
    async stop() {
      await ctl('stop');
      running = false;
    },
    async start() {
      await ctl('start');
      running = true;
    },
    async destroy() {
      if (running) await ctl('stop').catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
