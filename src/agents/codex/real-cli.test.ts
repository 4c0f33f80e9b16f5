/**
 * The Codex driver's invocations against the real Codex CLI, driven by a stand-in for the model
 * API on 127.0.0.1 (a Responses API stream that asks for one shell command, then ends the turn).
 * It proves on the real CLI what the fake models: a resume with the sandbox set is accepted, and
 * in the workspace-write sandbox `git commit` works in a linked worktree, fresh and resumed. The
 * last block runs it through curupira in curupira's own sandbox and key proxy.
 *
 * Skipped unless CURUPIRA_REAL_CODEX names a Codex executable: the suite installs nothing and
 * reaches no network. Run it with the CLI installed outside the repository, e.g.
 *   (cd /tmp/cli && npm install @openai/codex)
 *   npm run build
 *   CURUPIRA_BUILT=1 CURUPIRA_REAL_CODEX=/tmp/cli/node_modules/.bin/codex npx vitest run src/agents/codex/real-cli.test.ts
 * Last run green with codex-cli 0.171.0 (all five tests, 2026-12-04).
 */
import { execFileSync, spawn } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  createHarness,
  type Harness,
  issueAutomation,
  onlyRun,
  runBuiltCli,
  startBuiltCli,
  waitFor,
} from '../../../test/helpers/harness.js';
import {
  type OpenAiStandIn,
  startOpenAiStandIn,
} from '../../../test/helpers/model-stand-in/openai-responses.js';
import { RESUME_SESSION_PROMPT } from '../../engine/executor.js';
import { sandboxBackend } from '../../sandbox/registry.js';
import { createCodexDriver } from './index.js';
import { CodexProfile } from './schema.js';

const CODEX = process.env.CURUPIRA_REAL_CODEX;

/**
 * Serves the Responses API: a request gets a call of the shell tool when a command is pending
 * (`take` hands it over once), else a closing message.
 */
/** What Codex sent back for each tool call (its JSON stream does not show every command's output). */
const toolOutputs: string[] = [];

function startModelStandIn(take: () => string | undefined): Promise<Server> {
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    req.on('end', () => {
      if (!req.url?.endsWith('/responses')) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ object: 'list', data: [], models: [] }));
        return;
      }
      const request = JSON.parse(body) as {
        tools?: { name?: string }[];
        input?: { type?: string; output?: unknown }[];
      };
      for (const item of request.input ?? [])
        if (item.type === 'function_call_output') toolOutputs.push(String(item.output));
      const cmd = take();
      const tools = (request.tools ?? []).map((t) => t.name);
      const send = (event: Record<string, unknown>): void => {
        res.write(`event: ${String(event.type)}\ndata: ${JSON.stringify(event)}\n\n`);
      };
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      send({ type: 'response.created', response: { id: 'resp' } });
      if (cmd === undefined) {
        send({
          type: 'response.output_item.done',
          item: {
            type: 'message',
            role: 'assistant',
            id: 'msg',
            content: [{ type: 'output_text', text: 'Done.' }],
          },
        });
      } else {
        const [name, args] = tools.includes('shell_command')
          ? ['shell_command', { command: cmd }]
          : tools.includes('exec_command')
            ? ['exec_command', { cmd }]
            : ['shell', { command: ['bash', '-lc', cmd] }];
        send({
          type: 'response.output_item.done',
          item: {
            type: 'function_call',
            id: 'fc',
            call_id: `call-${Date.now()}`,
            name,
            arguments: JSON.stringify(args),
          },
        });
      }
      send({
        type: 'response.completed',
        response: {
          id: 'resp',
          usage: {
            input_tokens: 10,
            input_tokens_details: { cached_tokens: 0 },
            output_tokens: 5,
            output_tokens_details: { reasoning_tokens: 0 },
            total_tokens: 15,
          },
        },
      });
      res.end();
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null' },
  });
}

