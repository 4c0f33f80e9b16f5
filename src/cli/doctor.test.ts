import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshSchema } from '../../test/helpers/pg.js';
import { installFakeAgents } from '../agents/fake/install.js';
import { loadSettingsFromText } from '../config/load.js';
import { openStore } from '../store/index.js';
import { git } from '../workspace/git.js';
import { createOrigin, isolateGitForTests, type OriginRepo } from '../workspace/testing.js';
import { screeningChecks, unattendedChecks } from './doctor.js';
import { runCliCaptured } from './testing.js';

isolateGitForTests();
const dir = mkdtempSync(join(tmpdir(), 'curupira-doctor-'));
let origin: OriginRepo;
let env: NodeJS.ProcessEnv;
beforeAll(async () => {
  origin = await createOrigin();
  const bins = join(dir, 'bin');
  installFakeAgents(bins);
  env = { ...process.env, PATH: `${bins}:${process.env.PATH}`, HOME: dir };
});
afterAll(async () => {
  await origin.cleanup();
  rmSync(dir, { recursive: true, force: true });
});

/** Schedules only, so no GitHub is needed; `review` is a chain after `nightly`. */
function settings(name: string, repositories: string, state = 'state/state.sqlite3'): string {
  const file = join(dir, name, 'settings.toml');
  mkdirSync(join(dir, name), { recursive: true });
  writeFileSync(
    file,
    `[settings]
workspace_dir = "ws"
state_db_path = "${state}"
${repositories}
[agents.defaults]
profile = "c"
[agents.profiles.c]
provider = "claude"
[automations.nightly]
repository = "good"
schedule = "0 3 * * *"
prompt = "Tidy up"
[automations.review]
after = "nightly"
repository = "good"
prompt = "Review \${upstream_branch}"
`,
  );
  return file;
}

function lines(stdout: string): string[] {
  return stdout.trimEnd().split('\n');
}

describe('doctor: repositories', () => {
  it('checks that each remote answers, with git’s own reason when it does not, credentials scrubbed', async () => {
    const missing = join(dir, 'no-such-remote.git');
    const file = settings(
      'remotes',
      `[repositories.good]\nremote = "file://${origin.url}"\n[repositories.gone]\nremote = "file://${missing}"\n[repositories.secret]\nremote = "https://user:hunter2@127.0.0.1:1/acme/api.git"\n`,
    );
    const result = await runCliCaptured(['doctor', '-c', file], { env });
    const out = lines(result.stdout);
    expect(out).toContain(`ok    repository good: file://${origin.url} answers (default branch main)`);
    expect(out).toContain(
      `FAIL  repository gone: file://${missing} cannot be read: fatal: '${missing}' does not appear to be a git repository`,
    );
    expect(out.find((l) => l.startsWith('FAIL  repository secret:'))).toMatch(
      /^FAIL {2}repository secret: https:\/\/\[redacted\]@127\.0\.0\.1:1\/acme\/api\.git cannot be read: fatal: unable to access/,
    );
    expect(result.stdout).not.toContain('hunter2');
    expect(out.at(-1)).toBe('2 checks failed.');
    expect(result.code).toBe(1);
    expect(readdirSync(join(dir, 'remotes'))).toEqual(['settings.toml']);
  });

  it('for an existing checkout, requires a Git checkout and asks its origin', async () => {
    const file = settings(
      'checkouts',
      `[repositories.good]\nremote = "file://${origin.url}"\n[repositories.plain]\nremote = "file://${origin.url}"\n`,
    );
    const ws = join(dir, 'checkouts', 'ws');
    mkdirSync(join(ws, 'plain'), { recursive: true });
    await git(['clone', '-q', origin.url, join(ws, 'good')], { cwd: ws });
    const result = await runCliCaptured(['doctor', '-c', file], { env });
    const out = lines(result.stdout);
    expect(out).toContain(
      `ok    repository good: checkout ${join(ws, 'good')}; its origin answers (default branch main)`,
    );
    expect(out).toContain(
      `FAIL  repository plain: ${join(ws, 'plain')} exists but is not a Git checkout; move it away or set repositories.plain.path`,
    );
    // The origin of the checkout is what is asked, whatever the settings say now.
    await git(['remote', 'set-url', 'origin', join(dir, 'moved.git')], { cwd: join(ws, 'good') });
    const moved = await runCliCaptured(['doctor', '-c', file], { env });
    expect(lines(moved.stdout).find((l) => l.includes('repository good'))).toBe(
      `FAIL  repository good: origin of ${join(ws, 'good')} cannot be read: fatal: '${join(dir, 'moved.git')}' does not appear to be a git repository`,
    );
  });
});

