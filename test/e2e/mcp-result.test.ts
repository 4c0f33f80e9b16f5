/**
 * Issue 32, the result tool: `curupira mcp --run ID` for a run whose automation declares
 * `outcomes` offers `result_report`, which keeps the agent's structured result on the run through
 * the same seam as the result line (src/pipeline/report.ts). Checked with the MCP SDK's client
 * standing in for an agent, then end to end with the fake Claude Code CLI, which starts the server
 * from its --mcp-config file and calls the tool instead of ending with a result line.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/core/types.js';
import { CLI, createHarness, type Harness, issueAutomation, ROOT } from '../helpers/harness.js';

let h: Harness | undefined;
const clients: Client[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  await h?.cleanup();
  h = undefined;
});

const TRIAGE = issueAutomation('triage', {
  prompt: 'Triage issue #${issue_number}.\n${issue_body}',
  extra: [
    'outcomes = ["ready-for-agent", "needs-info"]',
    '[automations.triage.handoffs.needs-info]',
    'add_labels = ["needs-info"]',
  ].join('\n'),
});

async function connect(harness: Harness, runId: string) {
  const c = new Client({ name: 'triage-agent', version: '1.0.0' });
  clients.push(c);
  const env = Object.fromEntries(
    Object.entries(harness.env).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
  await c.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'mcp', '-c', harness.settingsFile, '--run', runId],
      env,
      cwd: ROOT,
      stderr: 'pipe',
    }),
  );
  return c;
}

describe('the result tool over MCP (issue 32)', () => {
  it('mcp --run offers result_report for a run with outcomes: refuses what is off the set, keeps the result on the run', async () => {
    h = await createHarness({ automation: TRIAGE });
    const store = await h.openStore();
    const run = await store.createRun({
      automationId: 'triage',
      taskKey: 'triage:1',
      repo: 'acme/api',
      taskType: 'github-issues',
      itemId: '1',
      itemKey: 'issue:1',
      itemTitle: 'Crash',
      itemUrl: 'https://github.com/acme/api/issues/1',
      status: 'running',
    });
    await store.close();
    const c = await connect(h, run.id);
    expect((await c.listTools()).tools.map((t) => t.name)).toEqual(['result_report']);
    const call = async (args: Record<string, unknown>) =>
      (await c.callTool({ name: 'result_report', arguments: args })) as {
        content: { text: string }[];
        isError?: boolean;
      };

    const off = await call({ outcome: 'wontfix', number: 1 });
    expect(off.isError).toBe(true);
    expect(off.content[0]!.text).toBe(
      "unknown outcome 'wontfix': report one of ready-for-agent, needs-info, noop, skipped, failed",
    );
    const bare = await call({ outcome: 'noop' });
    expect(bare).toMatchObject({
      isError: true,
      content: [{ text: 'noop needs a reason: say why in one line' }],
    });
    const reader = await h.openStore();
    try {
      expect((await reader.getRun(run.id))!.result).toBeNull();
      const ok = await call({ outcome: 'needs-info', reason: 'no steps to reproduce', number: 1 });
      expect(ok.isError).not.toBe(true);
      expect(ok.content[0]!.text).toBe('Recorded: #1 needs-info: no steps to reproduce');
      expect((await reader.getRun(run.id))!.result).toEqual({
        outcome: 'needs-info',
        reason: 'no steps to reproduce',
        item: 1,
        via: 'tool',
      });
      // Once the run is over, nothing more is taken.
      await reader.updateRun(run.id, { status: 'succeeded' });
      const late = await call({ outcome: 'ready-for-agent', number: 1 });
      expect(late.isError).toBe(true);
      expect((await reader.getRun(run.id))!.result?.outcome).toBe('needs-info');
    } finally {
      await reader.close();
    }
  }, 60_000);

  it('the fake Claude Code CLI reports through the tool: the outcome decides the run and its handoff, with no result line', async () => {
    const issues = [
      { title: 'Vague', body: '[[fake:report=#1 needs-info: no steps to reproduce]]' },
      { title: 'Already fixed', body: '[[fake:report=#2 noop: fixed on main by #9]]' },
      { title: 'Off the list', body: '[[fake:report=#3 wontfix: not ours]]' },
    ];
    h = await createHarness({ issues, automation: TRIAGE });
    const config = join(h.dir, 'curupira-mcp.json');
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: {
          curupira: {
            command: process.execPath,
            // Claude Code expands ${VAR} in a server's args from the agent's environment.
            args: [CLI, 'mcp', '-c', h.settingsFile, '--run', '${CURUPIRA_RUN_ID}'],
          },
        },
      }),
    );
    // The tool server writes the state file, outside any sandbox's writable paths.
    h.configure({ profileExtra: `mcp_config = [${JSON.stringify(config)}]\nsandbox_mode = "none"` });
    const runs = Object.fromEntries((await h.run()).runs.map((r) => [r.itemId, r])) as Record<
      string,
      RunRecord
    >;
    expect(runs['1']).toMatchObject({
      status: 'succeeded',
      result: { outcome: 'needs-info', reason: 'no steps to reproduce', item: 1, via: 'tool' },
    });
    expect(runs['2']).toMatchObject({
      status: 'noop',
      result: { outcome: 'noop', reason: 'fixed on main by #9', item: 2, via: 'tool' },
    });
    // The refused report leaves no result: the run fails as one without a result line.
    expect(runs['3']!.status).toBe('failed');
    expect(runs['3']!.result ?? null).toBeNull();
    expect(h.world.issue('acme/api', 1)!.labels).toContain('needs-info');
    // Each agent was given the tool server (and its prompt asked for no result line: no [[fake:result]]).
    for (const call of h.agentRuns('claude'))
      expect(call.argv).toEqual(expect.arrayContaining(['--mcp-config', config]));
  }, 120_000);
  it('a step with outcomes is offered the result tool by curupira itself: no mcp_config needed', async () => {
    const issues = [{ title: 'Vague', body: '[[fake:report=#1 needs-info: no steps to reproduce]]' }];
    h = await createHarness({ issues, automation: TRIAGE });
    // The tool server writes the state file, outside any sandbox's writable paths.
    h.configure({ profileExtra: 'sandbox_mode = "none"' });
    const [run] = (await h.run()).runs;
    expect(run).toMatchObject({
      status: 'succeeded',
      result: { outcome: 'needs-info', reason: 'no steps to reproduce', item: 1, via: 'tool' },
    });
    const argv = h.agentRuns('claude')[0]!.argv;
    const declared = JSON.parse(argv[argv.lastIndexOf('--mcp-config') + 1]!) as {
      mcpServers: Record<string, { args: string[] }>;
    };
    expect(declared.mcpServers['curupira-result']!.args).toEqual(
      expect.arrayContaining(['mcp', '--run', run!.id]),
    );
  }, 120_000);

  // Each CLI is given the server in its own way (docs/mcp.md): Qwen Code's --mcp-config, Copilot
  // CLI's --additional-mcp-config, OpenCode's OPENCODE_CONFIG_CONTENT, Kilo's KILO_CONFIG_CONTENT;
  // the fake reads it there as the real CLI does, starts the server and calls result_report.
  for (const provider of ['qwen', 'copilot', 'opencode', 'kilo'] as const) {
    it(`the fake ${provider} CLI is given the result tool the way it loads MCP servers, and reports through it`, async () => {
      const issues = [{ title: 'Vague', body: '[[fake:report=#1 needs-info: no steps to reproduce]]' }];
      h = await createHarness({ issues, automation: TRIAGE, provider });
      h.configure({ provider, profileExtra: 'sandbox_mode = "none"' });
      const [run] = (await h.run()).runs;
      expect(run).toMatchObject({
        status: 'succeeded',
        result: { outcome: 'needs-info', reason: 'no steps to reproduce', item: 1, via: 'tool' },
      });
      const call = h.agentRuns(provider)[0]!;
      if (provider === 'opencode') expect(call.env.keys).toContain('OPENCODE_CONFIG_CONTENT');
      else if (provider === 'kilo') expect(call.env.keys).toContain('KILO_CONFIG_CONTENT');
      else
        expect(
          call.argv.some((a) =>
            a.startsWith(provider === 'qwen' ? '--mcp-config' : '--additional-mcp-config='),
          ),
        ).toBe(true);
    }, 120_000);
  }
});
