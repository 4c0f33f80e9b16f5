/**
 * The fake agent CLIs against the real ones' help, recorded from the npm packages with their
 * versions in test/fixtures/cli-help/ (the real CLIs are not installed in the test run: no
 * network). What the drivers emit must be options the real CLI lists in the right place, and the
 * fake must accept and refuse what the real CLI's parser does.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createClaudeDriver } from '../claude/index.js';
import { ClaudeProfile } from '../claude/schema.js';
import { createCodexDriver } from '../codex/index.js';
import { CodexProfile } from '../codex/schema.js';
import { createCopilotDriver } from '../copilot/index.js';
import { CopilotProfile } from '../copilot/schema.js';
import { createGeminiDriver } from '../gemini/index.js';
import { GeminiProfile } from '../gemini/schema.js';
import { type HelpOption, helpOptions } from '../help-options.js';
import { createQwenDriver } from '../qwen/index.js';
import { QwenProfile } from '../qwen/schema.js';
import type { McpServerSpec } from '../types.js';
import { fakeAgentScript } from './install.js';

const FIXTURES = join(import.meta.dirname, '../../../test/fixtures/cli-help');
const CODEX_VERSION = '0.171.0';
const CLAUDE_VERSION = '2.1.197';
const GEMINI_VERSION = '0.61.0';
const COPILOT_VERSION = '1.0.102';
const QWEN_VERSION = '0.15.10';
const SERVER: McpServerSpec = {
  name: 'curupira-findings',
  command: '/usr/bin/node',
  args: ['cli.js', 'mcp'],
  env: {},
};

function fixture(name: string): string {
  return readFileSync(join(FIXTURES, name), 'utf8');
}

/** The long names of a help's options, without help and version. */
function longNames(options: Map<string, HelpOption>, takesValue: boolean): string[] {
  return [...new Set([...options.keys()].filter((n) => n.startsWith('--')))]
    .filter((n) => n !== '--help' && n !== '--version' && options.get(n)!.takesValue === takesValue)
    .sort();
}

/** The fake's SPECS table, read from the script (it has no exports: it is a program). */
async function fakeSpecs(): Promise<Record<string, Record<string, unknown>>> {
  const source = readFileSync(fakeAgentScript(), 'utf8');
  const start = source.indexOf('const SPECS = ');
  const end = source.indexOf('\n};\n', start);
  const literal = source.slice(start + 'const SPECS = '.length, end + 2);
  return Function(`return (${literal});`)() as Record<string, Record<string, unknown>>;
}

function runFake(provider: string, args: string[]): { status: number | null; stderr: string } {
  const result = spawnSync(process.execPath, [fakeAgentScript(), provider, ...args], {
    encoding: 'utf8',
    cwd: FIXTURES,
    env: { PATH: process.env.PATH ?? '', FAKE_AGENT_ROOT: '0' },
  });
  return { status: result.status, stderr: result.stderr };
}

/** Splits a codex argv at `resume`: [options before, options after] (option names only). */
function codexOptionNames(args: string[]): { exec: string[]; resume: string[] } {
  const cut = args.indexOf('--');
  const head = cut === -1 ? args : args.slice(0, cut);
  const at = head.indexOf('resume');
  const names = (part: string[]): string[] => part.filter((a) => a.startsWith('-'));
  return at === -1
    ? { exec: names(head), resume: [] }
    : { exec: names(head.slice(0, at)), resume: names(head.slice(at)) };
}

