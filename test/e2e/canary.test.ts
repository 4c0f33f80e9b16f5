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
 *
 * Issue 34, item 5: every process curupira starts, not only the agents, gets an environment built
 * from an allowlist. Shims first on PATH (`git`, `claude`, `codex`) and the repository's
 * `setup_script` write their whole environment to a file before doing their work, for `run` (the
 * clone, fetch and worktree steps, the setup script, the agents) and
 * `doctor` (each profile's `--help`, `git --version`, `git ls-remote`). The GitHub token reaches
 * only git's commands that read a remote (clone, fetch, ls-remote: for a credential helper such as
 * `gh auth git-credential`); a provider's key only that provider's CLI; an unknown variable nothing.
 */
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
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
  GITHUB_TOKEN: canary('github-token-2'),
  DEPLOY_SECRET_TOKEN: canary('deploy-secret'),
  SECRET_X: canary('secret-x'),
  UNRELATED_SETTING: canary('unknown-variable'),
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

/** Where the shims and the setup script write what they saw: one file per process. */
const recordDir = mkdtempSync(join(tmpdir(), 'curupira-env-record-'));
const shimDir = join(recordDir, 'bin');
const ARGV_MARK = '\n---argv---\n';

/** A shell line that writes the environment, then the arguments (NUL-separated), to a new file. */
function recordLine(name: string): string {
  return `f=$(/usr/bin/mktemp '${recordDir}/${name}-XXXXXX'); { /usr/bin/env; printf '${ARGV_MARK.replaceAll('\n', '\\n')}'; printf '%s\\0' "$@"; } > "$f"`;
}

/** A shim named `name` first on PATH that records, then runs `target` with the same arguments. */
function installShim(name: string, target: string): void {
  const path = join(shimDir, name);
  writeFileSync(path, `#!/bin/sh\n${recordLine(name)}\nexec '${target}' "$@"\n`);
  chmodSync(path, 0o755);
}

interface Recorded {
  /** `git`, `claude`, `codex` or `setup`. */
  name: string;
  argv: string[];
  /** The whole environment, as `env` printed it. */
  envText: string;
  keys: string[];
}

function recorded(): Recorded[] {
  return (
    readdirSync(recordDir)
      .filter((f) => f !== 'bin')
      .map((file) => {
        const text = readFileSync(join(recordDir, file), 'utf8');
        const cut = text.indexOf(ARGV_MARK);
        const envText = cut === -1 ? text : text.slice(0, cut);
        const argv =
          cut === -1
            ? []
            : text
                .slice(cut + ARGV_MARK.length)
                .split('\0')
                .slice(0, -1);
        const keys = envText
          .split('\n')
          .flatMap((line) => /^([A-Za-z_][A-Za-z0-9_]*)=/.exec(line)?.[1] ?? []);
        return { name: file.replace(/-[^-]+$/, ''), argv, envText, keys };
      })
      // The agents' own git commands (their commits) have the agent's environment: not ours to start.
      .filter((r) => !r.keys.includes('FAKE_AGENT_LOG') || r.name !== 'git')
  );
}

/** git's command word: the first argument that is not an option (`-c k=v`, `-C dir` skipped). */
function gitCommand(argv: readonly string[]): string | undefined {
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '-c' || argv[i] === '-C') i++;
    else if (!argv[i]!.startsWith('-')) return argv[i];
  }
  return undefined;
}