function runCodex(
  args: string[],
  cwd: string,
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(CODEX!, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe.skipIf(!CODEX)('the real Codex CLI (CURUPIRA_REAL_CODEX)', () => {
  const driver = createCodexDriver();
  let root: string;
  let checkout: string;
  let worktree: string;
  let server: Server;
  let next: string | undefined;
  let env: Record<string, string>;

  beforeAll(async () => {
    root = realpathSync(mkdtempSync(join(tmpdir(), 'curupira-real-codex-')));
    checkout = join(root, 'api');
    worktree = join(root, 'api.worktrees', 'fix', 'issue-1');
    server = await startModelStandIn(() => {
      const command = next;
      next = undefined;
      return command;
    });
    const port = (server.address() as AddressInfo).port;
    const home = join(root, 'codex-home');
    mkdirSync(home);
    writeFileSync(
      join(home, 'config.toml'),
      `model = "gpt-5"\nmodel_provider = "standin"\n\n[model_providers.standin]\nname = "standin"\nbase_url = "http://127.0.0.1:${port}/v1"\nwire_api = "responses"\nenv_key = "STANDIN_KEY"\nsupports_websockets = false\nrequest_max_retries = 0\nstream_max_retries = 0\n`,
    );
    // Codex puts its sandbox helper (codex-linux-sandbox) on PATH from CODEX_HOME, and refuses to
    // where CODEX_HOME is under the temporary folder: TMPDIR names another one.
    mkdirSync(join(root, 'tmp'));
    env = {
      PATH: process.env.PATH ?? '',
      HOME: root,
      CODEX_HOME: home,
      TMPDIR: join(root, 'tmp'),
      STANDIN_KEY: 'not-a-real-key',
    };
    git(root, 'init', '-q', '-b', 'main', checkout);
    git(
      checkout,
      '-c',
      'user.name=t',
      '-c',
      'user.email=t@example.invalid',
      'commit',
      '-q',
      '--allow-empty',
      '-m',
      'root',
    );
    git(checkout, 'worktree', 'add', '-q', '-b', 'curupira/fix/issue-1', worktree);
  });
  afterAll(() => {
    server?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  const profile = CodexProfile.parse({
    provider: 'codex',
    sandbox: 'workspace-write',
    model: 'gpt-5',
    effort: 'low',
  });
  const commit = (subject: string): string =>
    `echo ${subject} >> work.txt && git add work.txt && git -c user.name=t -c user.email=t@example.invalid commit -q -m ${subject}`;

  it('commits in a worktree in the workspace-write sandbox, then resumes the session with the sandbox set and commits again', async () => {
    next = commit('fresh');
    const fresh = await runCodex(
      driver.buildInvocation({ profile, prompt: 'commit', worktree }).args,
      worktree,
      env,
    );
    expect(fresh.code, fresh.stderr).toBe(0);
    expect(git(worktree, 'log', '--format=%s', '-1').trim()).toBe('fresh');
    const thread = fresh.stdout.match(/"thread_id":"([^"]+)"/)?.[1];
    expect(thread).toBeDefined();

    next = commit('resumed');
    const args = driver.buildInvocation({
      profile,
      prompt: 'again',
      worktree,
      resumeSessionId: thread!,
    }).args;
    const resumed = await runCodex(args, worktree, env);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(git(worktree, 'log', '--format=%s', '-1').trim()).toBe('resumed');
  }, 120_000);

  it('refuses the sandbox after resume, and cannot commit without the git directories as writable roots', async () => {
    const late = await runCodex(
      ['exec', 'resume', 'x', '--sandbox', 'workspace-write', '--json', '--', 'x'],
      worktree,
      env,
    );
    expect(late.code).toBe(2);
    expect(late.stderr).toContain("unexpected argument '--sandbox' found");

    next = commit('blocked');
    toolOutputs.length = 0;
    const plain = await runCodex(
      ['exec', '--sandbox', 'workspace-write', '--json', '--', 'commit'],
      worktree,
      env,
    );
    // Codex 0.171's `--json` stream leaves out the command's output; what it sent its model holds it.
    expect([plain.stdout, ...toolOutputs].join('\n')).toContain('Read-only file system');
    expect(git(worktree, 'log', '--format=%s', '-1').trim()).not.toBe('blocked');
  }, 120_000);
});

const bwrap = await sandboxBackend('bubblewrap').probe();

/** Whether a process whose command line holds `marker` runs on this machine. */
function commandRunning(marker: string): boolean {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'latin1').split('\0').join(' ').includes(marker))
        return true;
    } catch {
      // gone meanwhile
    }
  }
  return false;
}
const CANARY = `canary-codex-${'5'.repeat(32)}`;
const OPENAI_CANARY = `canary-openai-${'6'.repeat(32)}`;

/**
 * The real Codex CLI run by curupira (the built CLI and the engine) in the bubblewrap sandbox, its
 * model API a local stand-in (test/helpers/model-stand-in/openai-responses.ts) reached only through
 * the sandbox's key proxy. The operator's environment holds canary keys (CODEX_API_KEY, which
 * `codex exec` sends, and OPENAI_API_KEY); OPENAI_BASE_URL names the stand-in as the real API.
 * Codex's own sandbox is off inside ours (`sandbox = "danger-full-access"`) but where a test nests
 * it (`workspace-write`): docs/sandbox.md.
 *
 * Skipped unless CURUPIRA_REAL_CODEX names a Codex executable (the suite installs nothing and
 * reaches no network) and bubblewrap can start here. Needs `npm run build` first.
 */