describe('doctor: the state file', () => {
  const repo = () => `[repositories.good]\nremote = "file://${origin.url}"\n`;

  it('is ok when missing (created on the first run) and names a chain’s upstream', async () => {
    const result = await runCliCaptured(['doctor', '-c', settings('fresh', repo())], { env });
    const out = lines(result.stdout);
    expect(out).toContain(
      `ok    state file: ${join(dir, 'fresh', 'state', 'state.sqlite3')} will be created on the first run`,
    );
    expect(out).toContain("ok    automation review: runs after 'nightly' (cron; no runs yet)");
    expect(out).toContain('ok    GitHub: not needed: no automation reads its work from GitHub');
    expect(result.code).toBe(0);
  });

  it('reports a readable state file of ours, and the upstream’s last run', async () => {
    const file = settings('ours', repo());
    const path = join(dir, 'ours', 'state', 'state.sqlite3');
    const store = await openStore(path, { now: () => Date.parse('2026-03-01T03:00:00Z') });
    const run = await store.createRun({
      automationId: 'nightly',
      taskKey: 'nightly:cron:1',
      repo: 'good',
      taskType: 'cron',
      itemId: '1',
      itemKey: 'cron:1',
      itemTitle: 'nightly',
      itemUrl: '',
      status: 'running',
    });
    await store.updateRun(run.id, { status: 'succeeded', finishedAt: '2026-03-01T03:05:00.000Z' });
    await store.close();
    const result = await runCliCaptured(['doctor', '-c', file], { env });
    const out = lines(result.stdout);
    expect(out).toContain(`ok    state file: ${path} is curupira's and readable (1 run, 0 saved sessions)`);
    expect(out).toContain(
      "ok    automation review: runs after 'nightly' (cron; last run succeeded at 2026-03-01 03:05 UTC)",
    );
  });

  it('fails for a foreign or corrupt state file, and leaves it alone', async () => {
    const foreign = settings('foreign', repo());
    const foreignPath = join(dir, 'foreign', 'state', 'state.sqlite3');
    mkdirSync(join(dir, 'foreign', 'state'), { recursive: true });
    const db = new Database(foreignPath);
    db.exec("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('mine')");
    db.close();
    const a = await runCliCaptured(['doctor', '-c', foreign], { env });
    expect(lines(a.stdout).find((l) => l.startsWith('FAIL  state file:'))).toMatch(
      /^FAIL {2}state file: Cannot safely read state database .*It holds tables of another application\./,
    );
    expect(lines(a.stdout)).toContain(
      "ok    automation review: runs after 'nightly' (cron; its runs are unknown: the state file cannot be read)",
    );
    expect(a.code).toBe(1);

    const corrupt = settings('corrupt', repo());
    const corruptPath = join(dir, 'corrupt', 'state', 'state.sqlite3');
    mkdirSync(join(dir, 'corrupt', 'state'), { recursive: true });
    writeFileSync(corruptPath, 'this is not a database at all, just text that is long enough to matter');
    const b = await runCliCaptured(['doctor', '-c', corrupt], { env });
    expect(lines(b.stdout).find((l) => l.startsWith('FAIL  state file:'))).toMatch(
      /^FAIL {2}state file: Cannot safely read state database .*It is not a SQLite database\./,
    );
    expect(readdirSync(join(dir, 'corrupt', 'state'))).toEqual(['state.sqlite3']);
  });
});

