import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createCodexDriver } from '../agents/codex/index.js';
import { createGeminiDriver } from '../agents/gemini/index.js';
import { serveRunSocket } from '../mcp/socket.js';
import { githubHosts, sandboxChoice } from './choice.js';
import {
  parseJsonWithComments,
  prepareSandbox,
  type SandboxRequest,
  SandboxUnavailableError,
  versionInSandbox,
} from './index.js';
import { sandboxBackend } from './registry.js';
import { RELAY_SOURCE } from './relay.js';
import type { SandboxBackend } from './types.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const broken: SandboxBackend = {
  name: 'bubblewrap',
  probe: async () => ({ ok: false, reason: 'bwrap is not installed: install the bubblewrap package' }),
  wrap: async () => {
    throw new Error('never called');
  },
};

function request(mode: SandboxRequest['choice']['mode'], backend: SandboxBackend): SandboxRequest {
  const dir = mkdtempSync(join(tmpdir(), 'sbx-unit-'));
  dirs.push(dir);
  return {
    choice: { mode, source: 'the automation' },
    runId: 'r1',
    homeKey: 'k',
    cwd: dir,
    env: { PATH: '/usr/bin', HOME: dir, SSH_AUTH_SOCK: '/x', ANTHROPIC_API_KEY: 'sk-real' },
    executable: '/usr/bin/true',
    args: ['a'],
    realHome: dir,
    stateDir: join(dir, 'sandbox'),
    driver: undefined,
    profile: { readPaths: [], writePaths: [], hosts: [] },
    automationHosts: [],
    githubHosts: [],
    limits: { memoryMb: 1024, maxProcesses: 64 },
    backend,
  };
}

describe('the sandbox step when no sandbox can start', () => {
  it('required: the run fails closed, with the reason', async () => {
    const attempt = prepareSandbox(request('required', broken));
    await expect(attempt).rejects.toBeInstanceOf(SandboxUnavailableError);
    await expect(prepareSandbox(request('bubblewrap', broken))).rejects.toThrow(
      /no sandbox can start here and sandbox = "bubblewrap" \(the automation\): bwrap is not installed/,
    );
  });

  it('auto: the agent runs unsandboxed, and the run carries a warning that says why', async () => {
    const prepared = await prepareSandbox(request('auto', broken));
    expect(prepared.executable).toBe('/usr/bin/true');
    expect(prepared.policy.backend).toBe('none');
    const [finding] = prepared.findings();
    expect(finding).toMatchObject({ scanner: 'sandbox', rule: 'policy', severity: 'medium' });
    expect(finding!.excerpt).toMatch(/^none: bwrap is not installed.*sandbox = "auto"/);
  });

  it('none: nothing changes', async () => {
    const prepared = await prepareSandbox(request('none', broken));
    expect(prepared.args).toEqual(['a']);
    expect(prepared.env.SSH_AUTH_SOCK).toBe('/x');
    expect(prepared.findings()[0]!.excerpt).toBe('none: sandbox = "none" (the automation)');
  });
});

describe('which sandbox a run gets', () => {
  const trigger = (untrusted: string[]) => ({ untrustedFields: untrusted }) as never;
  const profile = (mode?: string) => (mode ? { sandbox_mode: mode } : {}) as never;

  it('defaults to auto where the trigger hands over text strangers write, none elsewhere', () => {
    expect(
      sandboxChoice({ config: {} as never, profile: profile(), trigger: trigger(['title']) }, {}).mode,
    ).toBe('auto');
    expect(sandboxChoice({ config: {} as never, profile: profile(), trigger: trigger([]) }, {}).mode).toBe(
      'none',
    );
  });

  it('the automation wins over the profile, the profile over the settings', () => {
    const t = trigger(['title']);
    expect(
      sandboxChoice(
        { config: { sandbox: 'required' } as never, profile: profile('none'), trigger: t },
        {
          sandbox: 'none',
        },
      ),
    ).toEqual({ mode: 'required', source: 'the automation' });
    expect(
      sandboxChoice({ config: {} as never, profile: profile('none'), trigger: t }, { sandbox: 'required' }),
    ).toEqual({ mode: 'none', source: 'the profile' });
    expect(
      sandboxChoice({ config: {} as never, profile: profile(), trigger: t }, { sandbox: 'bubblewrap' }),
    ).toEqual({
      mode: 'bubblewrap',
      source: '[settings] sandbox',
    });
  });

  it('GitHub hosts include the configured API host', () => {
    expect(githubHosts('http://127.0.0.1:8080')).toContain('127.0.0.1:8080');
    expect(githubHosts('https://ghe.example/api/v3')).toContain('ghe.example');
  });
});

