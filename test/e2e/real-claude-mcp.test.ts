/**
 * Issue 29 (the findings tools, checked once against a real agent CLI that loads MCP servers): the
 * real Claude Code, started with the Claude driver's own arguments for a profile whose
 * `mcp_config` names a file that declares `curupira mcp --run ID --commit SHA` (the built CLI over
 * stdio), loads the findings tools. A local stand-in for Anthropic's Messages API scripts a
 * `tool_use` of `mcp__curupira__findings_report` and then of `findings_done`; the finding lands in
 * curupira's store and the review's done word is kept for the run. The engine does not start the
 * server for a run here: this proves the CLI side only.
 *
 * Skipped unless CURUPIRA_REAL_CLAUDE names a Claude Code executable (the suite installs nothing
 * and reaches no network). Run it with the CLI installed outside the repository:
 *   (mkdir -p /tmp/clis/claude && cd /tmp/clis/claude && npm install @anthropic-ai/claude-code)
 *   CURUPIRA_REAL_CLAUDE=/tmp/clis/claude/node_modules/.bin/claude npx vitest run test/e2e/real-claude-mcp.test.ts
 * Last run green with Claude Code 2.1.197.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createClaudeDriver } from '../../src/agents/claude/index.js';
import { ClaudeProfile } from '../../src/agents/claude/schema.js';
import { buildAgentEnv } from '../../src/process/env.js';
import { reviewDoneKey } from '../../src/review/progress.js';
import { CLI, createHarness, type Harness } from '../helpers/harness.js';
import {
  type AnthropicStandIn,
  type MessagesRequest,
  type ReplyBlock,
  startAnthropicStandIn,
  toolResults,
} from '../helpers/model-stand-in/anthropic.js';

const CLAUDE = process.env.CURUPIRA_REAL_CLAUDE;
const AS_ROOT = process.getuid?.() === 0;
const SERVER = 'curupira';
const REPORT = `mcp__${SERVER}__findings_report`;
const DONE = `mcp__${SERVER}__findings_done`;
const COMMIT = 'd'.repeat(40);

const finding = {
  file: 'src/db.ts',
  line_start: 10,
  line_end: 12,
  severity: 'high',
  category: 'security',
  title: 'SQL built from user input',
  detail: 'The query concatenates `name`.',
};

/** Report one finding, then say the review is done, then answer. */
function reviewScript(request: MessagesRequest): ReplyBlock[] {
  if (!request.tools?.some((tool) => tool.name === REPORT)) return [{ type: 'text', text: 'Review' }];
  const results = toolResults(request).length;
  if (results === 0)
    return [
      { type: 'text', text: 'One problem.' },
      { type: 'tool_use', name: REPORT, input: finding },
    ];
  if (results === 1)
    return [
      {
        type: 'tool_use',
        name: DONE,
        input: { summary: 'One SQL injection.', reviewed_commit: COMMIT },
      },
    ];
  return [{ type: 'text', text: 'Reported one finding.' }];
}