describe('doctor: the state database (state_db_url)', () => {
  it('is ok when reachable and empty, then reports what it holds, never printing the password', async () => {
    const schema = await freshSchema('doctor');
    try {
      const url = new URL(schema.url);
      url.password = 'doctor-Secret-77';
      const repositories = `state_db_url = "${url.toString()}"\n[repositories.good]\nremote = "file://${origin.url}"\n`;
      const file = settings('pg', repositories);
      const first = await runCliCaptured(['doctor', '-c', file], { env });
      const printed = `postgres://postgres@${url.host}${url.pathname}?schema=${schema.schema}`;
      expect(lines(first.stdout)).toContain(
        `ok    state database: ${printed} is reachable; the first run creates the state there`,
      );
      expect(first.stdout).not.toContain('doctor-Secret-77');

      const store = await openStore(schema.url);
      await store.saveSession({
        taskKey: 'k',
        automationId: 'nightly',
        runId: 'r_1',
        provider: 'claude',
        profile: 'c',
        sessionId: 's',
        prompt: 'p',
        promptTemplateHash: 'h',
        task: {} as never,
        worktreePath: null,
        branch: null,
        createdAt: '2026-03-01T03:00:00.000Z',
        updatedAt: '2026-03-01T03:00:00.000Z',
      });
      await store.close();
      const second = await runCliCaptured(['doctor', '-c', file], { env });
      expect(lines(second.stdout)).toContain(
        `ok    state database: ${printed} is curupira's and readable (0 runs, 1 saved session)`,
      );
      expect(second.stdout).not.toContain('doctor-Secret-77');
    } finally {
      await schema.drop();
    }
  });

  it('fails, saying what to fix, when the server cannot be reached', async () => {
    const repositories = `state_db_url = "postgres://bob:doctor-Secret-77@127.0.0.1:1/state"\n[repositories.good]\nremote = "file://${origin.url}"\n`;
    const result = await runCliCaptured(['doctor', '-c', settings('pg-down', repositories)], { env });
    expect(lines(result.stdout).find((l) => l.startsWith('FAIL  state database:'))).toMatch(
      /^FAIL {2}state database: PostgreSQL state database postgres:\/\/bob@127\.0\.0\.1:1\/state cannot be used: the server at 127\.0\.0\.1:1 cannot be reached/,
    );
    expect(result.stdout).not.toContain('doctor-Secret-77');
    expect(result.code).toBe(1);
  });
});

describe('doctor --json', () => {
  it('prints every check as JSON and keeps the exit code', async () => {
    const file = settings('json', `[repositories.good]\nremote = "file://${join(dir, 'nope.git')}"\n`);
    const result = await runCliCaptured(['doctor', '-c', file, '--json'], { env });
    expect(result.code).toBe(1);
    const report = JSON.parse(result.stdout) as { ok: boolean; checks: { ok: boolean; label: string }[] };
    expect(report.ok).toBe(false);
    expect(report.checks[0]).toEqual({
      ok: true,
      label: 'settings file',
      detail: `${file} (2 automations)`,
    });
    expect(report.checks.filter((c) => !c.ok).map((c) => c.label)).toEqual(['repository good']);
  });
});