describe('the key proxy for a CLI that reads its base URL from its configuration (Codex)', () => {
  it('the agent gets placeholders, and arguments before its own that point Codex at the key proxy', async () => {
    const seen: { executable: string; args: readonly string[] }[] = [];
    const recording: SandboxBackend = {
      name: 'bubblewrap',
      probe: async () => ({ ok: true }),
      wrap: async (_spec, executable, args) => {
        seen.push({ executable, args });
        return {
          executable: '/usr/bin/bwrap',
          args: ['--', executable, ...args],
          unenforced: [],
          dispose: async () => {},
        };
      },
    };
    const base = request('required', recording);
    const codex = createCodexDriver();
    const prepared = await prepareSandbox({
      ...base,
      env: {
        PATH: '/usr/bin',
        HOME: base.cwd,
        CODEX_API_KEY: 'canary-codex-key',
        OPENAI_API_KEY: 'canary-openai-key',
        OPENAI_BASE_URL: 'http://127.0.0.1:4242/v1',
      },
      executable: '/usr/bin/true',
      args: ['exec', '--json', '--', 'fix it'],
      driver: codex.sandbox,
    });
    try {
      const placeholder = /^curupira-placeholder-[0-9a-f]{24}$/;
      expect(prepared.env.CODEX_API_KEY).toMatch(placeholder);
      expect(prepared.env.OPENAI_API_KEY).toMatch(placeholder);
      expect(JSON.stringify(prepared.env)).not.toContain('canary-');
      expect(prepared.env.OPENAI_BASE_URL).toBe('http://127.0.0.1:3128/_key/0');
      // Codex 0.171.0 ignores OPENAI_BASE_URL: its base URL is the `openai_base_url` setting,
      // given before the subcommand so that `exec resume` takes it too.
      expect(seen).toEqual([
        {
          executable: '/usr/bin/true',
          args: [
            '--config',
            'openai_base_url="http://127.0.0.1:3128/_key/0"',
            'exec',
            '--json',
            '--',
            'fix it',
          ],
        },
      ]);
      expect(JSON.stringify(prepared.args)).not.toContain('canary-');
    } finally {
      await prepared.dispose();
    }
  });
});

describe('a run offered curupira’s tools', () => {
  it('gets the relay script and the tools socket (mode 0600) in its run folder, both gone with the sandbox', async () => {
    let runDir = '';
    const recording: SandboxBackend = {
      name: 'bubblewrap',
      probe: async () => ({ ok: true }),
      wrap: async (spec, executable, args) => {
        runDir = spec.runDir;
        return {
          executable: '/usr/bin/bwrap',
          args: ['--', executable, ...args],
          unenforced: [],
          dispose: async () => {},
        };
      },
    };
    const served: string[] = [];
    let closed = false;
    const prepared = await prepareSandbox({
      ...request('required', recording),
      tools: async (socketPath) => {
        served.push(socketPath);
        const server = await serveRunSocket({
          socketPath,
          runId: 'r1',
          session: async () => ({ tools: [], info: { name: 'curupira', version: '0' } }),
          onError: () => {},
        });
        return {
          close: async () => {
            closed = true;
            await server.close();
          },
        };
      },
    });
    expect(served).toEqual([join(runDir, 'tools.sock')]);
    expect(statSync(join(runDir, 'tools.sock')).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(runDir, 'mcp-relay.cjs'), 'utf8')).toBe(RELAY_SOURCE);
    await prepared.dispose();
    expect(closed).toBe(true);
    expect(existsSync(runDir)).toBe(false);
  });

  it('gets no relay when it is offered none', async () => {
    let runDir = '';
    const recording: SandboxBackend = {
      name: 'bubblewrap',
      probe: async () => ({ ok: true }),
      wrap: async (spec, executable, args) => {
        runDir = spec.runDir;
        return {
          executable: '/usr/bin/bwrap',
          args: ['--', executable, ...args],
          unenforced: [],
          dispose: async () => {},
        };
      },
    };
    const prepared = await prepareSandbox(request('required', recording));
    try {
      expect(existsSync(join(runDir, 'mcp-relay.cjs'))).toBe(false);
      expect(existsSync(join(runDir, 'tools.sock'))).toBe(false);
    } finally {
      await prepared.dispose();
    }
  });
});

