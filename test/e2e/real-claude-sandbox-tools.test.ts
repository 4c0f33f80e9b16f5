/**
 * Issue 29/32 against the real Claude Code: a review watch's run with `sandbox = "required"`, whose
 * agent is the real Claude Code inside bubblewrap, reaches the findings tools through the relay
 * (the run folder's `mcp-relay.cjs`, declared as the `curupira-findings` server, passing MCP's stdio
 * to the run's tools socket). A local stand-in for Anthropic's Messages API, reached only through
 * the egress and key proxy, scripts a Bash call that prints what the agent can see, then
 * `mcp__curupira-findings__findings_report` and `findings_done`; the finding and the done word land
 * in the store, the run succeeds with the sandbox policy recorded, and the canary key in curupira's
 * environment reaches the stand-in, never the agent. test/e2e/sandbox-tools.test.ts checks the
 * same with fake CLIs. Last run green with Claude Code 2.1.197 (Node 20; later releases need Node 22).
 *
 * Skipped unless CURUPIRA_REAL_CLAUDE names a Claude Code executable (the suite installs nothing
 * and reaches no network) and a sandbox can start here. Run it with the CLI installed outside the
 * repository:
 *   (mkdir -p /tmp/clis/claude && cd /tmp/clis/claude && npm install @anthropic-ai/claude-code)
 *   CURUPIRA_REAL_CLAUDE=/tmp/clis/claude/node_modules/.bin/claude npx vitest run test/e2e/real-claude-sandbox-tools.test.ts
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { reviewDone } from '../../src/review/progress.js';
import { sandboxBackend } from '../../src/sandbox/registry.js';
import { createHarness, type Harness, onlyRun, pushToMain } from '../helpers/harness.js';
import {
  type AnthropicStandIn,
  type MessagesRequest,
  type ReplyBlock,
  startAnthropicStandIn,
  toolResults,
} from '../helpers/model-stand-in/anthropic.js';

const CLAUDE = process.env.CURUPIRA_REAL_CLAUDE;
const AS_ROOT = process.getuid?.() === 0;
const probe = await sandboxBackend('bubblewrap').probe();
const skipReason = !CLAUDE
  ? 'CURUPIRA_REAL_CLAUDE does not name a Claude Code executable'
  : !probe.ok
    ? `no sandbox here: ${probe.reason}`
    : undefined;
if (skipReason) console.warn(`real Claude Code's tools in the sandbox skipped: ${skipReason}`);

/** The server's name as the engine declares it for a review run (src/engine/run/agent-tools.ts). */
const SERVER = 'curupira-findings';
const REPORT = `mcp__${SERVER}__findings_report`;
const DONE = `mcp__${SERVER}__findings_done`;
const RELAY = '/run/curupira/mcp-relay.cjs';

const CANARY = `sk-ant-canary-${'7'.repeat(40)}`;
/** The canary split in two shell words, so the command that looks for it does not contain it. */
const CANARY_WORDS = `"${CANARY.slice(0, 10)}""${CANARY.slice(10)}"`;
const LOOK_COMMAND = [
  'echo "== env"',
  'env',
  'echo "== proc"',
  "cat /proc/self/environ | tr '\\0' '\\n'",
  'echo "== found"',
  `{ grep -rIl ${CANARY_WORDS} ~ /tmp /run 2>/dev/null; true; }`,
  'echo "== relay"',
  // The processes whose command line names the relay (the bracket keeps grep's own out).
  "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null; echo; done | grep '[m]cp-relay.cjs'",
  'echo "== end"',
].join('; ');

const WATCH = `[automations.review]
trigger_type = "review-watch"
repository = "api"
repo = "acme/api"
prompt = "Review \${review_range}."
sandbox = "required"
`;

const finding = {
  file: 'src/a.ts',
  line_start: 1,
  severity: 'high',
  category: 'security',
  title: 'Hard-coded secret',
  detail: 'The key is in the source.',
};

/** Look around with Bash, report one finding, end the review at `head`, answer. */
function reviewScript(head: string) {
  return (request: MessagesRequest): ReplyBlock[] => {
    if (!request.tools?.some((tool) => tool.name === 'Bash')) return [{ type: 'text', text: 'Review' }];
    const done = toolResults(request).length;
    if (done === 0)
      return [
        { type: 'tool_use', name: 'Bash', input: { command: LOOK_COMMAND, description: 'Look around' } },
      ];
    if (done === 1) return [{ type: 'tool_use', name: REPORT, input: finding }];
    if (done === 2)
      return [{ type: 'tool_use', name: DONE, input: { summary: 'One secret.', reviewed_commit: head } }];
    return [{ type: 'text', text: 'Reported one finding.' }];
  };
}

