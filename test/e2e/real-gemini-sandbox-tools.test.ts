/**
 * A review watch's run with `sandbox = "required"` whose agent is the real Gemini CLI inside
 * bubblewrap reaches the findings tools. Gemini CLI has no option that adds an MCP server: curupira
 * declares the relay (`/run/curupira/mcp-relay.cjs`, as `curupira-findings`) in the private home's
 * copy of `~/.gemini/settings.json` and allows it with `--allowed-mcp-server-names`. A local
 * stand-in for Google's Gemini API, reached only through the egress and key proxy, calls the
 * findings tool Gemini CLI declared to it, then the done tool; the finding and the done word land
 * in the store, the user's own settings file is unchanged, and the canary key reaches the stand-in
 * only. test/e2e/sandbox-tools.test.ts checks the same with the fake CLI. Without a sandbox
 * (`sandbox = "none"`) the same run declares `curupira mcp` in the same file of a home of curupira's
 * that `GEMINI_CLI_HOME` names (Gemini CLI skips a system settings file not owned by root, so
 * `GEMINI_CLI_SYSTEM_SETTINGS_PATH` cannot serve), the agent's `HOME` unchanged, the rest of the
 * user's `~/.gemini` linked there: their global `GEMINI.md` reaches the model.
 *
 * Skipped unless CURUPIRA_REAL_GEMINI names a Gemini CLI executable (the suite installs nothing and
 * reaches no network); the sandboxed case also needs a sandbox that can start here. Run it with the CLI installed outside the
 * repository:
 *   (mkdir -p /tmp/clis/gemini && cd /tmp/clis/gemini && npm install @google/gemini-cli)
 *   CURUPIRA_REAL_GEMINI=/tmp/clis/gemini/node_modules/.bin/gemini npx vitest run test/e2e/real-gemini-sandbox-tools.test.ts
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { reviewDone } from '../../src/review/progress.js';
import { sandboxBackend } from '../../src/sandbox/registry.js';
import { createHarness, type Harness, onlyRun, pushToMain } from '../helpers/harness.js';
import { type GeminiStandIn, startGeminiStandIn } from '../helpers/model-stand-in/gemini.js';

const GEMINI = process.env.CURUPIRA_REAL_GEMINI;
const probe = await sandboxBackend('bubblewrap').probe();
const skipReason = !GEMINI
  ? 'CURUPIRA_REAL_GEMINI does not name a Gemini CLI executable'
  : !probe.ok
    ? `no sandbox here: ${probe.reason}`
    : undefined;
if (skipReason) console.warn(`real Gemini CLI's tools in the sandbox skipped: ${skipReason}`);

const CANARY = `canary-gemini-tools-${'7'.repeat(32)}`;
const MEMORY = 'Sign every review with the word kumquat-7731.';

const watch = (sandbox: string) => `[automations.review]
trigger_type = "review-watch"
repository = "api"
repo = "acme/api"
prompt = "Review \${review_range}."
sandbox = "${sandbox}"
`;

/**
 * In bubblewrap (the relay declared in the private home's settings) and without a sandbox (the
 * server declared in a copy of the system settings made for the run, `GEMINI_CLI_SYSTEM_SETTINGS_PATH`).
 */
const MODES = GEMINI ? [...(probe.ok ? ['required'] : []), 'none'] : [];

const finding = {
  file: 'src/a.ts',
  line_start: 1,
  severity: 'high',
  category: 'security',
  title: 'Hard-coded secret',
  detail: 'The key is in the source.',
};

