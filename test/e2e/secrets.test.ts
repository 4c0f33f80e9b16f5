/**
 * Issue 9, item 7: a provider key curupira hands to an agent is scrubbed from everything curupira
 * writes or prints, even when the agent echoes it on stdout (transcript, run record) and stderr
 * (stderr log, the run's failure reason). The canaries match no known token shape, so only the
 * registration of the values curupira passed can catch them; one holds JSON-escaped characters,
 * so that it appears escaped in the agent's JSON output.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHarness, filesUnder, type Harness, issueAutomation, runBuiltCli } from '../helpers/harness.js';

const CANARY_KEY = 'canary-anthropic-"quoted"\\value-7f3a9c1e5b2d';
const CANARY_AWS = 'canary-aws-4e8b1d6f9a2c7e3b';
/** Every form a canary could take in a file: as is, and escaped inside a JSON string. */
const FORMS = [CANARY_KEY, CANARY_AWS, JSON.stringify(CANARY_KEY).slice(1, -1)];

function leaks(text: string): string[] {
  return FORMS.filter((form) => text.includes(form));
}

let h: Harness;
let env: NodeJS.ProcessEnv;
let runOutput: { code: number | null; stdout: string; stderr: string };

beforeAll(async () => {
  h = await createHarness({
    issues: [
      {
        title: 'speaks',
        body: '[[fake:echo-env=ANTHROPIC_API_KEY]] [[fake:echo-env=AWS_SECRET_ACCESS_KEY]] [[fake:commit]]',
      },
      {
        title: 'fails',
        body: '[[fake:stderr-env=ANTHROPIC_API_KEY]] [[fake:stderr-env=AWS_SECRET_ACCESS_KEY]] [[fake:fail]]',
      },
    ],
    automation: issueAutomation('fix', { prompt: '${issue_title}: ${issue_body}' }),
    // The bodies ask the agent to print its keys (the screen reads that as a request for secrets):
    // they come from a trusted author here, so the runs go ahead and the test sees what leaks.
    screening: 'required = false\ntrusted_authors = ["octocat"]',
  });
  env = { ...h.env, ANTHROPIC_API_KEY: CANARY_KEY, AWS_SECRET_ACCESS_KEY: CANARY_AWS };
  runOutput = await runBuiltCli(['--config', h.settingsFile, 'run'], { env });
}, 120_000);

afterAll(async () => {
  await h?.cleanup();
});

describe('secrets passed to an agent', () => {
  it('reached the agent, which printed them (so the test would see a leak)', async () => {
    expect(runOutput.stdout).toMatch(/^2 runs: 1 succeeded, 1 failed\n/);
    const store = await h.openStore();
    try {
      const runs = await store.listRuns({});
      const spoke = runs.find((r) => r.itemTitle === 'speaks')!;
      const failed = runs.find((r) => r.itemTitle === 'fails')!;
      const transcript = readFileSync(spoke.transcriptPath!, 'utf8');
      expect(transcript).toContain('ANTHROPIC_API_KEY=[redacted]');
      expect(transcript).toContain('AWS_SECRET_ACCESS_KEY=[redacted]');
      expect(failed.status).toBe('failed');
      expect(failed.reason).toContain('ANTHROPIC_API_KEY=[redacted]');
    } finally {
      await store.close();
    }
  });

  it('appear in no file under the temporary world: state, log, transcripts, worktrees', () => {
    const files = filesUnder(h.dir);
    expect(files.some((f) => f.endsWith('curupira.log'))).toBe(true);
    expect(files.some((f) => f.endsWith('.stderr.log'))).toBe(true);
    expect(files.some((f) => f.includes('state.sqlite3'))).toBe(true);
    for (const file of files) {
      expect(leaks(readFileSync(file, 'latin1')), file).toEqual([]);
      expect(leaks(readFileSync(file, 'utf8')), file).toEqual([]);
    }
  });

  it('appear in no output of run, runs or runs show', async () => {
    expect(leaks(runOutput.stdout + runOutput.stderr)).toEqual([]);
    const list = await runBuiltCli(['--config', h.settingsFile, 'runs'], { env });
    expect(list.code, list.stderr).toBe(0);
    expect(leaks(list.stdout + list.stderr)).toEqual([]);
    const ids = [...list.stdout.matchAll(/\b(r_[A-Za-z0-9_-]+)/g)].map((m) => m[1]!);
    expect(new Set(ids).size).toBe(2);
    for (const id of new Set(ids)) {
      const show = await runBuiltCli(['--config', h.settingsFile, 'runs', 'show', id], { env });
      expect(show.code, show.stderr).toBe(0);
      expect(show.stdout).toContain('[redacted]');
      expect(leaks(show.stdout + show.stderr)).toEqual([]);
    }
  });
});
