/**
 * Issue 26, acceptance: a hostile agent (test/fixtures/agents/hostile.mjs) tries every escape the
 * issue names from inside its sandbox: the operator's SSH key, the GitHub CLI's token, the state
 * file and the serve token, the local API, writes outside its worktree and into another run's,
 * the local PostgreSQL port, another loopback port, a host not on the allow-list, a canary model
 * key anywhere it can look (environment, files, /proc), and forking without bound. With a sandbox
 * every attempt fails and the blocked connections are recorded on the run; with `sandbox = "none"`
 * the same agent gets through each time, so the suite can fail.
 *
 * Where no sandbox can start (no bubblewrap, user namespaces off), the suite is skipped with the
 * reason, never passed silently.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/core/types.js';
import { sandboxBackend } from '../../src/sandbox/registry.js';
import { createHarness, type Harness, onlyRun, ROOT } from '../helpers/harness.js';

const probe = await sandboxBackend('bubblewrap').probe();
if (!probe.ok) console.warn(`sandbox escape suite skipped: ${probe.reason}`);

const HOSTILE = join(ROOT, 'test/fixtures/agents/hostile.mjs');
const CANARY_PREFIX = 'sk-ant-canary-';
const CANARY = `${CANARY_PREFIX}${'7'.repeat(40)}`;
const FORKS = 200;

interface Attempt {
  ok: boolean;
  detail: string;
}

function listen(server: Server | HttpServer, port = 0): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : 0);
    });
  });
}

function close(server: Server | HttpServer): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

/** The local PostgreSQL port: the machine's server when it runs, else a stand-in on 5432. */
async function postgresPort(servers: Server[]): Promise<number> {
  const stand = createServer((socket) => {
    socket.on('error', () => {});
    socket.destroy();
  });
  try {
    await listen(stand, 5432);
    servers.push(stand);
  } catch {
    // taken: the machine's PostgreSQL (or something else) listens there, which is what we try
  }
  return 5432;
}

