/**
 * Issue 26, acceptance (the real agent CLIs): the real Claude Code, run by curupira in its
 * bubblewrap sandbox, against a local stand-in for Anthropic's Messages API reached only through
 * the run's egress and key proxy. The operator's environment holds a canary API key; the agent
 * holds a placeholder and a base URL pointing at the proxy, which puts the canary on each request.
 * The scripted model has Claude Code's Bash tool commit a file and dump the environment the
 * agent's shell has; the stand-in must see the canary, the agent never. Then a crash: curupira is
 * killed (SIGKILL) while the model's first answer is pending, and a restart resumes the session
 * (`--resume <session>`) in the same private home and completes it.
 *
 * Skipped unless CURUPIRA_REAL_CLAUDE names a Claude Code executable (the suite installs nothing
 * and reaches no network), the test runs as root (the profile's `bypassPermissions` needs
 * IS_SANDBOX=1 there, as real-cli.test.ts shows; elsewhere it needs nothing) and a sandbox can
 * start here. Run it with the CLI installed outside the repository:
 *   (mkdir -p /tmp/clis/claude && cd /tmp/clis/claude && npm install @anthropic-ai/claude-code)
 *   CURUPIRA_REAL_CLAUDE=/tmp/clis/claude/node_modules/.bin/claude npx vitest run test/e2e/real-claude-sandbox.test.ts
 * Last run green with Claude Code 2.1.197.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/core/types.js';
import { RESUME_SESSION_PROMPT } from '../../src/engine/executor.js';
import { sandboxBackend } from '../../src/sandbox/registry.js';
import type { Store } from '../../src/store/types.js';
import {
  createHarness,
  type Harness,
  issueAutomation,
  onlyRun,
  runBuiltCli,
  startBuiltCli,
  waitFor,
} from '../helpers/harness.js';
import {
  type AnthropicStandIn,
  type MessagesRequest,
  type ReplyBlock,
  startAnthropicStandIn,
  toolResults,
  userText,
} from '../helpers/model-stand-in/anthropic.js';

const CLAUDE = process.env.CURUPIRA_REAL_CLAUDE;
const AS_ROOT = process.getuid?.() === 0;
const probe = await sandboxBackend('bubblewrap').probe();
const skipReason = !CLAUDE
  ? 'CURUPIRA_REAL_CLAUDE does not name a Claude Code executable'
  : !probe.ok
    ? `no sandbox here: ${probe.reason}`
    : undefined;
if (skipReason) console.warn(`real Claude Code in the sandbox skipped: ${skipReason}`);

const CANARY = `sk-ant-canary-${'5'.repeat(40)}`;
/** The canary split in two shell words, so the command that looks for it does not contain it. */
const CANARY_WORDS = `"${CANARY.slice(0, 10)}""${CANARY.slice(10)}"`;

/**
 * What the model does in the main loop (the requests that offer the Bash tool): first a Bash call
 * that commits and writes down what the agent can see, then a final answer. Side requests (no
 * tools: Claude Code's own small calls) get a short text.
 */
const COMMIT_COMMAND = [
  'echo hi > hello.txt',
  'env > env.txt',
  // cat opens its own /proc/self/environ (a redirect would open the shell's, gone at exec).
  "cat /proc/self/environ | tr '\\0' '\\n' > proc-env.txt",
  `{ grep -rIl ${CANARY_WORDS} ~ /tmp /run 2>/dev/null; true; } > found.txt`,
  'git add hello.txt env.txt proc-env.txt found.txt',
  'git commit -q -m hello',
].join(' && ');

function commitScript(request: MessagesRequest): ReplyBlock[] | 'hold' {
  if (!request.tools?.some((tool) => tool.name === 'Bash')) return [{ type: 'text', text: 'Fix hello' }];
  if (toolResults(request).length === 0)
    return [
      { type: 'text', text: 'I will add hello.txt and commit it.' },
      { type: 'tool_use', name: 'Bash', input: { command: COMMIT_COMMAND, description: 'Commit hello.txt' } },
    ];
  return [{ type: 'text', text: 'Committed hello.txt.' }];
}

/** Whether Claude Code's conversation file `<session>.jsonl` is somewhere under `dir`, holding the prompt. */
function sessionWritten(dir: string, sessionId: string): boolean {
  if (!existsSync(dir)) return false;
  for (const entry of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    if (!entry.endsWith(`${sessionId}.jsonl`)) continue;
    if (readFileSync(join(dir, entry), 'utf8').includes('Fix #1')) return true;
  }
  return false;
}

async function withStore<T>(h: Harness, use: (store: Store) => Promise<T>): Promise<T> {
  const store = await h.openStore();
  try {
    return await use(store);
  } finally {
    await store.close();
  }
}

/** A file of the run's last commit, as git in its worktree shows it. */
function committed(run: RunRecord, file: string): string {
  const show = spawnSync('git', ['show', `HEAD:${file}`], { cwd: run.worktreePath!, encoding: 'utf8' });
  expect(show.status, show.stderr).toBe(0);
  return show.stdout;
}