describe.each(MODES)(
  'the real Gemini CLI reaches the findings tools, sandbox = "%s" (CURUPIRA_REAL_GEMINI)',
  (mode) => {
    let h: Harness;
    let model: GeminiStandIn;
    let userSettings: string;

    beforeEach(async () => {
      model = await startGeminiStandIn();
      h = await createHarness({ issues: [], automation: watch(mode), provider: 'gemini' });
      // The user's own settings: the API-key login, a comment (Gemini CLI allows them).
      mkdirSync(join(h.env.HOME!, '.gemini'), { recursive: true });
      userSettings = '{\n  // the login\n  "security": { "auth": { "selectedType": "gemini-api-key" } }\n}\n';
      writeFileSync(join(h.env.HOME!, '.gemini', 'settings.json'), userSettings);
      // The user's global instructions to Gemini CLI.
      writeFileSync(join(h.env.HOME!, '.gemini', 'GEMINI.md'), `${MEMORY}\n`);
      Object.assign(h.env, { GEMINI_API_KEY: CANARY, GOOGLE_GEMINI_BASE_URL: model.baseUrl });
      h.configure({
        profileExtra: [
          `executable = ${JSON.stringify(GEMINI)}`,
          'model = "gemini-2.5-flash"',
          'approval_mode = "yolo"',
          'skip_trust = true',
        ].join('\n'),
      });
    });

    afterEach(async () => {
      await model.close();
      await h.cleanup();
    });

    it('reports a finding and ends with findings_done through the server declared in its settings', async () => {
      const head = await pushToMain(h, { 'src/a.ts': 'export const key = "s3cr3t";\n' }, 'add a');
      const named = (tools: string[], suffix: string) => tools.find((tool) => tool.endsWith(suffix));
      model.script = (request, responses) => {
        const report = named(request.tools, 'findings_report');
        const done = named(request.tools, 'findings_done');
        if (!report || !done) return undefined;
        if (responses === 0) return { name: report, args: finding };
        if (responses === 1) return { name: done, args: { summary: 'One secret.', reviewed_commit: head } };
        return undefined;
      };
      const run = onlyRun((await h.run()).runs);
      expect(run.status, run.reason ?? '').toBe('succeeded');

      // Gemini CLI declared the two tools to the model, under the names it gives MCP tools.
      const offered = model.requests.filter((r) => r.stream && r.tools.length > 0);
      expect(offered.length).toBeGreaterThan(0);
      const tools = offered[0]!.tools;
      expect(named(tools, 'findings_report'), tools.join(', ')).toBeDefined();
      expect(named(tools, 'findings_done'), tools.join(', ')).toBeDefined();
      expect(model.requests.map((r) => r.answer)).toEqual(
        expect.arrayContaining([named(tools, 'findings_report'), named(tools, 'findings_done')]),
      );
      // Every request carried the canary: put there by the key proxy in the sandbox, sent by the
      // agent itself without one.
      for (const request of model.requests) expect(request.authorization).toBe(`Bearer ${CANARY}`);

      const store = await h.openStore();
      try {
        const findings = await store.listFindings({ watch: 'review' });
        expect(findings.map((f) => [f.title, f.severity, f.file, f.lastSeenCommit, f.status])).toEqual([
          ['Hard-coded secret', 'high', 'src/a.ts', head, 'open'],
        ]);
        expect((await reviewDone(store, run.id))?.reviewedCommit).toBe(head);
      } finally {
        await store.close();
      }
      // The user's file is as it was: the declaration went into the private home's copy, or the
      // copy in curupira's home for the task, only.
      expect(readFileSync(join(h.env.HOME!, '.gemini', 'settings.json'), 'utf8')).toBe(userSettings);
      // Outside a sandbox the user's global GEMINI.md still reached the model (linked into that
      // home); a sandbox's private home holds only the driver's files, so not there.
      const told = model.requests.some((r) => r.body?.includes(MEMORY));
      expect(told).toBe(mode === 'none');
    }, 240_000);
  },
);

describe.runIf(skipReason !== undefined)("the real Gemini CLI's tools in the sandbox (not here)", () => {
  // Without a sandbox here, the unsandboxed case above still runs when CURUPIRA_REAL_GEMINI is set.
  it.skip(`skipped: ${skipReason ?? ''}`, () => {});
});