describe.skipIf(!probe.ok)('sandbox escape suite (bubblewrap)', () => {
  const servers: (Server | HttpServer)[] = [];
  let targets: Record<string, unknown>;
  let h: Harness;
  let modelKeys: string[] = [];

  beforeEach(async () => {
    h = await createHarness({ provider: 'claude' });
    const home = h.dir;
    const settings = h.settings();
    const stateDir = join(settings.execution.state_db_path, '..');
    mkdirSync(join(home, '.ssh'), { recursive: true });
    writeFileSync(join(home, '.ssh', 'id_rsa'), '-----BEGIN OPENSSH PRIVATE KEY-----\nplanted\n');
    mkdirSync(join(home, '.config', 'gh'), { recursive: true });
    writeFileSync(join(home, '.config', 'gh', 'hosts.yml'), 'github.com:\n  oauth_token: gho_planted\n');
    mkdirSync(stateDir, { recursive: true });
    writeFileSync(join(stateDir, 'serve-token'), 'planted-serve-token\n');
    const otherWorktree = join(settings.execution.workspace_dir, 'web', '.curupira-worktrees', 'other-run');
    mkdirSync(otherWorktree, { recursive: true });
    const serveApi = createHttpServer((_req, res) => res.end('{"status":"ok"}'));
    serveApi.on('clientError', (_error, socket) => socket.destroy());
    const hello = (socket: import('node:net').Socket): void => {
      socket.on('error', () => {});
      socket.end('hello\n');
    };
    const loopback = createServer(hello);
    const other = createServer(hello);
    const tcpServers: Server[] = [];
    const pg = await postgresPort(tcpServers);
    servers.push(serveApi, loopback, other, ...tcpServers);
    targets = {
      sshKey: join(home, '.ssh', 'id_rsa'),
      ghHosts: join(home, '.config', 'gh', 'hosts.yml'),
      stateFile: settings.execution.state_db_path,
      settingsFile: h.settingsFile,
      serveToken: join(stateDir, 'serve-token'),
      outsideFile: join(settings.execution.workspace_dir, 'outside.txt'),
      otherWorktree,
      servePort: await listen(serveApi),
      postgresPort: pg,
      loopbackPort: await listen(loopback),
      otherHost: 'localhost',
      otherHostPort: await listen(other),
      canaryPrefixHex: Buffer.from(CANARY_PREFIX).toString('hex'),
      forkCount: FORKS,
    };
    h.env.ANTHROPIC_API_KEY = CANARY;
    // The model API's stand-in: it records the key each request carried.
    const model = createHttpServer((req, res) => {
      modelKeys.push(String(req.headers['x-api-key'] ?? ''));
      res.end('{"type":"message"}');
    });
    modelKeys = [];
    h.env.ANTHROPIC_BASE_URL = `http://127.0.0.1:${await listen(model)}`;
    servers.push(model);
    // An SSH agent's socket the operator has (a plain unix socket stands in for it).
    const agentSocket = createServer(() => {});
    await new Promise<void>((resolve) => agentSocket.listen(join(home, 'ssh-agent.sock'), resolve));
    servers.push(agentSocket);
    h.env.SSH_AUTH_SOCK = join(home, 'ssh-agent.sock');
  });

  afterEach(async () => {
    for (const server of servers.splice(0)) await close(server);
    await h?.cleanup();
  });

  async function hostileRun(sandbox: string): Promise<{ run: RunRecord; results: Record<string, Attempt> }> {
    h.configure({
      settingsExtra: 'sandbox_max_processes = 64\nsandbox_memory_mb = 2048',
      profileExtra: `executable = ${JSON.stringify(HOSTILE)}`,
      agentEnv: { HOSTILE_TARGETS: JSON.stringify(targets) },
      automation: `[automations.fix]
trigger_type = "github-issues"
repository = "api"
repo = "acme/api"
labels = ["agent-ready"]
sandbox = "${sandbox}"
prompt = "Fix issue \${issue_number}"
`,
    });
    const result = await h.run();
    const run = onlyRun(result.runs);
    expect(run.transcriptPath, `${run.status}: ${run.reason}`).toBeTruthy();
    const transcript = readFileSync(run.transcriptPath!, 'utf8');
    const line = transcript.split('\n').find((l) => l.includes('"type":"hostile"'));
    expect(line, transcript.slice(0, 2000)).toBeTruthy();
    const { results } = JSON.parse(line!) as { results: Record<string, Attempt> };
    // Writes are judged on the host: a write into the sandbox's own copy of a folder escapes nothing.
    const t = targets as { outsideFile: string; otherWorktree: string };
    results['write outside worktree'] = { ok: existsSync(t.outsideFile), detail: t.outsideFile };
    results['write other worktree'] = { ok: existsSync(join(t.otherWorktree, 'pwned.txt')), detail: '' };
    // Judged on the host too: does the operator's git now read the agent's hooks folder?
    const checkout = h.settings().automations[0]!.repository.checkoutPath;
    const hooksPath = spawnSync('git', ['config', '--get', 'core.hooksPath'], {
      cwd: checkout,
      encoding: 'utf8',
    });
    results['set core.hooksPath'] = {
      ok: hooksPath.stdout.includes('.pwned-hooks'),
      detail: `${results['set core.hooksPath']?.detail ?? ''}; host: ${hooksPath.stdout.trim() || 'unset'}`,
    };
    return { run, results };
  }

  const ATTEMPTS = [
    'read ssh key',
    'read gh hosts',
    'read state file',
    'read settings file',
    'read serve token',
    'write outside worktree',
    'write other worktree',
    'ssh agent socket',
    'plant git hook',
    'edit git config',
    'set core.hooksPath',
    'repoint .git',
    'repoint commondir',
    'call serve api',
    'connect postgres',
    'connect loopback port',
    'connect other host',
    'find canary',
    'fork without bound',
  ];

  it('without a sandbox, the hostile agent gets through every time (so the suite can fail)', async () => {
    const { run, results } = await hostileRun('none');
    for (const name of ATTEMPTS) expect(results[name], name).toMatchObject({ ok: true });
    expect(results['call model api']).toMatchObject({ ok: true });
    expect(modelKeys).toEqual([CANARY]);
    expect(run.screeningFindings?.some((f) => f.rule === 'policy' && f.excerpt.startsWith('none'))).toBe(
      true,
    );
  });

  it('in the sandbox, every attempt fails and the blocked connections are on the run', async () => {
    const { run, results } = await hostileRun('required');
    const policy = run.screeningFindings?.find((f) => f.rule === 'policy');
    for (const name of ATTEMPTS)
      expect(results[name], `${name}: ${results[name]?.detail} (${policy?.excerpt})`).toMatchObject({
        ok: false,
      });
    // The agent reached its model through the key proxy, which put the real key on the request.
    expect(results['call model api']).toMatchObject({ ok: true });
    expect(modelKeys).toEqual([CANARY]);
    const blocked = (run.screeningFindings ?? [])
      .filter((f) => f.rule === 'blocked-connection')
      .map((f) => f.excerpt);
    const t = targets as {
      postgresPort: number;
      loopbackPort: number;
      otherHostPort: number;
      servePort: number;
    };
    expect(blocked).toEqual(
      expect.arrayContaining([
        `blocked connection to 127.0.0.1:${t.postgresPort}`,
        `blocked connection to 127.0.0.1:${t.loopbackPort}`,
        `blocked connection to localhost:${t.otherHostPort}`,
        `blocked connection to 127.0.0.1:${t.servePort}`,
      ]),
    );
    expect(policy?.excerpt).toMatch(/^bubblewrap \(sandbox = "required"/);
  });
});

describe.skipIf(!probe.ok)('the default sandbox', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.cleanup();
    h = undefined;
  });

  it('an automation on issues (text strangers write) runs its fake agent in the sandbox, and it commits', async () => {
    h = await createHarness({ provider: 'claude' });
    h.env.SSH_AUTH_SOCK = join(h.dir, 'agent.sock');
    h.configure({
      automation: `[automations.fix]
trigger_type = "github-issues"
repository = "api"
repo = "acme/api"
labels = ["agent-ready"]
prompt = "Fix issue \${issue_number} [[fake:commit]]"
`,
    });
    const run = onlyRun((await h.run()).runs);
    expect(run.status, run.reason ?? '').toBe('succeeded');
    expect(run.commits).toBeGreaterThan(0);
    const policy = run.screeningFindings?.find((f) => f.rule === 'policy');
    expect(policy?.excerpt).toMatch(/^bubblewrap \(sandbox = "auto", the default for text strangers write\)/);
    // The fake agent saw the private home, not curupira's, and no SSH agent.
    const [call] = h.agentRuns('claude');
    expect(call!.env.keys).not.toContain('SSH_AUTH_SOCK');
  });
});