/** What the agent saw: its key is the placeholder, the canary nowhere. */
function expectKeyNeverHeld(run: RunRecord): void {
  const env = committed(run, 'env.txt');
  expect(env).toMatch(/^ANTHROPIC_API_KEY=curupira-placeholder-[0-9a-f]+$/m);
  expect(env).toMatch(/^ANTHROPIC_BASE_URL=http:\/\/127\.0\.0\.1:\d+\/_key\/0$/m);
  expect(env).not.toContain(CANARY);
  const procEnv = committed(run, 'proc-env.txt');
  expect(procEnv).toContain('ANTHROPIC_API_KEY=curupira-placeholder-');
  expect(procEnv).not.toContain(CANARY);
  // No file in the private home, /tmp or the run's folder holds it.
  expect(committed(run, 'found.txt')).toBe('');
}

function expectOnlyCanaryReached(model: AnthropicStandIn): void {
  const asked = model.messages();
  expect(asked.length).toBeGreaterThan(0);
  for (const request of asked) expect(request.key).toBe(CANARY);
  // Whatever else reached the stand-in (unsandboxed, Claude Code's keyless `HEAD /` reachability
  // check) carried no other key.
  for (const request of model.requests) if (request.key !== undefined) expect(request.key).toBe(CANARY);
  expect(asked.some((r) => r.body?.tools?.some((t) => t.name === 'Bash'))).toBe(true);
}