describe(`codex-cli ${CODEX_VERSION} help, recorded`, () => {
  const exec = helpOptions(fixture(`codex-exec-${CODEX_VERSION}.txt`));
  const resume = helpOptions(fixture(`codex-exec-resume-${CODEX_VERSION}.txt`));

  it('the recorded help is what it claims: exec has --sandbox, --profile and --add-dir; resume has none of them', () => {
    for (const name of ['--sandbox', '--profile', '--add-dir', '--model', '--config', '--json']) {
      expect(exec.has(name), name).toBe(true);
    }
    for (const name of ['--sandbox', '--profile', '--add-dir']) expect(resume.has(name), name).toBe(false);
    for (const name of ['--model', '--config', '--json']) expect(resume.has(name), name).toBe(true);
  });

  it('the fake Codex knows exactly the options of exec and of exec resume, with the same short names', async () => {
    const spec = (await fakeSpecs()).codex!;
    expect([...(spec.values as string[])].sort()).toEqual(longNames(exec, true));
    expect([...(spec.flags as string[])].sort()).toEqual(longNames(exec, false));
    expect([...(spec.resumeValues as string[])].sort()).toEqual(longNames(resume, true));
    expect([...(spec.resumeFlags as string[])].sort()).toEqual(longNames(resume, false));
    for (const [short, long] of Object.entries(spec.short as Record<string, string>)) {
      expect(exec.get(short)?.names, short).toContain(long);
    }
    for (const [name, choices] of Object.entries(spec.choices as Record<string, string[]>)) {
      expect(exec.get(name)?.choices, name).toEqual(choices);
    }
  });

  it("the profile's sandbox values are the CLI's", () => {
    const values = CodexProfile.shape.sandbox.unwrap().options;
    expect([...values]).toEqual(exec.get('--sandbox')?.choices);
  });

  it('every option the driver emits is listed where it stands: before resume in exec, after it in resume', () => {
    const profile = CodexProfile.parse({
      provider: 'codex',
      model: 'gpt-5-codex',
      agent: 'work',
      effort: 'high',
      sandbox: 'workspace-write',
      auto_review: true,
    });
    const driver = createCodexDriver();
    // A real checkout, so that --add-dir appears.
    const worktree = mkdtempSync(join(tmpdir(), 'curupira-help-'));
    execFileSync('git', ['init', '-q', worktree]);
    for (const resumeSessionId of [undefined, '0199-thread']) {
      const args = driver.buildInvocation({
        profile,
        prompt: 'x',
        worktree,
        ...(resumeSessionId ? { resumeSessionId } : {}),
      }).args;
      expect(args).toContain('--add-dir');
      const { exec: before, resume: after } = codexOptionNames(args);
      for (const name of before) expect(exec.has(name), `${name} before resume`).toBe(true);
      for (const name of after) expect(resume.has(name), `${name} after resume`).toBe(true);
      const result = runFake('codex', args);
      expect(result.status, result.stderr).toBe(0);
    }
    rmSync(worktree, { recursive: true, force: true });
  });

  it('the fake refuses after resume every exec option that the real resume does not list', async () => {
    const spec = (await fakeSpecs()).codex!;
    const execOnly = [...(spec.values as string[]), ...(spec.flags as string[])].filter(
      (n) => !resume.has(n),
    );
    expect(execOnly).toEqual(expect.arrayContaining(['--sandbox', '--profile', '--add-dir']));
    for (const name of execOnly) {
      const takesValue = exec.get(name)!.takesValue;
      const value = exec.get(name)?.choices?.[0] ?? 'v';
      const result = runFake('codex', [
        'exec',
        'resume',
        'T',
        name,
        ...(takesValue ? [value] : []),
        '--json',
        '--',
        'x',
      ]);
      expect(result.status, name).toBe(2);
      expect(result.stderr.split('\n')[0]).toBe(`error: unexpected argument '${name}' found`);
    }
  });
});

describe(`Claude Code ${CLAUDE_VERSION} help, recorded`, () => {
  const help = helpOptions(fixture(`claude-${CLAUDE_VERSION}.txt`));

  it('every option the driver emits (but --permission-prompts) is listed, taking a value as it does', async () => {
    const profile = ClaudeProfile.parse({
      provider: 'claude',
      model: 'm',
      agent: 'a',
      effort: 'high',
      permission_mode: 'bypassPermissions',
      permission_prompts: 'none',
    });
    const args = createClaudeDriver().buildInvocation({
      profile,
      prompt: 'x',
      worktree: '/w',
      resumeSessionId: 's',
    }).args;
    const emitted = args.slice(0, args.indexOf('--')).filter((a) => a.startsWith('-'));
    // The reference's --permission-prompts is not an option of this Claude Code: it answers
    // "error: unknown option '--permission-prompts'" (left as the reference has it; see the report).
    expect(help.has('--permission-prompts')).toBe(false);
    for (const name of emitted.filter((n) => n !== '--permission-prompts')) {
      expect(help.has(name), name).toBe(true);
    }
    const spec = (await fakeSpecs()).claude!;
    for (const name of (spec.values as string[]).filter((n) => n !== '--permission-prompts')) {
      expect(help.get(name)?.takesValue, name).toBe(true);
    }
    for (const name of spec.flags as string[]) expect(help.get(name)?.takesValue, name).toBe(false);
  });

  it("the profile's permission modes are the CLI's", () => {
    const help = fixture(`claude-${CLAUDE_VERSION}.txt`);
    const block = help.slice(
      help.indexOf('--permission-mode <mode>'),
      help.indexOf('--permission-mode <mode>') + 400,
    );
    const listed = [...(block.match(/\(choices: ([^)]+)\)/)?.[1] ?? '').matchAll(/"([^"]+)"/g)].map(
      (m) => m[1],
    );
    expect(listed.sort()).toEqual([...ClaudeProfile.shape.permission_mode.unwrap().options].sort());
  });
});