describe.skipIf(!CODEX || !bwrap.ok)('the real Codex CLI in curupira’s sandbox (CURUPIRA_REAL_CODEX)', () => {
  let h: Harness | undefined;
  let model: OpenAiStandIn | undefined;
  const homes: string[] = [];
  afterEach(async () => {
    for (const home of homes.splice(0)) rmSync(home, { recursive: true, force: true });
    await model?.close();
    await h?.cleanup().catch((error: unknown) => console.error('cleanup failed', error));
    h = undefined;
    model = undefined;
  });

  /** `ownSandbox`: Codex's own sandbox (`--sandbox`), inside curupira's. */
  async function world(ownSandbox = 'danger-full-access'): Promise<{ h: Harness; model: OpenAiStandIn }> {
    model = await startOpenAiStandIn();
    h = await createHarness({
      provider: 'codex',
      profileExtra: [
        `executable = ${JSON.stringify(CODEX)}`,
        'model = "gpt-5"',
        'effort = "low"',
        `sandbox = ${JSON.stringify(ownSandbox)}`,
      ].join('\n'),
      automation: issueAutomation('fix', { prompt: 'Fix #${issue_number}', extra: 'sandbox = "required"' }),
    });
    h.env.CODEX_API_KEY = CANARY;
    h.env.OPENAI_API_KEY = OPENAI_CANARY;
    h.env.OPENAI_BASE_URL = model.baseUrl;
    if (ownSandbox === 'workspace-write') {
      // Codex puts its sandbox helper on PATH from ~/.codex, and refuses to where that is under the
      // temporary folder (the harness's HOME is): a home outside it, as an operator's is.
      const home = mkdtempSync(join('/var/tmp', 'curupira-real-codex-home-'));
      homes.push(home);
      h.env.HOME = home;
    }
    return { h, model };
  }

  /** The committed file `name` on any branch of the run's checkout. */
  function committed(harness: Harness, name: string): string {
    const checkout = harness.settings().automations[0]!.repository.checkoutPath;
    const commit = git(checkout, 'log', '--all', '-1', '--format=%H', '--', name).trim();
    expect(commit, `no commit holds ${name}`).not.toBe('');
    return git(checkout, 'show', `${commit}:${name}`);
  }

  const COMMIT_ENV =
    'env > env.txt && git add env.txt && git -c user.name=agent -c user.email=agent@example.invalid commit -q -m "env seen by the agent" && cat env.txt';

  function expectKeyHeldOutside(m: OpenAiStandIn, env: string): void {
    const posts = m.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/responses'));
    expect(posts.length).toBeGreaterThanOrEqual(2);
    // The stand-in got the real (canary) key on every model request...
    for (const post of posts) expect(post.authorization).toBe(`Bearer ${CANARY}`);
    // Every request that reached it came through the key proxy (the WebSocket attempts too): none
    // carried a placeholder.
    for (const request of m.requests) expect(request.authorization).toBe(`Bearer ${CANARY}`);
    // ...which the agent never held: its environment has placeholders and the proxy's address.
    expect(env).toMatch(/^CODEX_API_KEY=curupira-placeholder-[0-9a-f]{24}$/m);
    expect(env).toMatch(/^OPENAI_API_KEY=curupira-placeholder-[0-9a-f]{24}$/m);
    expect(env).toMatch(/^OPENAI_BASE_URL=http:\/\/127\.0\.0\.1:3128\/_key\/0$/m);
    expect(env).not.toContain('canary-');
    for (const output of m.toolOutputs()) expect(output).not.toContain('canary-');
  }

  it('runs a task that commits, the stand-in getting the canary key the agent never held', async () => {
    const { h, model } = await world();
    model.script(COMMIT_ENV);
    const run = onlyRun((await h.run()).runs);
    expect(run.status, run.reason ?? '').toBe('succeeded');
    expect(run.commits, model.toolOutputs().join('\n')).toBe(1);
    const policy = run.screeningFindings?.find((f) => f.scanner === 'sandbox' && f.rule === 'policy');
    expect(policy?.excerpt).toMatch(/^bubblewrap \(sandbox = "required".*model keys held by the key proxy/);
    expect(model.calls).toEqual([{ tool: 'exec_command', command: COMMIT_ENV }]);
    expectKeyHeldOutside(model, committed(h, 'env.txt'));
    const blocked = run.screeningFindings?.filter((f) => f.rule === 'blocked-connection') ?? [];
    // The stand-in is reached through the key proxy, never refused.
    expect(blocked.map((f) => f.excerpt).join('\n')).not.toContain(`:${model.port}`);
    console.info(`codex in the sandbox, blocked: ${blocked.map((f) => f.excerpt).join('; ') || 'none'}`);
  }, 180_000);

  it('with Codex’s own workspace-write sandbox inside ours, the agent commits (both sandboxes nest)', async () => {
    const { h, model } = await world('workspace-write');
    model.script(COMMIT_ENV);
    const run = onlyRun((await h.run()).runs);
    // Codex's bubblewrap starts inside ours (user namespaces nest) with the writable roots the
    // driver names: the common git directory's objects, refs and logs and the worktree's own, as
    // ours mounts them (naming the common directory whole failed: `bwrap: Can't mkdir
    // <checkout>/.git/.git: Read-only file system`).
    expect(run.status, run.reason ?? '').toBe('succeeded');
    expect(run.commits, model.toolOutputs().join('\n')).toBe(1);
    expectKeyHeldOutside(model, committed(h, 'env.txt'));
    // Codex keeps a `.git` in each writable root read-only; none was left behind in the checkout.
    const gitDir = join(h.settings().automations[0]!.repository.checkoutPath, '.git');
    for (const root of ['objects', 'refs', 'logs'])
      expect(existsSync(join(gitDir, root, '.git')), root).toBe(false);
  }, 180_000);

  it('after kill -9 of curupira mid-run, the restart resumes the Codex session in the sandbox and it commits', async () => {
    const { h, model } = await world();
    // Turn 1 hangs in its command (curupira is killed there); the resumed turn commits.
    model.script('echo started > started.txt && sleep 300', COMMIT_ENV);
    const args = ['--config', h.settingsFile, 'run'];
    const first = startBuiltCli(args, { env: h.env });
    const openStore = h.openStore.bind(h);
    try {
      const saved = await waitFor(
        'the session saved and the shell call handed out',
        async () => {
          if (model.calls.length < 1) return undefined;
          const store = await openStore();
          try {
            const [session] = await store.listSessions();
            return session;
          } finally {
            await store.close();
          }
        },
        120_000,
        100,
      );
      // Mid-run: the agent's command is running when curupira is killed.
      await waitFor('the agent’s command running', () => commandRunning('sleep 300'), 30_000);
      first.child.kill('SIGKILL');
      expect((await first.done).signal).toBe('SIGKILL');
      // The sandbox went with curupira: no `sleep 300` of the agent's is left.
      await waitFor('the agent’s command gone with the sandbox', () => !commandRunning('sleep 300'), 10_000);

      const second = await runBuiltCli(args, { env: h.env, timeoutMs: 150_000 });
      expect(second.code, second.stderr).toBe(0);
      const store = await openStore();
      const runs = await store.listRuns({ limit: Number.POSITIVE_INFINITY });
      await store.close();
      expect(runs).toHaveLength(2);
      const next = runs.find((r) => r.resumed)!;
      expect(next, JSON.stringify(runs.map((r) => [r.status, r.reason]))).toMatchObject({
        status: 'succeeded',
        sessionId: saved.sessionId,
      });
      expect(next.commits).toBe(1);
      expect(runs.find((r) => r !== next)?.reason).toMatch(/^interrupted/);
      expect(model.calls.map((c) => c.command)).toEqual([
        'echo started > started.txt && sleep 300',
        COMMIT_ENV,
      ]);
      // The resumed request carried the first turn's history: the same session went on.
      const last = model.requests.filter((r) => r.method === 'POST').at(-1)!;
      expect(last.text).toContain('echo started > started.txt');
      expect(last.text).toContain(RESUME_SESSION_PROMPT.slice(0, 40));
      expectKeyHeldOutside(model, committed(h, 'env.txt'));
    } finally {
      if (first.child.exitCode === null && first.child.signalCode === null) first.child.kill('SIGKILL');
    }
  }, 300_000);
});

describe.runIf(!CODEX || !bwrap.ok)('the real Codex CLI in curupira’s sandbox (not run here)', () => {
  it.skip(`skipped: ${CODEX ? `no sandbox can start here: ${bwrap.reason ?? ''}` : 'CURUPIRA_REAL_CODEX does not name a Codex executable'}`, () => {});
});