describe('a CLI that reads MCP servers from its settings file only (Gemini CLI)', () => {
  const gemini = createGeminiDriver().sandbox!;
  const relay = {
    name: 'curupira-findings',
    command: '/usr/bin/node',
    args: ['/run/curupira/mcp-relay.cjs', '/run/curupira/tools.sock', 'r1'],
    env: {},
  };
  const recording: SandboxBackend = {
    name: 'bubblewrap',
    probe: async () => ({ ok: true }),
    wrap: async (_spec, executable, args) => ({
      executable: '/usr/bin/bwrap',
      args: ['--', executable, ...args],
      unenforced: [],
      dispose: async () => {},
    }),
  };

  it('gets the run’s servers in the private home’s copy of its settings; the user’s own file is untouched', async () => {
    const base = request('required', recording);
    const userFile = join(base.realHome!, '.gemini', 'settings.json');
    mkdirSync(join(base.realHome!, '.gemini'));
    // Gemini CLI's settings allow comments and trailing commas.
    const own =
      '{\n  // my model\n  "model": { "name": "gemini-2.5-pro" },\n  "mcpServers": { "docs": { "command": "docs-mcp" } },\n}\n';
    writeFileSync(userFile, own);
    const prepared = await prepareSandbox({ ...base, driver: gemini, mcpServers: [relay] });
    try {
      const homes = join(base.stateDir, 'homes');
      const [home] = readdirSync(homes);
      const inside = JSON.parse(readFileSync(join(homes, home!, '.gemini', 'settings.json'), 'utf8'));
      expect(inside).toEqual({
        model: { name: 'gemini-2.5-pro' },
        mcpServers: {
          docs: { command: 'docs-mcp' },
          'curupira-findings': { command: '/usr/bin/node', args: relay.args, env: {}, trust: true },
        },
      });
      expect(readFileSync(userFile, 'utf8')).toBe(own);
    } finally {
      await prepared.dispose();
    }
  });

  it('refuses to start when the user’s settings are not JSON, rather than dropping them inside', async () => {
    const base = request('required', recording);
    mkdirSync(join(base.realHome!, '.gemini'));
    writeFileSync(join(base.realHome!, '.gemini', 'settings.json'), 'model = "gemini"\n');
    await expect(prepareSandbox({ ...base, driver: gemini, mcpServers: [relay] })).rejects.toThrow(
      '~/.gemini/settings.json is not a JSON object',
    );
  });

  it('outside a sandbox: the run’s servers in a home of curupira’s per task, named by GEMINI_CLI_HOME; HOME and the user’s file untouched', async () => {
    const base = request('none', recording);
    const server = {
      name: 'curupira-findings',
      command: '/usr/bin/curupira',
      args: ['mcp', '--run', 'r1'],
      env: {},
    };
    const userFile = join(base.realHome!, '.gemini', 'settings.json');
    mkdirSync(join(base.realHome!, '.gemini'));
    const own =
      '{\n  // my model\n  "model": { "name": "gemini-2.5-pro" },\n  "mcpServers": { "docs": { "command": "docs-mcp" } },\n}\n';
    writeFileSync(userFile, own);
    writeFileSync(join(base.realHome!, '.gemini', 'oauth_creds.json'), '{"refresh_token":"r"}');
    writeFileSync(join(base.realHome!, '.gemini', 'GEMINI.md'), 'Always answer in haiku.\n');
    mkdirSync(join(base.realHome!, '.gemini', 'commands'));
    writeFileSync(join(base.realHome!, '.gemini', 'commands', 'ship.toml'), 'prompt = "ship"\n');
    const prepared = await prepareSandbox({ ...base, driver: gemini, mcpServers: [server] });
    const home = prepared.env.GEMINI_CLI_HOME!;
    expect(prepared.policy.backend).toBe('none');
    expect(prepared.env.HOME).toBe(base.env.HOME);
    expect(home.startsWith(join(base.stateDir, 'cli-homes'))).toBe(true);
    expect(JSON.parse(readFileSync(join(home, '.gemini', 'settings.json'), 'utf8'))).toEqual({
      model: { name: 'gemini-2.5-pro' },
      mcpServers: {
        docs: { command: 'docs-mcp' },
        'curupira-findings': {
          command: '/usr/bin/curupira',
          args: ['mcp', '--run', 'r1'],
          env: {},
          trust: true,
        },
      },
    });
    // The login the CLI needs came along, and the rest of the user's folder (their global
    // GEMINI.md, commands) is seen there too: each linked to the user's own, not copied.
    expect(readFileSync(join(home, '.gemini', 'oauth_creds.json'), 'utf8')).toBe('{"refresh_token":"r"}');
    expect(lstatSync(join(home, '.gemini', 'oauth_creds.json')).isSymbolicLink()).toBe(true);
    expect(readFileSync(join(home, '.gemini', 'GEMINI.md'), 'utf8')).toBe('Always answer in haiku.\n');
    expect(readFileSync(join(home, '.gemini', 'commands', 'ship.toml'), 'utf8')).toBe('prompt = "ship"\n');
    // The settings file is curupira's own copy; the user's file is as it was.
    expect(lstatSync(join(home, '.gemini', 'settings.json')).isSymbolicLink()).toBe(false);
    expect(readFileSync(userFile, 'utf8')).toBe(own);
    await prepared.dispose();
    // What the CLI made there itself (its sessions) stays; a copy an earlier version made of a
    // login file becomes a link again.
    mkdirSync(join(home, '.gemini', 'tmp', 'abc', 'chats'), { recursive: true });
    writeFileSync(join(home, '.gemini', 'tmp', 'abc', 'chats', 'session.json'), '{}');
    mkdirSync(join(base.realHome!, '.gemini', 'tmp'));
    rmSync(join(home, '.gemini', 'oauth_creds.json'));
    writeFileSync(join(home, '.gemini', 'oauth_creds.json'), '{"refresh_token":"old"}');
    // The same task's next run gets the same home (its sessions are there for a resume).
    const again = await prepareSandbox({ ...base, driver: gemini, mcpServers: [server] });
    expect(again.env.GEMINI_CLI_HOME).toBe(home);
    expect(existsSync(join(home, '.gemini', 'tmp', 'abc', 'chats', 'session.json'))).toBe(true);
    expect(readFileSync(join(home, '.gemini', 'oauth_creds.json'), 'utf8')).toBe('{"refresh_token":"r"}');
    expect(readFileSync(join(base.realHome!, '.gemini', 'oauth_creds.json'), 'utf8')).toBe(
      '{"refresh_token":"r"}',
    );
    await again.dispose();
    // Without servers to declare, nothing changes.
    const without = await prepareSandbox({ ...base, driver: gemini, mcpServers: [] });
    expect(without.env.GEMINI_CLI_HOME).toBeUndefined();
    await without.dispose();
    // A user file that is not JSON fails the run, naming it, rather than dropping its settings.
    writeFileSync(userFile, 'model = "x"\n');
    await expect(prepareSandbox({ ...base, driver: gemini, mcpServers: [server] })).rejects.toThrow(
      '~/.gemini/settings.json is not a JSON object',
    );
  });

  it('reads JSON with comments and trailing commas, and leaves strings that look like them alone', () => {
    expect(
      parseJsonWithComments('{ /* a */ "url": "http://x//y", "s": "a, ]", // b\n "list": [1, 2,], }'),
    ).toEqual({ url: 'http://x//y', s: 'a, ]', list: [1, 2] });
    expect(parseJsonWithComments('{ "a": "\\"// not a comment" }')).toEqual({ a: '"// not a comment' });
    expect(parseJsonWithComments('not json')).toBeUndefined();
  });
});