describe.skipIf(!probe.ok)('a chain in the sandbox', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.cleanup();
    h = undefined;
  });

  it("its agent reads the upstream run's kept worktree and transcript (read-only), which its prompt names", async () => {
    h = await createHarness({ provider: 'claude' });
    // The downstream agent: lists the folder and reads the file its prompt names, writes what it
    // saw into its own worktree, then tries to write into the upstream's worktree.
    const looker = join(h.dir, 'looker', 'claude');
    mkdirSync(join(h.dir, 'looker'), { recursive: true });
    writeFileSync(
      looker,
      `#!/bin/sh
for last; do :; done
dir=$(printf '%s\\n' "$last" | sed -n 's/^LOOK AT \\(.*\\)$/\\1/p')
file=$(printf '%s\\n' "$last" | sed -n 's/^READ \\(.*\\)$/\\1/p')
{ ls "$dir"; head -c 20 "$file" >/dev/null && echo transcript-read; touch "$dir/written-by-chain" 2>/dev/null && echo wrote-upstream; } > seen.txt 2>&1
exit 0
`,
    );
    chmodSync(looker, 0o755);
    h.configure({
      automation: `[automations.fix]
trigger_type = "github-issues"
repository = "api"
repo = "acme/api"
labels = ["agent-ready"]
sandbox = "none"
prompt = "Fix issue \${issue_number} [[fake:commit-file=upstream-work.txt]]"

[automations.review]
after = "fix"
repository = "api"
profile = "looker"
sandbox = "required"
prompt = """Review.
LOOK AT \${upstream_worktree}
READ \${upstream_transcript}"""

[agents.profiles.looker]
provider = "claude"
executable = "${looker}"
`,
    });
    const { runs } = await h.run();
    const fix = runs.find((r) => r.automationId === 'fix')!;
    const review = runs.find((r) => r.automationId === 'review')!;
    expect(fix.worktreeKept, fix.reason ?? '').toBe(true);
    expect(review, JSON.stringify(runs.map((r) => [r.automationId, r.status, r.reason]))).toBeDefined();
    const seen = readFileSync(join(review.worktreePath!, 'seen.txt'), 'utf8');
    expect(seen).toContain('upstream-work.txt');
    expect(seen).toContain('transcript-read');
    expect(seen).not.toContain('wrote-upstream');
    expect(existsSync(join(fix.worktreePath!, 'written-by-chain'))).toBe(false);
  });
});

describe.runIf(!probe.ok)('sandbox escape suite (no sandbox here)', () => {
  it.skip(`skipped: ${probe.reason ?? ''}`, () => {});
});