const SETUP_SCRIPT = `#!/bin/sh\n${recordLine('setup')}\nexit 0\n`;

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
    // A model adds `--model`, which doctor checks against each CLI's `--help`.
    profileExtra: 'pass_env = ["TEAM_VAULT_PASSWORD"]\nmodel = "canary-model"',
    originFiles: { 'setup.sh': { content: SETUP_SCRIPT, executable: true } },
    repositoryExtra: 'setup_script = "setup.sh"',
    // This audits the environment curupira builds for each process (the allowlists), which the
    // shims record from outside any sandbox; a sandbox then narrows the agent's further (private
    // home, placeholders for model keys: test/e2e/sandbox-escape.test.ts).
    settingsExtra: 'sandbox = "none"',
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
    `[agents.profiles.cx]\nprovider = "codex"\nmodel = "canary-model"\nenv = { FAKE_AGENT_LOG = ${JSON.stringify(h.logDir)}, FAKE_AGENT_PRINT_ENV = "1" }\n`,
  );
  h.writeSettings(text);
  mkdirSync(shimDir, { recursive: true });
  installShim('git', '/usr/bin/git');
  installShim('claude', join(h.binDir, 'claude'));
  installShim('codex', join(h.binDir, 'codex'));
  env = { ...h.env, ...CANARIES, PATH: `${shimDir}:${h.env.PATH}` };
  await cli(['run']);
  await cli(['doctor']);
}, 120_000);

afterAll(async () => {
  await h?.cleanup();
  rmSync(recordDir, { recursive: true, force: true });
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

describe('canaries in the environment of every process curupira starts', () => {
  const NETWORK = ['clone', 'fetch', 'ls-remote'];

  it('recorded each kind of process: git steps, the setup script, the agents and doctor’s probes', () => {
    const all = recorded();
    const git = all.filter((r) => r.name === 'git').map((r) => gitCommand(r.argv));
    for (const command of ['clone', 'fetch', 'worktree', 'ls-remote'])
      expect(git, command).toContain(command);
    expect(all.some((r) => r.name === 'git' && r.argv.includes('--version'))).toBe(true);
    // The setup script ran once, after the fresh clone.
    expect(all.filter((r) => r.name === 'setup')).toHaveLength(1);
    for (const agent of ['claude', 'codex']) {
      const calls = all.filter((r) => r.name === agent);
      expect(
        calls.some((r) => r.argv.includes('--help')),
        `${agent} --help`,
      ).toBe(true);
      expect(calls.some((r) => !r.argv.includes('--help'))).toBe(true);
    }
  });

  it('the GitHub token reaches only git’s commands that read a remote', () => {
    for (const r of recorded()) {
      const what = `${r.name} ${r.argv.slice(0, 6).join(' ')}`;
      const found = leaks(r.envText).filter((n) => n === 'GH_TOKEN' || n === 'GITHUB_TOKEN');
      if (r.name === 'git' && NETWORK.includes(gitCommand(r.argv) ?? '')) continue;
      expect(found, what).toEqual([]);
      expect(r.keys, what).not.toContain('GH_TOKEN');
      expect(r.keys, what).not.toContain('GITHUB_TOKEN');
    }
  });

  it('a provider’s key reaches only that provider’s CLI (its run and doctor’s --help); unknown variables nothing', () => {
    const allowed: Record<string, CanaryName[]> = {
      claude: ['ANTHROPIC_API_KEY', 'TEAM_VAULT_PASSWORD'],
      codex: ['OPENAI_API_KEY'],
      git: ['GH_TOKEN', 'GITHUB_TOKEN'],
      setup: [],
    };
    const all = recorded();
    expect(all.length).toBeGreaterThan(10);
    for (const r of all) {
      const what = `${r.name} ${r.argv.slice(0, 6).join(' ')}`;
      expect(
        leaks(r.envText).filter((n) => !allowed[r.name]!.includes(n)),
        what,
      ).toEqual([]);
      for (const name of ['DEPLOY_SECRET_TOKEN', 'SECRET_X', 'UNRELATED_SETTING']) {
        expect(r.keys, what).not.toContain(name);
      }
    }
    // Each CLI's probes see what its runs see: its own key.
    for (const r of all.filter((c) => c.name === 'claude'))
      expect(leaks(r.envText)).toContain('ANTHROPIC_API_KEY');
    for (const r of all.filter((c) => c.name === 'codex'))
      expect(leaks(r.envText)).toContain('OPENAI_API_KEY');
  });
});
