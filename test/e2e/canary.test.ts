/**
 * Issue 11, item 4 (acceptance): unique canary values in the GitHub token, in the provider keys of
 * two providers, in a secret-named variable no provider reads, and in one the profile passes on
 * purpose. Two agents print their whole environment (FAKE_AGENT_PRINT_ENV=1) on stdout and stderr:
 * one run succeeds, one fails. Afterwards no canary appears in any file under the test's world
 * (state, workspaces, worktrees, transcripts, stderr logs, the log file, the fake agents' own
 * log), nor in anything curupira printed (`run`, `runs`, `runs show`, their JSON forms). Only the
 * agents' environments hold a canary, and only the ones their provider needs or their profile
 * asked for: checked through the SHA-256 the fake agent logs of each value, never the value.
 *
 * Complements secrets.test.ts (provider keys echoed by name, JSON-escaped values): here every
 * variable is printed at once, by two providers, and the GitHub token and the dropped variables
 * are covered too. The canaries match no token shape, so only redaction by value can catch them.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createHarness,
  type FakeInvocation,
  filesUnder,
  type Harness,
  issueAutomation,
  runBuiltCli,
} from '../helpers/harness.js';

function canary(kind: string): string {
  return `canary-${kind}-${randomBytes(8).toString('hex')}`;
}

const CANARIES = {
  GH_TOKEN: canary('github-token'),
  ANTHROPIC_API_KEY: canary('anthropic-key'),
  OPENAI_API_KEY: canary('openai-key'),
  DEPLOY_SECRET_TOKEN: canary('deploy-secret'),
  TEAM_VAULT_PASSWORD: canary('passed-on-purpose'),
} as const;
type CanaryName = keyof typeof CANARIES;

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function leaks(text: string): CanaryName[] {
  return (Object.keys(CANARIES) as CanaryName[]).filter((name) => text.includes(CANARIES[name]));
}

/** Which canaries reached an agent, by the hashes it logged. */
function canariesIn(call: FakeInvocation): CanaryName[] {
  return (Object.keys(CANARIES) as CanaryName[]).filter(
    (name) => call.env.hashes[name] === sha256(CANARIES[name]),
  );
}

let h: Harness;
let env: NodeJS.ProcessEnv;
const printed: string[] = [];

async function cli(args: string[]) {
  const result = await runBuiltCli(['--config', h.settingsFile, ...args], { env });
  printed.push(result.stdout, result.stderr);
  return result;
}

beforeAll(async () => {
  h = await createHarness({
    issues: [
      { title: 'claude speaks', body: '[[fake:commit]]', labels: ['to-claude'] },
      { title: 'codex fails', body: '[[fake:fail]]', labels: ['to-codex'] },
    ],
    agentEnv: { FAKE_AGENT_PRINT_ENV: '1' },
    profileExtra: 'pass_env = ["TEAM_VAULT_PASSWORD"]',
    automation: `${issueAutomation('talk', { labels: ['to-claude'], prompt: '${issue_title}: ${issue_body}' })}
${issueAutomation('break', { labels: ['to-codex'], prompt: '${issue_title}: ${issue_body}', extra: 'profile = "cx"' })}
[agents.profiles.cx]
provider = "codex"
`,
  });
  h.world.addLabel('acme/api', 'to-claude');
  h.world.addLabel('acme/api', 'to-codex');
  h.world.addToken(CANARIES.GH_TOKEN, 'octocat');
  // The codex profile gets the fake's knobs too (the harness sets them on the main profile only).
  const text = readFileSync(h.settingsFile, 'utf8').replace(
    '[agents.profiles.cx]\nprovider = "codex"\n',
    `[agents.profiles.cx]\nprovider = "codex"\nenv = { FAKE_AGENT_LOG = ${JSON.stringify(h.logDir)}, FAKE_AGENT_PRINT_ENV = "1" }\n`,
  );
  h.writeSettings(text);
  env = { ...h.env, ...CANARIES };
  await cli(['run']);
}, 120_000);

afterAll(async () => {
  await h?.cleanup();
});

describe('canaries in the GitHub token, provider keys and secret-named variables', () => {
  it('ran both agents, one succeeding and one failing, each printing its environment', async () => {
    expect(printed[0]).toMatch(/^2 runs: 1 succeeded, 1 failed\n/);
    const store = await h.openStore();
    try {
      const runs = await store.listRuns({});
      const talk = runs.find((r) => r.automationId === 'talk')!;
      const broke = runs.find((r) => r.automationId === 'break')!;
      expect(talk.status).toBe('succeeded');
      expect(broke.status).toBe('failed');
      // What the agents printed was stored, redacted: a leak would have shown up here.
      const transcript = readFileSync(talk.transcriptPath!, 'utf8');
      expect(transcript).toContain('ANTHROPIC_API_KEY=[redacted]');
      expect(transcript).toContain('TEAM_VAULT_PASSWORD=[redacted]');
      expect(readFileSync(broke.transcriptPath!, 'utf8')).toContain('OPENAI_API_KEY=[redacted]');
    } finally {
      await store.close();
    }
  });

  it('reached each agent only where its provider needs it or its profile asked for it', () => {
    const [claude] = h.agentRuns('claude');
    const [codex] = h.agentRuns('codex');
    expect(claude && codex).toBeTruthy();
    // claude: its own key, and the variable its profile passes on purpose, with its exact value.
    expect(canariesIn(claude!).sort()).toEqual(['ANTHROPIC_API_KEY', 'TEAM_VAULT_PASSWORD']);
    // codex: its own key only (its profile passes nothing).
    expect(canariesIn(codex!)).toEqual(['OPENAI_API_KEY']);
    for (const call of [claude!, codex!]) {
      expect(call.env.keys).not.toContain('GH_TOKEN');
      expect(call.env.keys).not.toContain('GITHUB_TOKEN');
      expect(call.env.keys).not.toContain('DEPLOY_SECRET_TOKEN');
    }
  });

  it('appear in no file: state, workspaces, transcripts, stderr logs, the log file, the agents’ log', () => {
    const files = filesUnder(h.dir);
    expect(files.some((f) => f.endsWith('curupira.log'))).toBe(true);
    expect(files.some((f) => f.endsWith('.stderr.log'))).toBe(true);
    expect(files.some((f) => f.includes('state.sqlite3'))).toBe(true);
    expect(files.some((f) => f.includes(join('workspaces', 'api')))).toBe(true);
    for (const file of files) {
      expect(leaks(readFileSync(file, 'latin1')), file).toEqual([]);
      expect(leaks(readFileSync(file, 'utf8')), file).toEqual([]);
    }
  });

  it('appear in nothing curupira printed: run, runs, runs show, and their JSON', async () => {
    const list = await cli(['runs']);
    expect(list.code, list.stderr).toBe(0);
    const ids = [...new Set([...list.stdout.matchAll(/\b(r_[A-Za-z0-9_-]+)/g)].map((m) => m[1]!))];
    expect(ids).toHaveLength(2);
    await cli(['runs', '--json']);
    for (const id of ids) {
      const show = await cli(['runs', 'show', id]);
      expect(show.code, show.stderr).toBe(0);
      expect(show.stdout).toContain('=[redacted]');
      await cli(['runs', 'show', id, '--json']);
    }
    expect(printed.length).toBeGreaterThanOrEqual(10);
    for (const output of printed) expect(leaks(output)).toEqual([]);
  });
});