function runClaude(
  args: string[],
  cwd: string,
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(CLAUDE!, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe.skipIf(!CLAUDE)(
  'the real Claude Code loads the findings tools over MCP (CURUPIRA_REAL_CLAUDE)',
  () => {
    let h: Harness;
    let model: AnthropicStandIn;
    let cwd: string;

    beforeEach(async () => {
      h = await createHarness();
      model = await startAnthropicStandIn(reviewScript);
      cwd = mkdtempSync(join(tmpdir(), 'curupira-real-claude-mcp-'));
    });

    afterEach(async () => {
      await model.close();
      await h.cleanup();
      rmSync(cwd, { recursive: true, force: true });
    });

    it('calls mcp__curupira__findings_report and findings_done; the finding is in the store', async () => {
      const store = await h.openStore();
      let runId: string;
      try {
        const run = await store.createRun({
          automationId: 'fix',
          taskKey: 'fix:review',
          repo: 'acme/api',
          taskType: 'review',
          itemId: 'review',
          itemKey: 'review',
          itemTitle: 'Review',
          itemUrl: 'https://github.com/acme/api',
          status: 'running',
        });
        runId = run.id;
      } finally {
        await store.close();
      }
      const serverEnv = Object.fromEntries(
        Object.entries(h.env).filter((entry): entry is [string, string] => entry[1] !== undefined),
      );
      const mcpConfig = join(cwd, '..', `${cwd.split('/').pop()}-mcp.json`);
      writeFileSync(
        mcpConfig,
        JSON.stringify({
          mcpServers: {
            [SERVER]: {
              type: 'stdio',
              // A server slow to start (as a cold start can be): Claude Code must wait for it.
              command: '/bin/sh',
              args: [
                '-c',
                'sleep 3 && exec "$@"',
                'sh',
                process.execPath,
                CLI,
                'mcp',
                '-c',
                h.settingsFile,
                '--run',
                runId,
                '--commit',
                COMMIT,
              ],
              env: serverEnv,
            },
          },
        }),
      );
      try {
        // The driver's own argv for a profile that lists the file: --strict-mcp-config --mcp-config FILE.
        const driver = createClaudeDriver();
        const profile = ClaudeProfile.parse({
          provider: 'claude',
          permission_mode: 'bypassPermissions',
          mcp_config: [mcpConfig],
        });
        const invocation = driver.buildInvocation({
          profile,
          prompt: 'Review the repository.',
          worktree: cwd,
        });
        const { args } = invocation;
        expect(args).toEqual(expect.arrayContaining(['--strict-mcp-config', '--mcp-config', mcpConfig]));
        const env = buildAgentEnv({
          source: {
            PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
            HOME: cwd,
            ANTHROPIC_API_KEY: 'sk-ant-mcp-test-0000',
            ANTHROPIC_BASE_URL: model.url,
            CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
            ...(AS_ROOT ? { IS_SANDBOX: '1' } : {}),
          },
          providerAllowlist: driver.envAllowlist,
          cwd,
        });
        const result = await runClaude(args, cwd, { ...env, ...invocation.env });
        expect(result.code, `${result.stderr}\n${result.stdout.slice(-3000)}`).toBe(0);
        // The init line names the server; every request to the model, the first one included, offers
        // its tools under Claude Code's MCP names (the driver's MCP_CONNECTION_NONBLOCKING=0: without
        // it the first turn may get only a WaitForMcpServers tool).
        expect(result.stdout).toContain(`"mcp_servers":[{"name":"${SERVER}"`);
        const asked = model.messages().filter((r) => r.body?.tools?.some((t) => t.name === 'Bash'));
        expect(asked).toHaveLength(3);
        for (const request of asked)
          expect(request.body!.tools!.map((t) => t.name)).toEqual(
            expect.arrayContaining([REPORT, DONE, `mcp__${SERVER}__findings_list`]),
          );

        // The tool results Claude Code handed back to the model are the server's answers (its
        // structured content, as JSON text).
        const answers = toolResults(asked.at(-1)!.body!).map((block) => String(block.content));
        expect(JSON.parse(answers[0]!)).toMatchObject({
          outcome: 'new',
          finding: { file: 'src/db.ts', lineStart: 10, status: 'open', firstRunId: runId },
        });
        expect(JSON.parse(answers[1]!)).toMatchObject({
          summary: 'One SQL injection.',
          reviewedCommit: COMMIT,
        });

        const after = await h.openStore();
        try {
          const findings = await after.listFindings({ watch: 'fix' });
          expect(findings).toHaveLength(1);
          expect(findings[0]).toMatchObject({
            file: 'src/db.ts',
            lineStart: 10,
            lineEnd: 12,
            severity: 'high',
            title: finding.title,
            status: 'open',
            firstSeenCommit: COMMIT,
          });
          expect(JSON.parse((await after.getMeta(reviewDoneKey(runId)))!)).toMatchObject({
            summary: 'One SQL injection.',
            reviewedCommit: COMMIT,
          });
        } finally {
          await after.close();
        }
      } finally {
        rmSync(mcpConfig, { force: true });
      }
    }, 180_000);
  },
);

describe.runIf(!CLAUDE)('the real Claude Code loads the findings tools over MCP (not here)', () => {
  it.skip('skipped: CURUPIRA_REAL_CLAUDE does not name a Claude Code executable', () => {});
});