describe('doctor: screening', () => {
  const issues = (screening: string, extra = ''): string => `[repositories.good]
remote = "file:///nowhere.git"
[settings.screening]
${screening}
[automations.triage]
repository = "good"
repo = "acme/api"
prompt = "Triage"
${extra}
[automations.nightly]
repository = "good"
schedule = "0 3 * * *"
prompt = "Tidy up"
`;
  const check = (text: string) =>
    screeningChecks(loadSettingsFromText(text, join(dir, 'screening.toml')).settings, {
      PATH: process.env.PATH,
    });

  it('passes without a classifier (vouched items run, unvouched ones are held), naming both fixes and the risk switch', () => {
    const [only, ...rest] = check(issues(''));
    expect(rest).toEqual([]);
    expect(only).toEqual({
      ok: true,
      label: 'screening',
      detail:
        'no classifier for automation triage: vouched items (a trusted author, or labels a trusted actor applied) run scanned; unvouched ones are held. Set classifier_model (a folder with a Prompt Guard model.onnx and tokenizer.json) or classifier_command under [settings.screening] to screen them, or required = false to accept the risk',
    });
  });

  it('passes with required = false, a found command, and reports a model folder that lacks its files', () => {
    expect(check(issues('required = false'))[0]).toMatchObject({
      ok: true,
      detail: 'deterministic scanners only, no classifier (required = false) for automation triage',
    });
    expect(check(issues('classifier_command = ["sh", "-c", "exit 0"]'))[0]).toMatchObject({ ok: true });
    expect(check(issues(`classifier_model = "${dir}"`))[0]).toMatchObject({
      ok: false,
      detail: `classifier_model ${dir} lacks model.onnx and tokenizer.json; every run of automation triage is blocked until it has them`,
    });
    expect(check(issues('classifier_agent = true'))[0]).toMatchObject({
      ok: true,
      detail: expect.stringMatching(
        /^classifier agent \S+ \((claude|codex|gemini|opencode), tool-free, one call per field\) for automation triage$/,
      ),
    });
    expect(check(issues('classifier_agent = "nope"'))[0]).toMatchObject({
      ok: false,
      detail:
        'classifier_agent names the profile nope, which is not in [agents.profiles]; every run of automation triage is blocked until it is',
    });
    expect(check(issues('', '[automations.triage.screening]\nmode = "off"'))[0]).toMatchObject({
      ok: true,
      detail: 'off for automation triage: text written by strangers reaches the agent unscreened',
    });
  });
});

describe('doctor: profile options', () => {
  it("fails a profile key whose option the installed CLI's --help does not list, passes the others", async () => {
    // A `claude` that answers --help as Claude Code 2.1.197 does (recorded help), first on PATH.
    const bins = join(dir, 'claude-help-bin');
    mkdirSync(bins, { recursive: true });
    const help = join(import.meta.dirname, '../../test/fixtures/cli-help/claude-2.1.197.txt');
    writeFileSync(
      join(bins, 'claude'),
      `#!/bin/sh\nif [ "$1" = "--help" ]; then cat '${help}'; exit 0; fi\nexit 2\n`,
      { mode: 0o755 },
    );
    const file = settings('profile-options', `[repositories.good]\nremote = "file://${origin.url}"\n`);
    writeFileSync(
      file,
      readFileSync(file, 'utf8').replace(
        '[agents.profiles.c]\nprovider = "claude"\n',
        '[agents.profiles.c]\nprovider = "claude"\npermission_prompts = "none"\npermission_mode = "acceptEdits"\n[agents.profiles.m]\nprovider = "claude"\nmodel = "sonnet"\n',
      ),
    );
    const result = await runCliCaptured(['doctor', '-c', file], {
      env: { ...env, PATH: `${bins}:${env.PATH}` },
    });
    const out = lines(result.stdout);
    expect(out).toContain(
      'FAIL  profile c options: --permission-prompts not listed by `claude --help`: runs with this profile would fail on an unknown option; remove the key that adds it from [agents.profiles.c] or update Claude Code',
    );
    expect(out).toContain('ok    profile m options: --model listed by `claude --help`');
    expect(result.code).toBe(1);
  });

  it('says nothing about options when the CLI has no readable --help (the fake agents)', async () => {
    const file = settings('profile-nohelp', `[repositories.good]\nremote = "file://${origin.url}"\n`);
    writeFileSync(
      file,
      readFileSync(file, 'utf8').replace('provider = "claude"\n', 'provider = "claude"\nmodel = "sonnet"\n'),
    );
    const result = await runCliCaptured(['doctor', '-c', file], { env });
    expect(result.stdout).not.toContain('profile c options');
  });
});