describe(`Gemini CLI ${GEMINI_VERSION} help, recorded`, () => {
  const help = helpOptions(fixture(`gemini-${GEMINI_VERSION}.txt`));

  it("every option the driver emits is listed, and the fake's options take values as the real ones do", async () => {
    const profile = GeminiProfile.parse({
      provider: 'gemini',
      model: 'm',
      approval_mode: 'yolo',
      skip_trust: true,
    });
    const args = createGeminiDriver().buildInvocation({
      profile,
      prompt: 'x',
      worktree: '/w',
      resumeSessionId: 's',
    }).args;
    for (const arg of args.filter((a) => a.startsWith('--'))) {
      const name = arg.split('=')[0]!;
      expect(help.has(name), name).toBe(true);
    }
    const spec = (await fakeSpecs()).gemini!;
    for (const name of spec.values as string[]) expect(help.get(name)?.takesValue, name).toBe(true);
    for (const name of spec.flags as string[]) expect(help.get(name)?.takesValue, name).toBe(false);
    expect(help.get('--approval-mode')?.choices).toEqual([
      ...GeminiProfile.shape.approval_mode.unwrap().options,
    ]);
  });
});

/** Every `--option` in `args` (before `--`) is listed in `help`, and the fake's take values as the real ones. */
async function emittedAreListed(
  provider: string,
  help: Map<string, HelpOption>,
  args: string[],
): Promise<void> {
  const cut = args.indexOf('--');
  for (const arg of (cut === -1 ? args : args.slice(0, cut)).filter((a) => a.startsWith('--'))) {
    const name = arg.split('=')[0]!;
    expect(help.has(name), name).toBe(true);
  }
  const spec = (await fakeSpecs())[provider]!;
  for (const name of spec.values as string[]) expect(help.get(name)?.takesValue, name).toBe(true);
  for (const name of spec.flags as string[]) expect(help.get(name)?.takesValue, name).toBe(false);
}

describe(`Copilot CLI ${COPILOT_VERSION} help, recorded`, () => {
  const help = helpOptions(fixture(`copilot-${COPILOT_VERSION}.txt`));

  it("every option the driver emits, the run's MCP servers included, is listed; the fake's take values as the real ones do", async () => {
    const profile = CopilotProfile.parse({
      provider: 'copilot',
      model: 'm',
      agent: 'a',
      effort: 'high',
      allow_all_tools: true,
      allow_all_paths: true,
      allow_tools: ['write'],
      deny_tools: ['shell(rm)'],
    });
    const args = createCopilotDriver().buildInvocation({
      profile,
      prompt: 'x',
      worktree: '/w',
      assignedSessionId: 's',
      mcpServers: [SERVER],
    }).args;
    expect(args.some((a) => a.startsWith('--additional-mcp-config='))).toBe(true);
    await emittedAreListed('copilot', help, args);
  });
});

describe(`Qwen Code ${QWEN_VERSION} help, recorded`, () => {
  const help = helpOptions(fixture(`qwen-${QWEN_VERSION}.txt`));

  it("every option the driver emits, the run's MCP servers included, is listed; the fake's take values as the real ones do", async () => {
    const profile = QwenProfile.parse({
      provider: 'qwen',
      model: 'm',
      approval_mode: 'yolo',
      max_session_turns: 3,
    });
    const args = createQwenDriver().buildInvocation({
      profile,
      prompt: 'x',
      worktree: '/w',
      resumeSessionId: 's',
      mcpServers: [SERVER],
    }).args;
    expect(args).toContain('--mcp-config');
    await emittedAreListed('qwen', help, args);
  });
});
