/**
 * Issue 29/32 inside a sandbox: a sandboxed run's agent reaches the run's curupira tools (the
 * findings tools of a review, the result tool of a step with outcomes) through the relay its CLI
 * starts inside bubblewrap (the run folder's `mcp-relay.cjs`, run by the Node.js binary the
 * sandbox binds), which passes MCP's stdio to the socket the engine serves the run's tools on.
 * The fake CLIs start the declared server as the real ones do; the engine records what they report.
 *
 * Where no sandbox can start (no bubblewrap, user namespaces off), the suite is skipped with the
 * reason, never passed silently.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Provider } from '../../src/agents/schemas.js';
import { reviewDone } from '../../src/review/progress.js';
import { sandboxBackend } from '../../src/sandbox/registry.js';
import { createHarness, type Harness, issueAutomation, onlyRun, pushToMain } from '../helpers/harness.js';

const probe = await sandboxBackend('bubblewrap').probe();
if (!probe.ok) console.warn(`sandboxed tools suite skipped: ${probe.reason}`);

let h: Harness | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

const RELAY = '/run/curupira/mcp-relay.cjs';

/** A watch whose agent reports through the findings tools (the fake agent's directives), sandboxed. */
const REPORTING_WATCH = `[automations.review]
trigger_type = "review-watch"
repository = "api"
repo = "acme/api"
prompt = "Review \${review_range}. [[fake:finding=src/a.ts:1:high:Hard-coded secret]] [[fake:review-done]]"
sandbox = "required"
`;

const TRIAGE = issueAutomation('triage', {
  prompt: 'Triage issue #${issue_number}.\n${issue_body}',
  extra: ['outcomes = ["ready-for-agent", "needs-info"]', 'sandbox = "required"'].join('\n'),
});

/** The Gemini settings file of the run's private home (one task: one home). */
function geminiSettings(harness: Harness): string {
  const homes = join(harness.dir, 'state', 'sandbox', 'homes');
  const [home] = readdirSync(homes);
  return readFileSync(join(homes, home!, '.gemini', 'settings.json'), 'utf8');
}

describe.skipIf(!probe.ok)('a sandboxed run reaches its tools through the relay (bubblewrap)', () => {
  it.each<Provider>(['claude', 'codex', 'gemini'])(
    '%s: a review reports a finding and ends with findings_done; the engine records both',
    async (provider) => {
      h = await createHarness({ issues: [], automation: REPORTING_WATCH, provider });
      const head = await pushToMain(h, { 'src/a.ts': 'export const key = "s3cr3t";\n' }, 'add a');
      const run = onlyRun((await h.run()).runs);
      expect(run.status, run.reason ?? '').toBe('succeeded');
      const argv = h.agentRuns(provider)[0]!.argv.join(' ');
      // Gemini CLI reads MCP servers from its settings only: the private home's copy declares the
      // relay, and the command line allows it by name (and nothing the repository declares).
      const declared = provider === 'gemini' ? geminiSettings(h) : argv;
      if (provider === 'gemini') expect(argv).toContain('--allowed-mcp-server-names curupira-findings');
      // The relay, not `curupira mcp`: no settings path, no curupira command inside.
      expect(declared).toContain(RELAY);
      expect(declared).toContain(run.id);
      expect(declared).not.toContain('"mcp"');
      expect(declared).not.toContain(h.settingsFile);
      const store = await h.openStore();
      try {
        const findings = await store.listFindings({ watch: 'review' });
        expect(findings.map((f) => [f.title, f.severity, f.file, f.lastSeenCommit, f.status])).toEqual([
          ['Hard-coded secret', 'high', 'src/a.ts', head, 'open'],
        ]);
        expect((await reviewDone(store, run.id))?.reviewedCommit).toBe(head);
        const record = await store.getRun(run.id);
        expect(JSON.stringify(record)).toContain('bubblewrap');
      } finally {
        await store.close();
      }
    },
    120_000,
  );

  it.each<Provider>(['claude', 'codex', 'qwen', 'copilot', 'opencode', 'kilo', 'gemini'])(
    '%s: a step with outcomes reports its result through result_report',
    async (provider) => {
      const issues = [{ title: 'Vague', body: '[[fake:report=#1 needs-info: no steps to reproduce]]' }];
      h = await createHarness({ issues, automation: TRIAGE, provider });
      const [run] = (await h.run()).runs;
      expect(run, run?.reason ?? '').toMatchObject({
        status: 'succeeded',
        result: { outcome: 'needs-info', reason: 'no steps to reproduce', item: 1, via: 'tool' },
      });
      // The result came through the tool (`via: "tool"`); OpenCode's declaration is in its
      // environment, which the fake records hashed only.
      const call = h.agentRuns(provider)[0]!;
      if (provider === 'opencode') expect(call.env.keys).toContain('OPENCODE_CONFIG_CONTENT');
      else if (provider === 'kilo') expect(call.env.keys).toContain('KILO_CONFIG_CONTENT');
      else if (provider === 'gemini') expect(geminiSettings(h)).toContain(RELAY);
      else expect(call.argv.join(' ')).toContain(RELAY);
    },
    120_000,
  );
});