/** A tool result's text (a string, or text blocks). */
function resultText(block: { content?: unknown }): string {
  const content = block.content;
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part: { text?: string }) => part.text ?? '').join('');
  return JSON.stringify(content);
}

describe.skipIf(skipReason !== undefined)(
  'the real Claude Code reaches the findings tools in the sandbox (CURUPIRA_REAL_CLAUDE)',
  () => {
    let h: Harness;
    let model: AnthropicStandIn;

    beforeEach(async () => {
      model = await startAnthropicStandIn(() => [{ type: 'text', text: 'not yet' }]);
      h = await createHarness({ issues: [], automation: WATCH, provider: 'claude' });
      Object.assign(h.env, {
        ANTHROPIC_API_KEY: CANARY,
        ANTHROPIC_BASE_URL: model.url,
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        ...(AS_ROOT ? { IS_SANDBOX: '1' } : {}),
      });
      h.configure({
        profileExtra: `executable = ${JSON.stringify(CLAUDE)}\npermission_mode = "bypassPermissions"`,
      });
    });

    afterEach(async () => {
      await model.close();
      await h.cleanup();
    });

    it('reports a finding and ends with findings_done through the relay; the key stays with the proxy', async () => {
      const head = await pushToMain(h, { 'src/a.ts': 'export const key = "s3cr3t";\n' }, 'add a');
      model.setScript(reviewScript(head));
      const run = onlyRun((await h.run()).runs);
      expect(run.status, run.reason ?? '').toBe('succeeded');

      // Every main-loop request offered the findings tools under the declared server's name.
      const asked = model.messages().filter((r) => r.body?.tools?.some((t) => t.name === 'Bash'));
      expect(asked).toHaveLength(4);
      for (const request of asked)
        expect(request.body!.tools!.map((t) => t.name)).toEqual(expect.arrayContaining([REPORT, DONE]));
      const results = toolResults(asked.at(-1)!.body!).map(resultText);
      // The tools answered through the socket: the finding is new, the review ended at `head`.
      expect(JSON.parse(results[1]!)).toMatchObject({ outcome: 'new', finding: { file: 'src/a.ts' } });
      expect(JSON.parse(results[2]!)).toMatchObject({ reviewedCommit: head });

      // The agent's shell: the placeholder key, the proxy's base URL, the relay's declaration and no canary.
      const seen = results[0]!;
      expect(seen).toMatch(/^ANTHROPIC_API_KEY=curupira-placeholder-[0-9a-f]+$/m);
      expect(seen).toMatch(/^ANTHROPIC_BASE_URL=http:\/\/127\.0\.0\.1:\d+\/_key\/0$/m);
      expect(seen).not.toContain(CANARY);
      expect(seen).toMatch(/== found\n== relay\n/);
      // The relay Claude Code started as the server: the run folder's script, its socket and run id.
      // (Claude Code's own command line names it too, inside its JSON --mcp-config: not this line.)
      expect(seen).toMatch(new RegExp(`^\\S*/node ${RELAY} /run/curupira/tools\\.sock ${run.id} $`, 'm'));
      // The stand-in got the canary on each Messages request, and no other key.
      expect(model.messages().length).toBeGreaterThan(0);
      for (const request of model.messages()) expect(request.key).toBe(CANARY);
      for (const request of model.requests) if (request.key !== undefined) expect(request.key).toBe(CANARY);

      const store = await h.openStore();
      try {
        const findings = await store.listFindings({ watch: 'review' });
        expect(findings.map((f) => [f.title, f.severity, f.file, f.lastSeenCommit, f.status])).toEqual([
          ['Hard-coded secret', 'high', 'src/a.ts', head, 'open'],
        ]);
        expect((await reviewDone(store, run.id))?.reviewedCommit).toBe(head);
        const record = await store.getRun(run.id);
        const policy = record?.screeningFindings?.find((f) => f.scanner === 'sandbox' && f.rule === 'policy');
        expect(policy?.excerpt).toMatch(
          /^bubblewrap \(sandbox = "required".*model keys held by the key proxy/,
        );
        expect(record?.screeningFindings?.filter((f) => f.rule === 'blocked-connection')).toEqual([]);
      } finally {
        await store.close();
      }
    }, 240_000);
  },
);

describe.runIf(skipReason !== undefined)("the real Claude Code's tools in the sandbox (not here)", () => {
  it.skip(`skipped: ${skipReason ?? ''}`, () => {});
});