describe('doctor: unattended runs', () => {
  function profiles(text: string) {
    const first = /\[agents\.profiles\.(\w+)\]/.exec(text)![1];
    return loadSettingsFromText(
      `[repositories.api]
remote = "https://github.com/acme/api.git"
[automations.nightly]
repository = "api"
schedule = "0 3 * * *"
prompt = "Tidy up"
[agents.defaults]
profile = "${first}"
${text}
`,
      join(dir, 'unattended.toml'),
    ).settings;
  }

  it('warns, naming the profile and the key, when a profile would stop at an approval prompt', async () => {
    const settings = profiles(`[agents.profiles.c]
provider = "claude"
[agents.profiles.cx]
provider = "codex"
[agents.profiles.g]
provider = "gemini"
[agents.profiles.cp]
provider = "copilot"
[agents.profiles.q]
provider = "qwen"
approval_mode = "default"`);
    const keys = { ANTHROPIC_API_KEY: 'k', OPENAI_API_KEY: 'k', GEMINI_API_KEY: 'k' };
    const checks = await unattendedChecks(settings, { HOME: join(dir, 'nobody'), ...keys });
    expect(checks.every((c) => c.ok && c.warn)).toBe(true);
    expect(
      checks.map((c) => [c.label, /set (\w+) in \[agents\.profiles\.(\w+)\]/.exec(c.detail)?.slice(1)]),
    ).toEqual([
      ['profile c unattended', ['permission_mode', 'c']],
      ['profile cx unattended', ['sandbox', 'cx']],
      ['profile g unattended', ['approval_mode', 'g']],
      ['profile cp unattended', ['allow_all_tools', 'cp']],
      ['profile q unattended', ['approval_mode', 'q']],
    ]);
  });

  it('is quiet for profiles set for unattended use with a key or a login file', async () => {
    const home = join(dir, 'home-logged-in');
    mkdirSync(join(home, '.codex'), { recursive: true });
    writeFileSync(join(home, '.codex', 'auth.json'), '{}');
    const settings = profiles(`[agents.profiles.c]
provider = "claude"
permission_mode = "acceptEdits"
env = { ANTHROPIC_API_KEY = "from-profile" }
[agents.profiles.cx]
provider = "codex"
sandbox = "workspace-write"
[agents.profiles.g]
provider = "gemini"
approval_mode = "yolo"
[agents.profiles.cp]
provider = "copilot"
allow_tools = ["shell(git:*)"]
[agents.profiles.q]
provider = "qwen"
approval_mode = "yolo"`);
    expect(
      await unattendedChecks(settings, { HOME: home, GEMINI_API_KEY: 'k', DASHSCOPE_API_KEY: 'k' }),
    ).toEqual([]);
  });

  it('warns when no key and no login file is found, saying which to set', async () => {
    const settings = profiles(`[agents.profiles.main]
provider = "claude"
permission_mode = "dontAsk"`);
    const [check, ...rest] = await unattendedChecks(settings, { HOME: join(dir, 'nobody') });
    expect(rest).toEqual([]);
    expect(check).toMatchObject({ ok: true, warn: true, label: 'profile main unattended' });
    expect(check!.detail).toContain('set ANTHROPIC_API_KEY');
    expect(check!.detail).toContain('[agents.profiles.main]');
    expect(check!.detail).toContain('~/.claude/.credentials.json');
  });

  it('prints a warning as `warn` and keeps the exit code', async () => {
    const file = settings('warns', `[repositories.good]\nremote = "file://${origin.url}"\n`);
    const result = await runCliCaptured(['doctor', '-c', file], {
      env: { ...env, HOME: join(dir, 'nobody'), ANTHROPIC_API_KEY: 'k' },
    });
    expect(lines(result.stdout)).toContain(
      'warn  profile c unattended: Claude Code will ask for approval: set permission_mode in [agents.profiles.c] to "acceptEdits", "dontAsk", "auto" or, in a sandbox, "bypassPermissions" (otherwise a tool call that needs approval is refused and the agent cannot edit or run commands)',
    );
    expect(result.code, result.stdout).toBe(0);
  });
});