describe.skipIf(skipReason !== undefined)(
  'the real Claude Code in the sandbox (CURUPIRA_REAL_CLAUDE)',
  () => {
    let h: Harness;
    let model: AnthropicStandIn;

    beforeEach(async () => {
      model = await startAnthropicStandIn(commitScript);
      h = await createHarness({ provider: 'claude' });
      Object.assign(h.env, {
        ANTHROPIC_API_KEY: CANARY,
        ANTHROPIC_BASE_URL: model.url,
        // Nothing but the model's API: no telemetry, updates or error reports (they would be refused).
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        GIT_AUTHOR_NAME: 'Curupira Test',
        GIT_AUTHOR_EMAIL: 'test@curupira.invalid',
        GIT_COMMITTER_NAME: 'Curupira Test',
        GIT_COMMITTER_EMAIL: 'test@curupira.invalid',
        ...(AS_ROOT ? { IS_SANDBOX: '1' } : {}),
      });
      h.configure({
        profileExtra: `executable = ${JSON.stringify(CLAUDE)}\npermission_mode = "bypassPermissions"`,
        automation: issueAutomation('fix', {
          prompt: 'Fix #${issue_number}: ${issue_title}',
          extra: 'sandbox = "required"',
        }),
      });
    });

    afterEach(async () => {
      await model.close();
      await h.cleanup();
    });

    it('commits through its Bash tool; the stand-in gets the canary key, the agent only a placeholder', async () => {
      const run = onlyRun((await h.run()).runs);
      expect(
        run.status,
        `${run.reason}\n${run.transcriptPath ? readFileSync(run.transcriptPath, 'utf8').slice(-3000) : ''}`,
      ).toBe('succeeded');
      expect(run.commits).toBe(1);
      expect(committed(run, 'hello.txt')).toBe('hi\n');
      expectKeyNeverHeld(run);
      expectOnlyCanaryReached(model);
      const policy = run.screeningFindings?.find((f) => f.scanner === 'sandbox' && f.rule === 'policy');
      expect(policy?.excerpt).toMatch(/^bubblewrap \(sandbox = "required".*model keys held by the key proxy/);
      // Nothing else was tried: no connection was refused.
      expect(run.screeningFindings?.filter((f) => f.rule === 'blocked-connection')).toEqual([]);
    }, 180_000);

    it('the same run without a sandbox: the agent holds the canary itself (so the checks above can fail)', async () => {
      h.configure({
        automation: issueAutomation('fix', {
          prompt: 'Fix #${issue_number}: ${issue_title}',
          extra: 'sandbox = "none"',
        }),
      });
      const run = onlyRun((await h.run()).runs);
      expect(run.status, run.reason ?? '').toBe('succeeded');
      expect(run.commits).toBe(1);
      expect(committed(run, 'env.txt')).toContain(`ANTHROPIC_API_KEY=${CANARY}`);
      expect(committed(run, 'proc-env.txt')).toContain(`ANTHROPIC_API_KEY=${CANARY}`);
      expectOnlyCanaryReached(model);
    }, 180_000);

    /** Starts a run, and kills curupira once the agent saved its conversation and waits on its model. */
    async function killMidRun(): Promise<{ session: { sessionId: string }; run: RunRecord }> {
      // The first answer of the main loop is held: the agent is waiting on its model when killed.
      model.setScript((request) =>
        request.tools?.some((tool) => tool.name === 'Bash') &&
        !userText(request).includes(RESUME_SESSION_PROMPT)
          ? 'hold'
          : commitScript(request),
      );
      const first = startBuiltCli(['--config', h.settingsFile, 'run'], { env: h.env });
      try {
        const saved = await waitFor(
          'the session saved and the model asked',
          async () =>
            withStore(h, async (store) => {
              const [session] = await store.listSessions();
              const [run] = await store.listRuns();
              // Claude Code writes its conversation to the private home a moment after it sends
              // the request: a kill before that leaves nothing to resume.
              return session &&
                run?.agentPid &&
                model.held() > 0 &&
                sessionWritten(join(h.dir, 'state', 'sandbox', 'homes'), session.sessionId)
                ? { session, run }
                : undefined;
            }),
          90_000,
          200,
        );
        first.child.kill('SIGKILL');
        expect((await first.done).signal).toBe('SIGKILL');
        await waitFor('the held request dropped with the agent', () => model.held() === 0, 15_000);
        return saved;
      } finally {
        if (first.child.exitCode === null && first.child.signalCode === null) first.child.kill('SIGKILL');
      }
    }

    it('after curupira is killed mid-run, the restart resumes the session (--resume) and completes it', async () => {
      const args = ['--config', h.settingsFile, 'run'];
      {
        const saved = await killMidRun();
        const second = await runBuiltCli(args, { env: h.env, timeoutMs: 150_000 });
        expect(second.code, second.stderr).toBe(0);

        const runs = await withStore(h, (store) => store.listRuns({ limit: Number.POSITIVE_INFINITY }));
        expect(runs).toHaveLength(2);
        const dead = runs.find((r) => r.id === saved.run.id)!;
        expect(dead.status).toBe('cancelled');
        expect(dead.reason).toMatch(/^interrupted/);
        const next = runs.find((r) => r.id !== saved.run.id)!;
        expect(next, next.reason ?? '').toMatchObject({
          status: 'succeeded',
          resumed: true,
          sessionId: saved.session.sessionId,
        });
        expect(next.commits).toBe(1);
        expectKeyNeverHeld(next);
        expectOnlyCanaryReached(model);
        // The resumed request carries the first run's conversation (the issue's prompt) and the
        // resume prompt: Claude Code loaded its session from the private home.
        const resumed = model
          .messages()
          .filter(
            (r) =>
              r.body?.tools?.some((t) => t.name === 'Bash') &&
              userText(r.body).includes(RESUME_SESSION_PROMPT),
          );
        expect(resumed.length).toBeGreaterThan(0);
        expect(userText(resumed[0]!.body!)).toContain('Fix #1');
        for (const r of resumed) expect(r.headers['x-claude-code-session-id']).toBe(saved.session.sessionId);
        const homes = join(h.dir, 'state', 'sandbox', 'homes');
        expect(existsSync(homes) && readdirSync(homes).length).toBe(1);
      }
    }, 300_000);

    it('when Claude Code no longer has the conversation, the resume fails once, the session is dropped, and the next run starts fresh', async () => {
      const args = ['--config', h.settingsFile, 'run'];
      const saved = await killMidRun();
      // The CLI's saved conversations are gone (its home emptied, say).
      const homes = join(h.dir, 'state', 'sandbox', 'homes');
      for (const entry of readdirSync(homes, { recursive: true, encoding: 'utf8' }))
        if (entry.endsWith(`${saved.session.sessionId}.jsonl`)) rmSync(join(homes, entry));
      expect(sessionWritten(homes, saved.session.sessionId)).toBe(false);

      const second = await runBuiltCli(args, { env: h.env, timeoutMs: 150_000 });
      // `run` exits 1 when a run failed.
      expect(second.code, second.stderr).toBe(1);
      let runs = await withStore(h, (store) => store.listRuns({ limit: Number.POSITIVE_INFINITY }));
      const resumed = runs.find((r) => r.id !== saved.run.id)!;
      expect(resumed, resumed.reason ?? '').toMatchObject({
        status: 'failed',
        resumed: true,
        sessionId: saved.session.sessionId,
      });
      expect(resumed.reason).toContain(`No conversation found with session ID: ${saved.session.sessionId}`);
      expect(resumed.reason).toContain('so it was dropped: the next run starts a fresh session');
      expect(await withStore(h, (store) => store.listSessions())).toEqual([]);

      model.setScript(commitScript);
      const third = await runBuiltCli(args, { env: h.env, timeoutMs: 150_000 });
      expect(third.code, third.stderr).toBe(0);
      runs = await withStore(h, (store) => store.listRuns({ limit: Number.POSITIVE_INFINITY }));
      expect(runs).toHaveLength(3);
      const fresh = runs.find((r) => r.id !== saved.run.id && r.id !== resumed.id)!;
      expect(fresh, fresh.reason ?? '').toMatchObject({ status: 'succeeded', resumed: false, commits: 1 });
      expect(fresh.sessionId).not.toBe(saved.session.sessionId);
    }, 400_000);
  },
);

describe.runIf(skipReason !== undefined)('the real Claude Code in the sandbox (not here)', () => {
  it.skip(`skipped: ${skipReason ?? ''}`, () => {});
});