const bwrap = await sandboxBackend('bubblewrap').probe();

describe('the CLI version probe', () => {
  it.skipIf(!bwrap.ok)(
    'runs in a sandbox of its own when the run has one: no real home, no keys',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'sbx-version-'));
      dirs.push(dir);
      writeFileSync(join(dir, 'secret.txt'), 'planted');
      const cli = join(dir, 'bin', 'cli');
      mkdirSync(join(dir, 'bin'));
      writeFileSync(
        cli,
        `#!/bin/sh\necho "home=$HOME key=\${ANTHROPIC_API_KEY:-none} secret=$(cat ${join(dir, 'secret.txt')} 2>/dev/null || echo unreadable) $1"\n`,
      );
      chmodSync(cli, 0o755);
      // The CLI's folder is readable (its install); the secret beside it is what the real home stands for.
      rmSync(join(dir, 'secret.txt'));
      const home = mkdtempSync(join(tmpdir(), 'sbx-version-home-'));
      dirs.push(home);
      writeFileSync(join(home, 'secret.txt'), 'planted');
      writeFileSync(
        cli,
        readFileSync(cli, 'utf8').replace(join(dir, 'secret.txt'), join(home, 'secret.txt')),
      );
      const env = { PATH: '/usr/bin:/bin', HOME: home, ANTHROPIC_API_KEY: 'sk-real' };
      const limits = { memoryMb: 1024, maxProcesses: 64 };
      const contained = await versionInSandbox({
        choice: { mode: 'required', source: 'the automation' },
        executable: cli,
        args: ['--version'],
        env,
        stateDir: join(dir, 'state'),
        limits,
        keyEnv: ['ANTHROPIC_API_KEY'],
      });
      expect(contained).toEqual({
        sandboxed: true,
        stdout: 'home=/home/agent key=none secret=unreadable --version\n',
      });
      const none = await versionInSandbox({
        choice: { mode: 'none', source: 'the automation' },
        executable: cli,
        args: ['--version'],
        env,
        stateDir: join(dir, 'state'),
        limits,
      });
      expect(none).toEqual({ sandboxed: false });
    },
  );
  it.runIf(!bwrap.ok)(`skipped: ${bwrap.reason ?? ''}`, () => {
    expect(bwrap.ok).toBe(false);
  });
});
