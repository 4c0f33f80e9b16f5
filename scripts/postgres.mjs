// The machine's PostgreSQL for the tests (`node scripts/postgres.mjs` runs the check alone).
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The PostgreSQL store and fleet tests use the machine's own server (127.0.0.1:5432, trust auth,
 * database `test`; CURUPIRA_TEST_PG_URL names another). When nothing answers there, the local
 * cluster is started with Debian's pg_ctlcluster, as the machine's own services are.
 */
function pgAnswers() {
  const url = process.env.CURUPIRA_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
  const result = spawnSync('pg_isready', ['-d', url, '-t', '3'], { stdio: 'ignore' });
  return result.error === undefined && result.status === 0;
}
export function ensurePostgres() {
  if (pgAnswers()) return;
  let versions = [];
  try {
    versions = readdirSync('/etc/postgresql');
  } catch {}
  if (versions.length === 0) {
    console.log(
      '\n== postgresql: not answering and no cluster under /etc/postgresql; the PostgreSQL tests will fail',
    );
    return;
  }
  const version = versions.sort().at(-1);
  console.log(
    `\n== postgresql: not answering; starting the local cluster (pg_ctlcluster ${version} main start)`,
  );
  const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const command = asRoot ? 'pg_ctlcluster' : 'sudo';
  const args = [
    ...(asRoot ? [] : ['-n', 'pg_ctlcluster']),
    '--skip-systemctl-redirect',
    version,
    'main',
    'start',
  ];
  const result = spawnSync(command, args, { stdio: 'inherit' });
  for (let i = 0; i < 30 && !pgAnswers(); i++) spawnSync('sleep', ['1']);
  if (!pgAnswers())
    console.log(
      `== postgresql: still not answering (exit ${result.status ?? result.error?.message}); the PostgreSQL tests will fail`,
    );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  ensurePostgres();
  process.exit(pgAnswers() ? 0 : 1);
}
