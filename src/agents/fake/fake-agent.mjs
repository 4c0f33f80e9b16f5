#!/usr/bin/env node
/**
 * A stand-in for every coding-agent CLI curupira drives, for tests and `curupira demo`.
 *
 *   node fake-agent.mjs <provider> <the provider's own arguments…>
 *
 * It reads its arguments the way the real CLI would (and rejects what the real one would not
 * accept), prints a stream in that provider's real headless format — session announcement, an
 * assistant message, a tool call with its result, token usage, the closing event — and obeys
 * directives written into the prompt. Argument handling was checked against the real CLIs' help
 * and behaviour, recorded in test/fixtures/cli-help/ (codex-cli 0.171.0, Claude Code 2.1.197,
 * Gemini CLI 0.61.0; a test compares them): `codex exec resume` refuses exec's own options
 * (`--sandbox`, `--profile`, `--add-dir`) with clap's "unexpected argument", Codex's
 * workspace-write sandbox keeps git directories read-only unless named with `--add-dir`, and
 * Claude Code as root refuses `--permission-mode bypassPermissions` unless IS_SANDBOX=1.
 *
 *
 *   [[fake:commit]]        create a file and commit it in the working directory
 *   [[fake:dirty]]         leave an uncommitted file behind
 *   [[fake:commit-file=P]] write the file P (a relative path; folders created) and commit it
 *   [[fake:commit-in=A]]   commit a new file in the worktree of repository A, found in the prompt's
 *                          list of a multi-repository task (a line "- `A` (…): /path")
 *   [[fake:commit-env=N]]  write the value of variable N into leaked.txt and commit it (an agent
 *                          that leaks a secret it was given)
 *   [[fake:fail]]          report an error event, write to stderr, exit 1
 *   [[fake:limit]]         fail as the provider's CLI does when the account hit its usage or
 *                          rate limit, with that CLI's real message (see LIMIT_MESSAGES; the reset
 *                          is FAKE_AGENT_LIMIT_RESET, epoch seconds, default an hour from now)
 *   [[fake:sleep=N]]       wait N seconds right after announcing the session
 *   [[fake:sleep-first=N]] the same, but only the first time a prompt line carrying it is seen in
 *                          $FAKE_AGENT_LOG: a restart of the same task does not wait again
 *   [[fake:commit-early]]  commit a file right after announcing the session, before any sleep
 *   [[fake:linger=N]]      wait N seconds after the closing event before exiting: an agent that
 *                          has reported its result (and, say, closed its issue) but not exited yet
 *   [[fake:merge=BRANCH]]  merge origin/BRANCH (fetched first when missing), conflicts resolved in favour of the
 *                          agent's side (`-X ours`): what an agent asked to resolve conflicts does
 *   [[fake:usage=N]]       (codex) finish a first turn that used N input tokens right after
 *                          announcing the session, before any sleep: live usage for budgets
 *   [[fake:spawn-child]]   start a grandchild in the same process group that ignores SIGTERM and
 *                          would outlive this process; its pid is appended to
 *                          $FAKE_AGENT_LOG/children.pids
 *   [[fake:echo-env=NAME]] say whether NAME is set, and to what
 *   [[fake:stderr-env=NAME]] the same on stderr, before anything else (with [[fake:fail]], the
 *                          failure's stderr carries it)
 *   [[fake:finding=FILE:LINE:SEVERITY:TITLE]] (claude, codex, qwen, copilot, opencode, kilo) report a
 *                          finding through the `findings_report` tool of an MCP server declared
 *                          to the CLI for the run (Claude's `--mcp-config` JSON, Codex's
 *                          `--config mcp_servers.*`, Qwen's `--mcp-config`, Copilot's
 *                          `--additional-mcp-config`, OpenCode's `OPENCODE_CONFIG_CONTENT`),
 *                          started over stdio as the real CLI starts it; category `bug`
 *   [[fake:resolve=TITLE]] resolve the open finding with that title (`findings_list`, then
 *                          `findings_resolve`)
 *   [[fake:review-done]]   end the review with `findings_done` at the worktree's HEAD
 *   [[fake:result=LINE]]   end the final message with LINE on a line of its own: the result line
 *   [[fake:report=LINE]]   (claude, codex, qwen, copilot, opencode, kilo) report LINE (`#N outcome: reason`) through the
 *                          `result_report` tool of the first MCP server declared to it instead
 *                          (a --mcp-config file or JSON, or Codex's --config overrides): the
 *                          server is started as declared (`${VAR}` in its args from the
 *                          environment, as Claude Code expands them), spoken to over stdio, and
 *                          its answer shown as a tool call; the final message then carries no
 *                          result line
 *                          an automation with `outcomes` reads (`#12 ready-for-agent`,
 *                          `noop: nothing to do`); the last one in the prompt wins
 *
 * Environment: FAKE_AGENT_LOG (a folder: one JSON line per invocation goes to <provider>.jsonl,
 * and one per commit of `[[fake:commit]]`, with its sha and session, to commits.jsonl),
 * FAKE_AGENT_SESSION_ID (force the new session's id), FAKE_AGENT_OPENCODE_VERSION (what
 * `opencode --version` prints; default 2.0.0), FAKE_AGENT_VERSION (the same for the others),
 * FAKE_AGENT_LIMIT_RESET and FAKE_AGENT_LIMIT_STYLE=clock (the reset `[[fake:limit]]` prints, and
 * Claude's `resets 3pm` form instead of the epoch one),
 * FAKE_AGENT_ROOT (`1` or `0`: behave as if run by root or not; default: the real uid),
 * FAKE_AGENT_FAIL_RESUME=1 (every resume fails; `missing`: as the CLI fails when it does not have the
 * conversation, with its real message), FAKE_AGENT_ON_RESUME (directives that apply only
 * when a session is resumed, e.g. `[[fake:merge=main]]` for a remediation run),
 * FAKE_AGENT_RESUME_UNFINISHED=1 (a resumed session that never reached its final message also
 * does what its first prompt asked, as a real CLI's conversation carries it), FAKE_AGENT_EXCLUSIVE (a folder: two agents working
 * in one directory at once are logged there), FAKE_AGENT_PRINT_ENV=1 (print every variable of its
 * environment as NAME=value, on stderr first, then as an assistant message: what a careless or
 * hostile agent would do). The invocation log holds variable names and a SHA-256 of each value,
 * never the values of other than FAKE_* and a few path variables, so a test can check which value
 * an agent got without writing it anywhere.
 *
 * No dependencies: it runs from `src/` in tests and from `dist/` after the build copies it.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import {
  appendFileSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join, resolve } from 'node:path';

const USAGE_EXIT = 2;

/**
 * How each CLI is called: leading words, options taking a value, boolean flags, where the prompt
 * goes, and the switches that must be present for headless JSON output.
 */
const SPECS = {
  opencode: {
    words: ['run'],
    values: ['--format', '--session', '--model', '--agent', '--variant', '--dir'],
    flags: ['--auto', '--standalone', '--pure'],
    prompt: 'dashdash',
    resume: '--session',
    required: { '--format': 'json' },
  },
  kilo: {
    words: ['run'],
    values: ['--format', '--session', '--model', '--agent', '--variant'],
    flags: ['--auto', '--pure'],
    prompt: 'dashdash',
    resume: '--session',
    required: { '--format': 'json' },
  },
  claude: {
    words: [],
    values: [
      '--output-format',
      '--resume',
      '--model',
      '--agent',
      '--effort',
      '--permission-mode',
      '--permission-prompts',
      '--tools',
      '--setting-sources',
      '--mcp-config',
    ],
    flags: [
      '-p',
      '--verbose',
      '--strict-mcp-config',
      '--safe-mode',
      '--disable-slash-commands',
      '--no-session-persistence',
    ],
    prompt: 'dashdash',
    resume: '--resume',
    required: { '-p': true, '--output-format': 'stream-json', '--verbose': true },
  },
  // Every option of `codex exec --help` and `codex exec resume --help` of codex-cli 0.171.0
  // (test/fixtures/cli-help/ holds both; a test checks these lists against them). Options of
  // `exec` only are refused after `resume`, as clap refuses them: "unexpected argument".
  codex: {
    words: ['exec'],
    values: [
      '--config',
      '--enable',
      '--disable',
      '--remote',
      '--remote-auth-token-env',
      '--image',
      '--model',
      '--local-provider',
      '--profile',
      '--sandbox',
      '--cd',
      '--add-dir',
      '--thread-source',
      '--cyber-access-program',
      '--output-schema',
      '--color',
      '--output-last-message',
    ],
    flags: [
      '--strict-config',
      '--oss',
      '--approve-for-me',
      '--dangerously-bypass-approvals-and-sandbox',
      '--dangerously-bypass-hook-trust',
      '--worktree',
      '--skip-git-repo-check',
      '--trust',
      '--ephemeral',
      '--ignore-user-config',
      '--ignore-rules',
      '--json',
    ],
    resumeValues: [
      '--config',
      '--enable',
      '--disable',
      '--image',
      '--remote',
      '--remote-auth-token-env',
      '--model',
      '--thread-source',
      '--cyber-access-program',
      '--output-schema',
      '--output-last-message',
    ],
    resumeFlags: [
      '--last',
      '--all',
      '--strict-config',
      '--dangerously-bypass-approvals-and-sandbox',
      '--dangerously-bypass-hook-trust',
      '--worktree',
      '--skip-git-repo-check',
      '--trust',
      '--ephemeral',
      '--ignore-user-config',
      '--ignore-rules',
      '--json',
    ],
    short: {
      '-c': '--config',
      '-i': '--image',
      '-m': '--model',
      '-p': '--profile',
      '-s': '--sandbox',
      '-C': '--cd',
      '-o': '--output-last-message',
    },
    choices: {
      '--sandbox': ['read-only', 'workspace-write', 'danger-full-access'],
      '--color': ['always', 'never', 'auto'],
      '--cyber-access-program': ['standard', 'daybreak_blue', 'daybreak_red'],
    },
    prompt: 'dashdash',
    resume: 'exec-resume',
    required: { '--json': true },
  },
  gemini: {
    words: [],
    values: [
      '--output-format',
      '--resume',
      '--model',
      '--approval-mode',
      '--prompt',
      '--allowed-mcp-server-names',
    ],
    flags: ['--skip-trust'],
    prompt: '--prompt',
    resume: '--resume',
    required: { '--output-format': 'stream-json' },
  },
  cursor: {
    words: [],
    values: ['--output-format', '--resume', '--mode', '--model'],
    flags: ['--print', '--force', '--trust'],
    prompt: 'dashdash',
    resume: '--resume',
    required: { '--print': true, '--output-format': 'stream-json' },
  },
  copilot: {
    words: [],
    values: [
      '--output-format',
      '--session-id',
      '--model',
      '--agent',
      '--reasoning-effort',
      '--allow-tool',
      '--deny-tool',
      '--additional-mcp-config',
      '--prompt',
    ],
    flags: ['--no-ask-user', '--allow-all-tools', '--allow-all-paths'],
    prompt: '--prompt',
    resume: 'assigned',
    required: { '--output-format': 'json', '--no-ask-user': true, '--session-id': 'any' },
  },
  pi: {
    words: [],
    values: ['--mode', '--session', '--provider', '--model', '--thinking', '--tools', '--exclude-tools'],
    flags: ['--approve', '--no-approve'],
    prompt: 'dashdash',
    resume: '--session',
    required: { '--mode': 'json' },
  },
  qwen: {
    words: [],
    values: [
      '--output-format',
      '--resume',
      '--model',
      '--approval-mode',
      '--max-session-turns',
      '--mcp-config',
      '--prompt',
    ],
    flags: [],
    prompt: '--prompt',
    resume: '--resume',
    required: { '--output-format': 'stream-json' },
  },
};

function usageError(provider, message) {
  process.stderr.write(`${provider}: error: ${message}\n`);
  process.exit(USAGE_EXIT);
}

/** Reads argv like the real CLI: words, options (`--x v` or `--x=v`), flags, `--` then the prompt. */
function parseArgs(provider, spec, argv) {
  const options = {};
  const words = [];
  let prompt;
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i];
    if (arg === '--') {
      prompt = argv.slice(i + 1).join(' ');
      break;
    }
    if (arg.startsWith('-')) {
      const eq = arg.indexOf('=');
      const name = eq === -1 ? arg : arg.slice(0, eq);
      if (spec.flags.includes(name) && eq === -1) {
        options[name] = true;
        continue;
      }
      if (!spec.values.includes(name)) usageError(provider, `unknown option '${name}'`);
      let value;
      if (eq !== -1) value = arg.slice(eq + 1);
      else {
        i += 1;
        if (i >= argv.length) usageError(provider, `option '${name}' needs a value`);
        value = argv[i];
      }
      options[name] = name in options ? [].concat(options[name], value) : value;
      continue;
    }
    words.push(arg);
  }
  if (spec.prompt === '--prompt') prompt = options['--prompt'];
  for (const [name, expected] of Object.entries(spec.required)) {
    const got = options[name];
    if (got === undefined || (typeof expected === 'string' && expected !== 'any' && got !== expected)) {
      usageError(
        provider,
        `headless JSON mode needs ${name}${typeof expected === 'string' ? ` ${expected}` : ''}`,
      );
    }
  }
  return { options, words, prompt };
}

const CODEX_USAGE = {
  exec: 'Usage: codex exec [OPTIONS] [PROMPT]\n       codex exec [OPTIONS] <COMMAND> [ARGS]',
  resume: 'Usage: codex exec resume <SESSION_ID> [PROMPT]',
};

/** Codex is a clap program: its errors look like clap's, and they exit 2. */
function clapError(message, usage) {
  process.stderr.write(
    `error: ${message}\n\n${usage ? `${usage}\n\n` : ''}For more information, try '--help'.\n`,
  );
  process.exit(USAGE_EXIT);
}

/**
 * Reads `codex exec [OPTIONS] [PROMPT]` and `codex exec [OPTIONS] resume [OPTIONS] [ID] [PROMPT]`
 * as clap does: the options before `resume` are exec's, the ones after are resume's, and an option
 * the current command does not have is an "unexpected argument".
 */
function parseCodexArgs(spec, allArgv) {
  // `codex -c key=value exec …`: the top-level command's config overrides, which the real CLI
  // (0.171.0) applies to `exec` and `exec resume` alike (how a sandbox's key proxy points it at
  // itself).
  const topConfig = [];
  let argv = allArgv;
  while (argv[0] === '-c' || argv[0] === '--config' || argv[0]?.startsWith('--config=')) {
    if (argv[0].startsWith('--config=')) {
      topConfig.push(argv[0].slice('--config='.length));
      argv = argv.slice(1);
    } else {
      if (argv.length < 2) clapError(`a value is required for '--config <key=value>' but none was supplied`);
      topConfig.push(argv[1]);
      argv = argv.slice(2);
    }
  }
  if (argv[0] !== 'exec') usageError('codex', "expected the 'exec' command");
  const options =
    topConfig.length > 0 ? { '--config': topConfig.length === 1 ? topConfig[0] : topConfig } : {};
  const positionals = [];
  let command = 'exec';
  let values = spec.values;
  let flags = spec.flags;
  let dashdash = false;
  for (let i = 1; i < argv.length; i += 1) {
    const arg = argv[i];
    if (!dashdash && arg === '--') {
      dashdash = true;
      continue;
    }
    if (!dashdash && arg.startsWith('-') && arg !== '-') {
      const eq = arg.indexOf('=');
      const given = eq === -1 ? arg : arg.slice(0, eq);
      const name = spec.short[given] ?? given;
      if (flags.includes(name) && eq === -1) {
        options[name] = true;
        continue;
      }
      if (!values.includes(name)) {
        clapError(
          `unexpected argument '${given}' found\n\n  tip: to pass '${given}' as a value, use '-- ${given}'`,
          CODEX_USAGE[command],
        );
      }
      let value;
      if (eq !== -1) value = arg.slice(eq + 1);
      else {
        i += 1;
        if (i >= argv.length) clapError(`a value is required for '${name}' but none was supplied`);
        value = argv[i];
      }
      const allowed = spec.choices[name];
      if (allowed && !allowed.includes(value)) {
        clapError(`invalid value '${value}' for '${name}'\n  [possible values: ${allowed.join(', ')}]`);
      }
      options[name] = name in options ? [].concat(options[name], value) : value;
      continue;
    }
    if (command === 'exec' && !dashdash && positionals.length === 0 && arg === 'resume') {
      command = 'resume';
      values = spec.resumeValues;
      flags = spec.resumeFlags;
      continue;
    }
    positionals.push(arg);
    const room = command === 'resume' ? 2 : 1;
    if (positionals.length > room) clapError(`unexpected argument '${arg}' found`, CODEX_USAGE[command]);
  }
  if (options['--json'] === undefined) usageError('codex', 'headless JSON mode needs --json');
  if (command === 'resume') {
    if (!positionals[0]) usageError('codex', 'exec resume needs a session id');
    return { options, resumeOf: positionals[0], prompt: positionals[1] };
  }
  return { options, resumeOf: null, prompt: positionals[0] };
}

/** A Codex inline table of strings as curupira writes it: `{ "A" = "b", "C" = "d" }`. */
function parseInlineTable(text) {
  const table = {};
  for (const match of text.matchAll(/"((?:[^"\\]|\\.)*)"\s*=\s*"((?:[^"\\]|\\.)*)"/g))
    table[JSON.parse(`"${match[1]}"`)] = JSON.parse(`"${match[2]}"`);
  return table;
}

/**
 * The MCP servers over stdio declared to the CLI for this run, read as the real CLI reads them:
 * Claude Code's `--mcp-config` (a JSON string or a file, `{"mcpServers":{NAME:{command,args,env}}}`),
 * Codex's `--config mcp_servers.NAME.command=…` / `.args=[…]` / `.env={…}` (TOML values),
 * Qwen Code's `--mcp-config` (a file or JSON, with or without the `mcpServers` wrapper), Copilot
 * CLI's `--additional-mcp-config` (JSON, or `@FILE`; `type` `local` or `stdio`), OpenCode's
 * `OPENCODE_CONFIG_CONTENT` (`{"mcp":{NAME:{"type":"local","command":[…],"environment":{…}}}}`) and
 * Kilo's `KILO_CONFIG_CONTENT` (the same shape),
 * Gemini CLI's `~/.gemini/settings.json` `mcpServers` that `--allowed-mcp-server-names` names (the
 * home `GEMINI_CLI_HOME` names when set, as Gemini CLI 0.61.0 reads it).
 */
function declaredMcpServers(provider, options) {
  const servers = {};
  const fromJson = (config, { atFile = false } = {}) => {
    const text = atFile
      ? config.startsWith('@')
        ? readFileSync(config.slice(1), 'utf8')
        : config
      : existsSync(config)
        ? readFileSync(config, 'utf8')
        : config;
    const parsed = JSON.parse(text);
    const declared = parsed.mcpServers && typeof parsed.mcpServers === 'object' ? parsed.mcpServers : parsed;
    for (const [name, server] of Object.entries(declared)) {
      if (provider === 'copilot' && !['local', 'stdio'].includes(server.type)) continue;
      servers[name] = { command: server.command, args: server.args ?? [], env: server.env ?? {} };
    }
  };
  if (provider === 'claude') {
    for (const config of [].concat(options['--mcp-config'] ?? [])) {
      const text = config.trim().startsWith('{') ? config : readFileSync(config, 'utf8');
      for (const [name, server] of Object.entries(JSON.parse(text).mcpServers ?? {}))
        servers[name] = { command: server.command, args: server.args ?? [], env: server.env ?? {} };
    }
  }
  if (provider === 'qwen') for (const config of [].concat(options['--mcp-config'] ?? [])) fromJson(config);
  if (provider === 'gemini') {
    // Gemini CLI: the user settings' `mcpServers`, only those `--allowed-mcp-server-names` names.
    const allowed = new Set(
      [].concat(options['--allowed-mcp-server-names'] ?? []).flatMap((names) => names.split(',')),
    );
    const file = join(process.env.GEMINI_CLI_HOME || process.env.HOME || '', '.gemini', 'settings.json');
    const declared = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')).mcpServers ?? {}) : {};
    for (const [name, server] of Object.entries(declared)) {
      if (!allowed.has(name) || typeof server.command !== 'string') continue;
      servers[name] = { command: server.command, args: server.args ?? [], env: server.env ?? {} };
    }
  }
  if (provider === 'copilot')
    for (const config of [].concat(options['--additional-mcp-config'] ?? []))
      fromJson(config, { atFile: true });
  // Kilo, an OpenCode fork, reads the same shape from KILO_CONFIG_CONTENT.
  const configContent =
    provider === 'opencode'
      ? process.env.OPENCODE_CONFIG_CONTENT
      : provider === 'kilo'
        ? process.env.KILO_CONFIG_CONTENT
        : undefined;
  if (configContent) {
    for (const [name, server] of Object.entries(JSON.parse(configContent).mcp ?? {})) {
      if (server.type !== 'local' || server.enabled === false || server.disabled === true) continue;
      const [command, ...args] = server.command;
      servers[name] = { command, args, env: server.environment ?? {} };
    }
  }
  if (provider === 'codex') {
    for (const override of [].concat(options['--config'] ?? [])) {
      const match = /^mcp_servers\.([A-Za-z0-9_-]+)\.(command|args|env)=([\s\S]*)$/.exec(override);
      if (!match) continue;
      servers[match[1]] ??= { command: undefined, args: [], env: {} };
      const server = servers[match[1]];
      if (match[2] === 'command') server.command = JSON.parse(match[3]);
      else if (match[2] === 'args') server.args = JSON.parse(match[3]);
      else server.env = parseInlineTable(match[3]);
    }
  }
  return servers;
}

/** A minimal MCP client over stdio (JSON-RPC, one message a line), as an agent's CLI is one. */
async function mcpConnect(server, cwd) {
  const child = spawn(server.command, server.args, {
    cwd,
    env: { ...process.env, ...server.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let buffer = '';
  let stderr = '';
  let nextId = 1;
  const waiting = new Map();
  const exited = new Promise((resolveExit) => {
    child.on('error', (error) => {
      stderr += error.message;
      resolveExit();
    });
    child.on('close', () => resolveExit());
  });
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk) => {
    buffer += chunk;
    for (let end = buffer.indexOf('\n'); end !== -1; end = buffer.indexOf('\n')) {
      const line = buffer.slice(0, end);
      buffer = buffer.slice(end + 1);
      if (!line.trim()) continue;
      const message = JSON.parse(line);
      waiting.get(message.id)?.(message);
      waiting.delete(message.id);
    }
  });
  const request = (method, params) =>
    new Promise((resolveAnswer, reject) => {
      const id = nextId++;
      waiting.set(id, resolveAnswer);
      void exited.then(() => reject(new Error(`the MCP server exited: ${stderr.trim() || 'no message'}`)));
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  await request('initialize', {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'fake-agent', version: '1.0.0' },
  });
  child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
  const tools = (await request('tools/list', {})).result?.tools ?? [];
  return {
    tools: tools.map((t) => t.name),
    async call(name, args) {
      const answer = await request('tools/call', { name, arguments: args });
      if (answer.error) return { text: answer.error.message, isError: true };
      const result = answer.result;
      return {
        text: (result.content ?? []).map((c) => c.text ?? '').join('\n'),
        data: result.structuredContent,
        isError: result.isError === true,
      };
    },
    async close() {
      child.stdin.end();
      await exited;
    },
  };
}

/** The review directives: findings reported, resolved and the review ended through the tools. */
async function reviewThroughTools(provider, options, wanted, out, cwd) {
  const asks = wanted.filter(
    (d) => ((d.name === 'finding' || d.name === 'resolve') && d.value) || d.name === 'review-done',
  );
  if (asks.length === 0) return;
  const declared = Object.entries(declaredMcpServers(provider, options));
  const sessions = [];
  try {
    for (const [name, server] of declared) {
      try {
        sessions.push({ name, ...(await mcpConnect(server, cwd)) });
      } catch (error) {
        out.tool(`mcp ${name}`, `could not start the MCP server: ${error.message}`, true);
      }
    }
    const call = async (tool, args) => {
      const session = sessions.find((s) => s.tools.includes(tool));
      if (!session) {
        out.tool(tool, `no MCP server offers ${tool}`, true);
        return undefined;
      }
      const answer = await session.call(tool, args);
      // The name the CLI gives an MCP tool (Gemini CLI 0.61: `mcp_<server>_<tool>`).
      const shown = provider === 'gemini' ? `mcp_${session.name}_${tool}` : `mcp__${session.name}__${tool}`;
      out.tool(`${shown} ${JSON.stringify(args)}`, answer.text, answer.isError);
      return answer;
    };
    for (const d of asks) {
      if (d.name === 'finding') {
        const [file, line, severity, ...title] = d.value.split(':');
        await call('findings_report', {
          file,
          line_start: Number(line),
          severity,
          category: 'bug',
          title: title.join(':'),
          detail: `Found by the fake ${provider} agent.`,
        });
      } else if (d.name === 'resolve') {
        const listed = await call('findings_list', { status: 'open' });
        const found = (listed?.data?.findings ?? []).find((f) => f.title === d.value);
        if (found) await call('findings_resolve', { id: found.id, resolution: 'Fixed at this commit.' });
        else out.tool('findings_resolve', `no open finding titled ${d.value}`, true);
      } else {
        await call('findings_done', {
          summary: `Reviewed by the fake ${provider} agent.`,
          reviewed_commit: git(['rev-parse', 'HEAD']).output,
        });
      }
    }
  } finally {
    for (const session of sessions) await session.close();
  }
}

/** The git directories a commit in `cwd` writes to (a linked worktree has two; see git-dirs.ts). */
function gitWriteDirs(cwd) {
  const dotGit = join(cwd, '.git');
  if (!existsSync(dotGit)) return [];
  if (statSync(dotGit).isDirectory()) return [realpathSync(dotGit)];
  const pointer = readFileSync(dotGit, 'utf8').match(/^gitdir:\s*(.+?)\s*$/m)?.[1];
  if (!pointer) return [];
  const gitDir = resolve(cwd, pointer);
  const commonFile = join(gitDir, 'commondir');
  const dirs = existsSync(commonFile)
    ? [resolve(gitDir, readFileSync(commonFile, 'utf8').trim()), gitDir]
    : [gitDir];
  return dirs.filter((d) => existsSync(d)).map((d) => realpathSync(d));
}

/**
 * Codex's workspace-write sandbox: the working directory is writable but every git directory is
 * read-only unless named with `--add-dir`. The first git directory a commit would need and may
 * not write, or undefined.
 */
function codexReadOnlyGitDir(options, cwd) {
  if (options['--sandbox'] !== 'workspace-write') return undefined;
  const writable = new Set([].concat(options['--add-dir'] ?? []).map((d) => resolve(cwd, d)));
  // A common directory is written where its objects, refs and logs are (what a commit writes).
  const named = (dir) =>
    writable.has(dir) || ['objects', 'refs', 'logs'].every((d) => writable.has(join(dir, d)));
  return gitWriteDirs(cwd).find((dir) => !named(dir));
}

/** Claude Code refuses to skip permission checks as root unless IS_SANDBOX=1 says it is contained. */
function runsAsRoot() {
  if (process.env.FAKE_AGENT_ROOT === '1') return true;
  if (process.env.FAKE_AGENT_ROOT === '0') return false;
  return process.getuid?.() === 0;
}

function newSessionId(provider) {
  if (process.env.FAKE_AGENT_SESSION_ID) return process.env.FAKE_AGENT_SESSION_ID;
  if (provider === 'opencode' || provider === 'kilo') {
    const alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
    const bytes = randomBytes(26);
    return `ses_${Array.from(bytes, (b) => alphabet[b % alphabet.length]).join('')}`;
  }
  return randomUUID();
}

/**
 * `[[fake:report=#N outcome: reason]]`: starts the first MCP server declared to the CLI and calls its `result_report` tool over stdio (initialize, initialized, tools/call), as an agent
 * with tools does. Resolves to the tool's text and whether it failed.
 */
async function reportThroughMcp(provider, options, line) {
  const server = Object.values(declaredMcpServers(provider, options))[0];
  if (!server?.command) return { text: 'no MCP server declared to report through', isError: true };
  const expand = (text) =>
    text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_, name) => process.env[name] ?? '');
  const match = /^(?:#(\d+)\s+)?([a-z][a-z0-9_-]*)(?::\s*(.*))?$/.exec(line.trim());
  if (!match) return { text: `not a result: ${line}`, isError: true };
  const args = {
    outcome: match[2],
    ...(match[3] ? { reason: match[3] } : {}),
    ...(match[1] ? { number: Number(match[1]) } : {}),
  };
  const child = spawn(expand(server.command), (server.args ?? []).map(expand), {
    env: { ...process.env, ...(server.env ?? {}) },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const answers = new Map();
  let buffer = '';
  const waiting = new Map();
  child.stdout.on('data', (chunk) => {
    buffer += chunk.toString();
    let end = buffer.indexOf('\n');
    while (end >= 0) {
      const message = JSON.parse(buffer.slice(0, end));
      buffer = buffer.slice(end + 1);
      if (message.id !== undefined) {
        answers.set(message.id, message);
        waiting.get(message.id)?.(message);
      }
      end = buffer.indexOf('\n');
    }
  });
  const exited = new Promise((resolve) => child.on('close', resolve));
  const ask = (id, method, params) =>
    new Promise((resolve, reject) => {
      if (answers.has(id)) return resolve(answers.get(id));
      waiting.set(id, resolve);
      void exited.then(() => reject(new Error(`the MCP server exited before answering ${method}`)));
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
    });
  try {
    await ask(1, 'initialize', {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'fake-agent', version: '1.0.0' },
    });
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
    const called = await ask(2, 'tools/call', { name: 'result_report', arguments: args });
    if (called.error) return { text: called.error.message, isError: true };
    return {
      text: called.result.content.map((c) => c.text).join('\n'),
      isError: called.result.isError === true,
    };
  } catch (error) {
    return { text: String(error.message ?? error), isError: true };
  } finally {
    child.stdin.end();
    await exited;
  }
}

function shortId(prefix) {
  return `${prefix}${randomBytes(12).toString('hex')}`;
}

function directives(prompt) {
  const found = [];
  for (const match of prompt.matchAll(/\[\[fake:([a-z-]+)(?:=([^\]]*))?\]\]/g)) {
    found.push({ name: match[1], value: match[2] });
  }
  return found;
}

const SELECTED_ENV = [
  'PWD',
  'HOME',
  'OPENCODE_DB',
  'GIT_DIR',
  'GIT_WORK_TREE',
  'GIT_INDEX_FILE',
  'GEMINI_CLI_HOME',
];

function logInvocation(provider, record) {
  const dir = process.env.FAKE_AGENT_LOG;
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  const values = {};
  const hashes = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (SELECTED_ENV.includes(name) || name.startsWith('FAKE_')) values[name] = value;
    hashes[name] = createHash('sha256')
      .update(value ?? '')
      .digest('hex');
  }
  appendFileSync(
    join(dir, `${provider}.jsonl`),
    `${JSON.stringify({
      provider,
      ...record,
      cwd: process.cwd(),
      pid: process.pid,
      env: { keys: Object.keys(process.env).sort(), values, hashes },
      time: new Date().toISOString(),
    })}\n`,
  );
}

/** Each `[[fake:commit]]` that committed: one JSON line in $FAKE_AGENT_LOG/commits.jsonl. */
function logCommit(provider, record) {
  const dir = process.env.FAKE_AGENT_LOG;
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  appendFileSync(
    join(dir, 'commits.jsonl'),
    `${JSON.stringify({ provider, ...record, cwd: process.cwd(), time: new Date().toISOString() })}\n`,
  );
}

/** Copilot takes the id from its caller: the session is a resume when that id was seen before. */
/**
 * FAKE_AGENT_RESUME_UNFINISHED=1: a resumed session goes on with what it was asked and had not
 * finished, as a real CLI's conversation carries its first prompt (curupira's resume prompt only
 * says "continue"). The first prompt of `sessionId`, from the invocation log, when that session
 * never reached its final message; else undefined.
 */
function unfinishedPrompt(provider, sessionId) {
  const dir = process.env.FAKE_AGENT_LOG;
  if (process.env.FAKE_AGENT_RESUME_UNFINISHED !== '1' || !dir) return undefined;
  const finished = join(dir, 'finished-sessions.txt');
  if (existsSync(finished) && readFileSync(finished, 'utf8').split('\n').includes(sessionId))
    return undefined;
  const log = join(dir, `${provider}.jsonl`);
  if (!existsSync(log)) return undefined;
  for (const line of readFileSync(log, 'utf8').split('\n')) {
    if (!line) continue;
    const record = JSON.parse(line);
    if (record.kind === 'run' && record.sessionId === sessionId && record.resumeOf === null)
      return record.prompt;
  }
  return undefined;
}

/** With FAKE_AGENT_RESUME_UNFINISHED=1: `sessionId` reached its final message. */
function sessionFinished(sessionId) {
  const dir = process.env.FAKE_AGENT_LOG;
  if (process.env.FAKE_AGENT_RESUME_UNFINISHED !== '1' || !dir) return;
  appendFileSync(join(dir, 'finished-sessions.txt'), `${sessionId}\n`);
}

function copilotSeen(sessionId) {
  const dir = process.env.FAKE_AGENT_LOG;
  if (!dir) return false;
  const file = join(dir, 'copilot-sessions.txt');
  const known = existsSync(file) ? readFileSync(file, 'utf8').split('\n') : [];
  if (known.includes(sessionId)) return true;
  mkdirSync(dir, { recursive: true });
  appendFileSync(file, `${sessionId}\n`);
  return false;
}

/** Real wall-clock text for the reset: `3pm`, `4:50am` in UTC, as Claude Code prints it. */
function meridiemUtc(date) {
  const h = date.getUTCHours();
  const m = date.getUTCMinutes();
  const hour = h % 12 === 0 ? 12 : h % 12;
  return `${hour}${m === 0 ? '' : `:${String(m).padStart(2, '0')}`}${h < 12 ? 'am' : 'pm'}`;
}

function inWords(seconds) {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  return `${h} hour${h === 1 ? '' : 's'} ${m} minute${m === 1 ? '' : 's'}`;
}

/**
 * What each CLI prints when the account hit its limit, as users reported it in the CLI's issue
 * tracker (src/agents/limits.ts names the issues). The multi-provider CLIs (OpenCode, Kilo, pi)
 * pass on the model API's 429 body.
 */
const LIMIT_MESSAGES = {
  claude: (reset) => `Claude AI usage limit reached|${reset}`,
  qwen: () => '429 Free allocated quota exceeded.',
  codex: (reset, now) =>
    `You've hit your usage limit. Upgrade to Pro (https://openai.com/chatgpt/pricing) or try again in ${inWords(reset - now)}.`,
  gemini: (reset, now) => {
    const left = reset - now;
    return `You have exhausted your capacity on this model. Your quota will reset after ${Math.floor(left / 3600)}h${Math.floor((left % 3600) / 60)}m${left % 60}s.`;
  },
  copilot: (reset, now) =>
    `Sorry, you've hit a rate limit that restricts the number of Copilot model requests you can make within a specific time period. Please try again in ${Math.max(1, Math.round((reset - now) / 3600))} hours. Please review our Terms of Service (https://docs.github.com/site-policy/github-terms/github-terms-of-service).`,
  cursor: (reset) => {
    const d = new Date(reset * 1000);
    return `You've hit your usage limit Get Cursor Pro for more Agent usage, unlimited Tab, and more. Your usage limits will reset when your monthly cycle ends on ${d.getMonth() + 1}/${d.getDate()}/${d.getFullYear()}.`;
  },
  opencode: () =>
    'AI_APICallError: 429 {"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed your account\'s rate limit. Please try again later."}}',
};
LIMIT_MESSAGES.kilo = LIMIT_MESSAGES.opencode;
LIMIT_MESSAGES.pi = LIMIT_MESSAGES.opencode;

function limitMessage(provider) {
  const now = Math.floor(Date.now() / 1000);
  const reset = Number(process.env.FAKE_AGENT_LIMIT_RESET) || now + 3600;
  if (provider === 'claude' && process.env.FAKE_AGENT_LIMIT_STYLE === 'clock') {
    return `5-hour limit reached ∙ resets ${meridiemUtc(new Date(reset * 1000))} (UTC)`;
  }
  return LIMIT_MESSAGES[provider](reset, now);
}

/** Whether this is the first invocation whose prompt has the line carrying directive `d`. */
function firstSighting(prompt, d) {
  const dir = process.env.FAKE_AGENT_LOG;
  if (!dir) return true;
  const tag = `[[fake:${d.name}=${d.value ?? ''}]]`;
  const line = prompt.split('\n').find((l) => l.includes(tag)) ?? tag;
  const marker = join(dir, `${d.name}-${createHash('sha256').update(line).digest('hex').slice(0, 16)}`);
  try {
    closeSync(openSync(marker, 'wx'));
    return true;
  } catch {
    return false;
  }
}

function sleep(seconds) {
  return new Promise((resolve) => setTimeout(resolve, seconds * 1000));
}

function emitLine(value) {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

function git(args, cwd = process.cwd()) {
  const result = spawnSync(
    'git',
    ['-c', 'user.name=Fake Agent', '-c', 'user.email=fake-agent@example.invalid', ...args],
    { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
  );
  return { ok: result.status === 0, output: `${result.stdout ?? ''}${result.stderr ?? ''}`.trim() };
}

function spawnStubbornChild() {
  const child = spawn(
    process.execPath,
    ['-e', "process.on('SIGTERM', () => {}); setTimeout(() => {}, 120000)"],
    { stdio: ['ignore', 'inherit', 'inherit'] },
  );
  child.unref();
  const dir = process.env.FAKE_AGENT_LOG;
  if (dir) {
    mkdirSync(dir, { recursive: true });
    appendFileSync(join(dir, 'children.pids'), `${child.pid}\n`);
  }
}

// ---------------------------------------------------------------------------------------------
// Stream writers, one per output format. Each gets the same story and tells it in its own JSON.
// ---------------------------------------------------------------------------------------------

const USAGE = { input: 1200, cached: 800, output: 150 };

function claudeStyle({ provider, sessionId, model, cwd, prompt }) {
  const isQwen = provider === 'qwen';
  const modelName = model ?? (isQwen ? 'qwen3-coder-plus' : 'claude-sonnet-4-5');
  const assistant = (content) =>
    emitLine({
      type: 'assistant',
      uuid: randomUUID(),
      session_id: sessionId,
      parent_tool_use_id: null,
      message: {
        id: shortId('msg_'),
        type: 'message',
        role: 'assistant',
        model: modelName,
        content,
        stop_reason: null,
        usage: { input_tokens: 40, output_tokens: 20 },
      },
    });
  const usage = isQwen
    ? {
        input_tokens: USAGE.input,
        output_tokens: USAGE.output,
        cache_read_input_tokens: USAGE.cached,
        total_tokens: USAGE.input + USAGE.output,
      }
    : {
        input_tokens: USAGE.input - USAGE.cached,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: USAGE.cached,
        output_tokens: USAGE.output,
        service_tier: 'standard',
      };
  return {
    start() {
      emitLine({
        type: 'system',
        subtype: 'init',
        uuid: randomUUID(),
        session_id: sessionId,
        cwd,
        tools: isQwen ? ['run_shell_command', 'read_file', 'edit'] : ['Bash', 'Read', 'Edit', 'Write'],
        mcp_servers: [],
        model: modelName,
        permissionMode: 'default',
        apiKeySource: 'none',
        ...(isQwen ? { qwen_code_version: '0.1.0' } : { claude_code_version: '2.0.14' }),
      });
    },
    thinking(text) {
      if (!isQwen) assistant([{ type: 'thinking', thinking: text, signature: 'c2lnbmF0dXJl' }]);
    },
    text(text) {
      assistant([{ type: 'text', text }]);
    },
    tool(command, output, isError) {
      const id = shortId('toolu_');
      const name = isQwen ? 'run_shell_command' : 'Bash';
      assistant([{ type: 'tool_use', id, name, input: { command, description: 'Run a command' } }]);
      emitLine({
        type: 'user',
        uuid: randomUUID(),
        session_id: sessionId,
        parent_tool_use_id: null,
        message: {
          role: 'user',
          content: [{ tool_use_id: id, type: 'tool_result', content: output, is_error: isError }],
        },
      });
    },
    finish(result) {
      emitLine({
        type: 'result',
        subtype: 'success',
        uuid: randomUUID(),
        is_error: false,
        duration_ms: 2100,
        duration_api_ms: 1800,
        num_turns: 3,
        result,
        session_id: sessionId,
        ...(isQwen ? {} : { total_cost_usd: 0.0123 }),
        usage,
        permission_denials: [],
      });
    },
    fail(message) {
      emitLine({
        type: 'result',
        subtype: 'error_during_execution',
        uuid: randomUUID(),
        is_error: true,
        duration_ms: 900,
        duration_api_ms: 700,
        num_turns: 1,
        session_id: sessionId,
        usage,
        errors: [message],
        prompt_length: prompt.length,
      });
    },
  };
}

function cursorStyle({ sessionId, model, cwd, prompt }) {
  const now = () => Date.now();
  return {
    start() {
      emitLine({
        type: 'system',
        subtype: 'init',
        apiKeySource: 'env',
        cwd,
        session_id: sessionId,
        model: model ?? 'Auto',
        permissionMode: 'default',
      });
      emitLine({
        type: 'user',
        message: { role: 'user', content: [{ type: 'text', text: prompt }] },
        session_id: sessionId,
      });
    },
    thinking(text) {
      for (const piece of text.split(/(?<= )/)) {
        emitLine({
          type: 'thinking',
          subtype: 'delta',
          text: piece,
          session_id: sessionId,
          timestamp_ms: now(),
        });
      }
      emitLine({ type: 'thinking', subtype: 'completed', session_id: sessionId, timestamp_ms: now() });
    },
    text(text) {
      emitLine({
        type: 'assistant',
        message: { role: 'assistant', content: [{ type: 'text', text }] },
        session_id: sessionId,
      });
    },
    tool(command, output, isError) {
      const callId = shortId('call_');
      const args = { command, workingDirectory: cwd, timeout: 30000 };
      emitLine({
        type: 'tool_call',
        subtype: 'started',
        call_id: callId,
        tool_call: { shellToolCall: { args } },
        session_id: sessionId,
        timestamp_ms: now(),
      });
      emitLine({
        type: 'tool_call',
        subtype: 'completed',
        call_id: callId,
        tool_call: {
          shellToolCall: {
            args,
            result: {
              success: { command, exitCode: isError ? 1 : 0, stdout: output, stderr: '', executionTime: 12 },
            },
          },
        },
        session_id: sessionId,
        timestamp_ms: now(),
      });
    },
    finish(result) {
      emitLine({
        type: 'result',
        subtype: 'success',
        duration_ms: 2100,
        duration_api_ms: 2100,
        is_error: false,
        result,
        session_id: sessionId,
        request_id: randomUUID(),
        usage: {
          inputTokens: USAGE.input - USAGE.cached,
          outputTokens: USAGE.output,
          cacheReadTokens: USAGE.cached,
          cacheWriteTokens: 0,
        },
      });
    },
    fail(message) {
      emitLine({
        type: 'result',
        subtype: 'error',
        duration_ms: 800,
        duration_api_ms: 800,
        is_error: true,
        result: message,
        session_id: sessionId,
        request_id: randomUUID(),
      });
    },
  };
}

function codexStyle({ sessionId }) {
  let n = 0;
  const itemId = () => `item_${n++}`;
  return {
    start() {
      emitLine({ type: 'thread.started', thread_id: sessionId });
      emitLine({ type: 'turn.started' });
    },
    thinking(text) {
      emitLine({ type: 'item.completed', item: { id: itemId(), type: 'reasoning', text } });
    },
    text(text) {
      emitLine({ type: 'item.completed', item: { id: itemId(), type: 'agent_message', text } });
    },
    tool(command, output, isError) {
      const id = itemId();
      const shell = `bash -lc '${command}'`;
      emitLine({
        type: 'item.started',
        item: {
          id,
          type: 'command_execution',
          command: shell,
          aggregated_output: '',
          exit_code: null,
          status: 'in_progress',
        },
      });
      emitLine({
        type: 'item.completed',
        item: {
          id,
          type: 'command_execution',
          command: shell,
          aggregated_output: output,
          exit_code: isError ? 1 : 0,
          status: isError ? 'failed' : 'completed',
        },
      });
    },
    turn(inputTokens) {
      emitLine({
        type: 'turn.completed',
        usage: { input_tokens: inputTokens, cached_input_tokens: 0, output_tokens: 0 },
      });
      emitLine({ type: 'turn.started' });
    },
    finish() {
      emitLine({
        type: 'turn.completed',
        usage: { input_tokens: USAGE.input, cached_input_tokens: USAGE.cached, output_tokens: USAGE.output },
      });
    },
    fail(message) {
      emitLine({ type: 'error', message });
      emitLine({ type: 'turn.failed', error: { message } });
    },
  };
}

function openCodeStyle({ sessionId }) {
  const now = () => Date.now();
  let messageId = shortId('msg_');
  const envelope = (type, part) =>
    emitLine({
      type,
      timestamp: now(),
      sessionID: sessionId,
      part: { id: shortId('prt_'), sessionID: sessionId, messageID: messageId, ...part },
    });
  const snapshot = () => randomBytes(20).toString('hex');
  const stepFinish = (reason) =>
    envelope('step_finish', {
      type: 'step-finish',
      reason,
      snapshot: snapshot(),
      cost: 0.0061,
      tokens: {
        input: (USAGE.input - USAGE.cached) / 2,
        output: USAGE.output / 2,
        reasoning: 0,
        cache: { read: USAGE.cached / 2, write: 0 },
      },
    });
  return {
    start() {
      envelope('step_start', { type: 'step-start', snapshot: snapshot() });
    },
    thinking(text) {
      envelope('reasoning', { type: 'reasoning', text, time: { start: now(), end: now() } });
    },
    text(text) {
      envelope('text', { type: 'text', text, time: { start: now(), end: now() } });
    },
    tool(command, output, isError) {
      envelope('tool_use', {
        type: 'tool',
        callID: shortId('toolu_'),
        tool: 'bash',
        state: isError
          ? {
              status: 'error',
              input: { command, description: 'Run a command' },
              error: output,
              time: { start: now(), end: now() },
            }
          : {
              status: 'completed',
              input: { command, description: 'Run a command' },
              output,
              title: command,
              metadata: { output, exit: 0, description: 'Run a command' },
              time: { start: now(), end: now() },
            },
      });
      stepFinish('tool-calls');
      messageId = shortId('msg_');
      envelope('step_start', { type: 'step-start', snapshot: snapshot() });
    },
    finish() {
      stepFinish('stop');
    },
    fail(message) {
      emitLine({
        type: 'error',
        timestamp: now(),
        sessionID: sessionId,
        error: { name: 'APIError', data: { message, statusCode: 500, isRetryable: false } },
      });
    },
  };
}

function geminiStyle({ sessionId, model, prompt }) {
  const ts = () => new Date().toISOString();
  return {
    start() {
      emitLine({ type: 'init', timestamp: ts(), session_id: sessionId, model: model ?? 'gemini-2.5-pro' });
      emitLine({ type: 'message', timestamp: ts(), role: 'user', content: prompt });
    },
    thinking() {},
    text(text) {
      const cut = Math.ceil(text.length / 2);
      for (const piece of [text.slice(0, cut), text.slice(cut)]) {
        if (piece)
          emitLine({ type: 'message', timestamp: ts(), role: 'assistant', content: piece, delta: true });
      }
    },
    tool(command, output, isError) {
      const toolId = `run_shell_command-${Date.now()}-${randomBytes(6).toString('hex')}`;
      emitLine({
        type: 'tool_use',
        timestamp: ts(),
        tool_name: 'run_shell_command',
        tool_id: toolId,
        parameters: { command },
      });
      emitLine(
        isError
          ? {
              type: 'tool_result',
              timestamp: ts(),
              tool_id: toolId,
              status: 'error',
              output,
              error: { type: 'shell_error', message: output },
            }
          : { type: 'tool_result', timestamp: ts(), tool_id: toolId, status: 'success', output },
      );
    },
    finish() {
      emitLine({
        type: 'result',
        timestamp: ts(),
        status: 'success',
        stats: {
          total_tokens: USAGE.input + USAGE.output,
          input_tokens: USAGE.input,
          output_tokens: USAGE.output,
          cached: USAGE.cached,
          input: USAGE.input - USAGE.cached,
          duration_ms: 2100,
          tool_calls: 1,
        },
      });
    },
    fail(message) {
      emitLine({ type: 'error', timestamp: ts(), severity: 'error', message });
      emitLine({
        type: 'result',
        timestamp: ts(),
        status: 'error',
        error: { type: 'FatalTurnError', message },
        stats: {
          total_tokens: 0,
          input_tokens: 0,
          output_tokens: 0,
          cached: 0,
          input: 0,
          duration_ms: 800,
          tool_calls: 0,
        },
      });
    },
  };
}

function copilotStyle({ sessionId, resumed, prompt, model, cwd }) {
  let parentId = null;
  const event = (type, data, extra = {}) => {
    const id = randomUUID();
    emitLine({ type, data, id, timestamp: new Date().toISOString(), parentId, ...extra });
    parentId = id;
  };
  let turn = 0;
  return {
    start() {
      if (resumed) event('session.resume', { resumeTime: new Date().toISOString(), eventCount: 12 });
      else {
        event('session.start', {
          sessionId,
          version: 1,
          producer: 'copilot-agent',
          copilotVersion: '0.0.400',
          startTime: new Date().toISOString(),
          selectedModel: model ?? 'claude-sonnet-4.5',
          context: { cwd },
        });
      }
      event('user.message', { content: prompt, attachments: [] });
      event('assistant.turn_start', { turnId: String(turn) });
    },
    thinking(text) {
      event('assistant.reasoning', { reasoningId: randomUUID(), content: text });
    },
    text(text) {
      event('assistant.message', { messageId: randomUUID(), content: text, toolRequests: [] });
    },
    tool(command, output, isError) {
      const toolCallId = shortId('toolu_');
      const args = { command, description: 'Run a command' };
      event('assistant.message', {
        messageId: randomUUID(),
        content: '',
        toolRequests: [{ toolCallId, name: 'bash', arguments: args, type: 'function' }],
      });
      event('tool.execution_start', { toolCallId, toolName: 'bash', arguments: args });
      event(
        'tool.execution_complete',
        isError
          ? { toolCallId, success: false, error: { message: output, code: 'failure' } }
          : { toolCallId, success: true, result: { content: output, detailedContent: output } },
      );
      event('assistant.turn_end', { turnId: String(turn) });
      turn += 1;
      event('assistant.turn_start', { turnId: String(turn) });
    },
    finish() {
      event('assistant.turn_end', { turnId: String(turn) });
      emitLine({
        type: 'result',
        timestamp: new Date().toISOString(),
        sessionId,
        exitCode: 0,
        usage: {
          premiumRequests: 1,
          totalApiDurationMs: 1800,
          sessionDurationMs: 2100,
          codeChanges: { linesAdded: 0, linesRemoved: 0, filesModified: [] },
        },
      });
    },
    fail(message) {
      event('session.error', { errorType: 'model_call', message });
      emitLine({
        type: 'result',
        timestamp: new Date().toISOString(),
        sessionId,
        exitCode: 1,
        usage: {
          premiumRequests: 0,
          totalApiDurationMs: 0,
          sessionDurationMs: 800,
          codeChanges: { linesAdded: 0, linesRemoved: 0, filesModified: [] },
        },
      });
    },
  };
}

function piStyle({ sessionId, model, cwd, prompt }) {
  const ts = () => Date.now();
  const modelName = model ?? 'claude-sonnet-4-5';
  const usage = (input, cached, output) => ({
    input,
    output,
    cacheRead: cached,
    cacheWrite: 0,
    totalTokens: input + cached + output,
    cost: { input: 0.001, output: 0.002, cacheRead: 0.0002, cacheWrite: 0, total: 0.0032 },
  });
  const assistantMessage = (content, stopReason, extra = {}) => ({
    role: 'assistant',
    content,
    api: 'anthropic-messages',
    provider: 'anthropic',
    model: modelName,
    usage: usage((USAGE.input - USAGE.cached) / 2, USAGE.cached / 2, USAGE.output / 2),
    stopReason,
    timestamp: ts(),
    ...extra,
  });
  const messages = [];
  let pendingThinking;
  const say = (message) => {
    emitLine({ type: 'message_start', message: { ...message, content: [] } });
    const text = message.content.find((block) => block.type === 'text');
    if (text) {
      emitLine({
        type: 'message_update',
        message,
        assistantMessageEvent: {
          type: 'text_delta',
          contentIndex: message.content.indexOf(text),
          delta: text.text,
        },
      });
    }
    emitLine({ type: 'message_end', message });
    messages.push(message);
  };
  return {
    start() {
      emitLine({ type: 'session', version: 3, id: sessionId, timestamp: new Date().toISOString(), cwd });
      emitLine({ type: 'agent_start' });
      emitLine({ type: 'turn_start' });
      const user = { role: 'user', content: [{ type: 'text', text: prompt }], timestamp: ts() };
      emitLine({ type: 'message_start', message: user });
      emitLine({ type: 'message_end', message: user });
      messages.push(user);
    },
    thinking(text) {
      pendingThinking = text;
    },
    text(text) {
      const content = [];
      if (pendingThinking) content.push({ type: 'thinking', thinking: pendingThinking });
      pendingThinking = undefined;
      content.push({ type: 'text', text });
      say(assistantMessage(content, 'stop'));
    },
    tool(command, output, isError) {
      const id = shortId('toolu_');
      say(assistantMessage([{ type: 'toolCall', id, name: 'bash', arguments: { command } }], 'toolUse'));
      emitLine({ type: 'tool_execution_start', toolCallId: id, toolName: 'bash', args: { command } });
      const result = { content: [{ type: 'text', text: output }], details: {} };
      emitLine({ type: 'tool_execution_end', toolCallId: id, toolName: 'bash', result, isError });
      const toolResult = {
        role: 'toolResult',
        toolCallId: id,
        toolName: 'bash',
        content: result.content,
        isError,
        timestamp: ts(),
      };
      emitLine({ type: 'message_start', message: toolResult });
      emitLine({ type: 'message_end', message: toolResult });
      messages.push(toolResult);
      emitLine({ type: 'turn_end', message: messages.at(-2), toolResults: [toolResult] });
      emitLine({ type: 'turn_start' });
    },
    finish() {
      emitLine({ type: 'turn_end', message: messages.at(-1), toolResults: [] });
      emitLine({ type: 'agent_end', messages });
    },
    fail(message) {
      say(assistantMessage([], 'error', { errorMessage: message }));
      emitLine({ type: 'turn_end', message: messages.at(-1), toolResults: [] });
      emitLine({ type: 'agent_end', messages });
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The screening classifier's call (src/screening/classifier/agent.ts): a local model stand-in.
// ---------------------------------------------------------------------------------------------

/** The nonce and the fenced text of a classifier prompt, or undefined for any other prompt. */
function classifierRequest(prompt) {
  if (!prompt.includes('You are a prompt-injection classifier')) return undefined;
  const begin = prompt.match(/<<<UNTRUSTED TEXT ([0-9a-f]{16,})>>>\n/);
  if (!begin) return undefined;
  const nonce = begin[1];
  const start = begin.index + begin[0].length;
  const end = prompt.indexOf(`\n<<<END UNTRUSTED TEXT ${nonce}>>>`, start);
  return { nonce, text: prompt.slice(start, end === -1 ? undefined : end) };
}

/**
 * What a small, gullible model answers: `[[fake:classify=RAW]]` in the text makes it print RAW
 * (`{nonce}` replaced by the real nonce: a malformed or a chatty answer); a JSON answer written
 * into the text (`{"score": 0}`…) fools it into repeating that instead of judging (an injection
 * aimed at the classifier itself); otherwise it scores obvious override wording high.
 */
function classifierAnswer({ nonce, text }) {
  const raw = text.match(/\[\[fake:classify=([^\]]*)\]\]/);
  if (raw) return raw[1].replaceAll('{nonce}', nonce);
  const forged = text.match(/\{[^{}]*"score"[^{}]*\}/);
  if (forged) return forged[0];
  const hostile =
    /ignore (all |any )?(previous|prior|above) instructions|disregard your (rules|instructions)|reveal (the |your )?(system prompt|secrets?|tokens?)/i;
  return JSON.stringify({ nonce, score: hostile.test(text) ? 0.97 : 0.03 });
}

const WRITERS = {
  opencode: openCodeStyle,
  kilo: openCodeStyle,
  claude: claudeStyle,
  qwen: claudeStyle,
  codex: codexStyle,
  gemini: geminiStyle,
  cursor: cursorStyle,
  copilot: copilotStyle,
  pi: piStyle,
};

// ---------------------------------------------------------------------------------------------

/**
 * With FAKE_AGENT_EXCLUSIVE=<dir>: each agent takes a lock named after its working directory there;
 * finding the lock held by a live process means two agents work in one folder at once, and that is
 * written to <dir>/violations.log for the test to read.
 */
function guardExclusive(cwd) {
  const dir = process.env.FAKE_AGENT_EXCLUSIVE;
  if (!dir) return;
  mkdirSync(dir, { recursive: true });
  const lock = join(dir, `${createHash('sha256').update(cwd).digest('hex').slice(0, 16)}.lock`);
  if (existsSync(lock)) {
    const holder = Number(readFileSync(lock, 'utf8'));
    if (holder && holder !== process.pid && isAlive(holder)) {
      appendFileSync(
        join(dir, 'violations.log'),
        `${new Date().toISOString()} ${holder} and ${process.pid} in ${cwd}\n`,
      );
    }
  }
  writeFileSync(lock, String(process.pid));
  process.on('exit', () => {
    try {
      if (Number(readFileSync(lock, 'utf8')) === process.pid) rmSync(lock, { force: true });
    } catch {
      // the lock went with its folder
    }
  });
}

function isAlive(pid) {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

async function main() {
  // A reader that went away (`| head`) ends the run quietly, as most CLIs do.
  process.stdout.on('error', (error) => {
    if (error.code === 'EPIPE') process.exit(0);
    throw error;
  });
  const [provider, ...argv] = process.argv.slice(2);
  const spec = SPECS[provider];
  if (!spec) {
    process.stderr.write(`fake-agent: unknown provider '${provider ?? ''}'\n`);
    process.exit(USAGE_EXIT);
  }

  if (argv.length === 1 && argv[0] === '--version') {
    const version =
      provider === 'opencode'
        ? (process.env.FAKE_AGENT_OPENCODE_VERSION ?? '2.0.0')
        : (process.env.FAKE_AGENT_VERSION ?? '1.0.0');
    logInvocation(provider, { kind: 'version', argv, resumeOf: null, sessionId: null });
    process.stdout.write(`${version}\n`);
    return;
  }

  let options;
  let prompt;
  let resumeOf = null;
  if (provider === 'codex') {
    ({ options, prompt, resumeOf } = parseCodexArgs(spec, argv));
  } else {
    let words;
    ({ options, words, prompt } = parseArgs(provider, spec, argv));
    if (spec.words.length > 0 && words[0] !== spec.words[0]) {
      usageError(provider, `expected the '${spec.words[0]}' command`);
    }
    if (spec.resume === 'assigned') {
      resumeOf = copilotSeen(options['--session-id']) ? options['--session-id'] : null;
    } else if (options[spec.resume] !== undefined) {
      resumeOf = options[spec.resume];
    }
    if (words.length > spec.words.length) {
      usageError(provider, `unexpected argument '${words[spec.words.length]}'`);
    }
  }
  if (prompt === undefined || prompt === '') usageError(provider, 'no prompt given');
  if (
    provider === 'claude' &&
    options['--permission-mode'] === 'bypassPermissions' &&
    runsAsRoot() &&
    process.env.IS_SANDBOX !== '1'
  ) {
    process.stderr.write(
      '--dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons\n',
    );
    process.exit(1);
  }

  const sessionId =
    spec.resume === 'assigned' ? options['--session-id'] : (resumeOf ?? newSessionId(provider));
  logInvocation(provider, { kind: 'run', argv, prompt, sessionId, resumeOf });

  const cwd = process.cwd();
  guardExclusive(cwd);
  const model = typeof options['--model'] === 'string' ? options['--model'] : undefined;
  const out = WRITERS[provider]({ provider, sessionId, resumed: resumeOf !== null, model, cwd, prompt });
  const unfinished = resumeOf !== null ? unfinishedPrompt(provider, resumeOf) : undefined;
  const wanted = directives(
    [
      prompt,
      ...(resumeOf !== null && process.env.FAKE_AGENT_ON_RESUME ? [process.env.FAKE_AGENT_ON_RESUME] : []),
      ...(unfinished === undefined ? [] : [unfinished]),
    ].join('\n'),
  );
  const has = (name) => wanted.some((d) => d.name === name);

  const printEnv = process.env.FAKE_AGENT_PRINT_ENV === '1';
  const envLines = Object.entries(process.env)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([name, value]) => `${name}=${value}`);
  if (printEnv) process.stderr.write(`${envLines.join('\n')}\n`);
  for (const d of wanted) {
    if (d.name !== 'stderr-env' || !d.value) continue;
    const value = process.env[d.value];
    process.stderr.write(`${value === undefined ? `${d.value} is not set` : `${d.value}=${value}`}\n`);
  }
  out.start();
  if (has('spawn-child')) spawnStubbornChild();
  if (has('commit-early')) {
    const file = `fake-${provider}-early-${randomBytes(4).toString('hex')}.txt`;
    writeFileSync(join(cwd, file), `written by the fake ${provider} agent before any sleep\n`);
    const add = git(['add', '--', file]);
    const commit = add.ok ? git(['commit', '-q', '-m', `${provider}: early change`]) : add;
    out.tool(`git commit -m "${provider}: early change"`, commit.output || 'committed', !commit.ok);
  }
  for (const d of wanted) if (d.name === 'usage' && out.turn) out.turn(Number(d.value) || 0);
  for (const d of wanted) if (d.name === 'sleep') await sleep(Number(d.value) || 0);
  for (const d of wanted)
    if (d.name === 'sleep-first' && firstSighting(prompt, d)) await sleep(Number(d.value) || 0);
  if (printEnv) out.text(`My environment:\n${envLines.join('\n')}`);

  const classifying = classifierRequest(prompt);
  if (classifying) {
    const answer = classifierAnswer(classifying);
    out.text(answer);
    out.finish(answer);
    return;
  }

  if (has('limit')) {
    const message = limitMessage(provider);
    out.fail(message);
    process.stderr.write(`${message}\n`);
    process.exitCode = 1;
    return;
  }
  if (resumeOf !== null && process.env.FAKE_AGENT_FAIL_RESUME === 'missing') {
    const message = missingSessionMessage(provider, resumeOf);
    out.fail(message);
    process.stderr.write(`${message}\n`);
    process.exitCode = 1;
    return;
  }
  if (has('fail') || (resumeOf !== null && process.env.FAKE_AGENT_FAIL_RESUME === '1')) {
    const message = has('fail')
      ? 'simulated failure requested by the prompt'
      : 'simulated failure of a resumed session (FAKE_AGENT_FAIL_RESUME)';
    out.fail(message);
    process.stderr.write(`${provider}: error: ${message}\n`);
    process.exitCode = 1;
    return;
  }

  out.thinking('Looking at the repository before changing anything.');
  out.text(resumeOf ? `Resumed session ${sessionId}; picking up where it stopped.` : 'Starting on the task.');
  for (const d of wanted) {
    if (d.name !== 'echo-env' || !d.value) continue;
    const value = process.env[d.value];
    out.text(value === undefined ? `${d.value} is not set` : `${d.value}=${value}`);
  }

  const listing = readdirSync(cwd).sort().join('\n');
  out.tool('ls', listing, false);

  const mergeFrom = wanted.find((d) => d.name === 'merge' && d.value)?.value;
  if (mergeFrom) {
    // What curupira fetched for the run (origin/BRANCH), else a fetch of its own.
    const tracking = `refs/remotes/origin/${mergeFrom}`;
    const local = git(['rev-parse', '--verify', '-q', tracking]).ok;
    const fetched = local ? { ok: true } : git(['fetch', '-q', 'origin', mergeFrom]);
    const merged = fetched.ok
      ? git([
          'merge',
          '--no-edit',
          '-X',
          'ours',
          '-m',
          `${provider}: merge ${mergeFrom}`,
          local ? tracking : 'FETCH_HEAD',
        ])
      : fetched;
    out.tool(
      local
        ? `git merge -X ours origin/${mergeFrom}`
        : `git fetch origin ${mergeFrom} && git merge -X ours FETCH_HEAD`,
      merged.output || 'merged',
      !merged.ok,
    );
    if (!merged.ok) {
      process.stderr.write(`${provider}: git failed: ${merged.output}\n`);
      process.exitCode = 1;
      return;
    }
  }

  for (const d of wanted) {
    if ((d.name !== 'commit-file' && d.name !== 'commit-env') || !d.value) continue;
    const file = d.name === 'commit-file' ? d.value : 'leaked.txt';
    if (file.startsWith('/') || file.split('/').includes('..')) continue;
    mkdirSync(join(cwd, file, '..'), { recursive: true });
    const content =
      d.name === 'commit-file'
        ? `written by the fake ${provider} agent\n`
        : `config: ${process.env[d.value] ?? ''}\n`;
    writeFileSync(join(cwd, file), content);
    const add = git(['add', '--', file]);
    const commit = add.ok ? git(['commit', '-q', '-m', `${provider}: write ${file}`]) : add;
    out.tool(`git commit ${file}`, commit.output || 'committed', !commit.ok);
  }

  for (const d of wanted) {
    if (d.name !== 'commit-in' || !d.value) continue;
    const line = prompt.split('\n').find((l) => l.startsWith(`- \`${d.value}\` (`) && l.includes('): /'));
    const dir = line?.slice(line.indexOf('): /') + 3).trim();
    if (!dir) {
      process.stderr.write(`${provider}: no worktree of ${d.value} in the prompt\n`);
      process.exitCode = 1;
      return;
    }
    const file = `fake-${provider}-${randomBytes(4).toString('hex')}.txt`;
    writeFileSync(join(dir, file), `written by the fake ${provider} agent\n`);
    const add = git(['add', '--', file], dir);
    const commit = add.ok ? git(['commit', '-q', '-m', `${provider}: change in ${d.value}`], dir) : add;
    out.tool(`git -C ${dir} commit ${file}`, commit.output || 'committed', !commit.ok);
    if (!commit.ok) {
      process.stderr.write(`${provider}: git failed: ${commit.output}\n`);
      process.exitCode = 1;
      return;
    }
  }

  if (has('commit') || has('dirty')) {
    const file = `fake-${provider}-${randomBytes(4).toString('hex')}.txt`;
    writeFileSync(join(cwd, file), `written by the fake ${provider} agent\n`);
    if (has('commit')) {
      const readOnly = provider === 'codex' ? codexReadOnlyGitDir(options, cwd) : undefined;
      const add = readOnly
        ? {
            ok: false,
            output: `fatal: Unable to create '${join(readOnly, 'index.lock')}': Read-only file system`,
          }
        : git(['add', '--', file]);
      const commit = add.ok ? git(['commit', '-q', '-m', `${provider}: fake change`]) : add;
      out.tool(
        `git add ${file} && git commit -m "${provider}: fake change"`,
        commit.output || 'committed',
        !commit.ok,
      );
      if (!commit.ok) {
        process.stderr.write(`${provider}: git failed: ${commit.output}\n`);
        process.exitCode = 1;
        return;
      }
      logCommit(provider, { sessionId, resumeOf, sha: git(['rev-parse', 'HEAD']).output });
    }
    if (has('dirty')) writeFileSync(join(cwd, `${file}.draft`), 'not committed\n');
  }

  const report = wanted.filter((d) => d.name === 'report' && d.value).at(-1)?.value;
  if (report) {
    const answer = await reportThroughMcp(provider, options, report);
    out.tool('mcp__curupira__result_report', answer.text, answer.isError);
  }
  await reviewThroughTools(provider, options, wanted, out, cwd);

  const resultLine = wanted.filter((d) => d.name === 'result' && d.value).at(-1)?.value;
  const final = `Done: the task is complete.${resultLine ? `\n\n${resultLine.trim()}` : ''}`;
  out.text(final);
  out.finish(final);
  sessionFinished(sessionId);
  for (const d of wanted) if (d.name === 'linger') await sleep(Number(d.value) || 0);
}

await main();

/** What each real CLI prints when asked to resume a conversation it does not have (seen on each). */
function missingSessionMessage(provider, id) {
  switch (provider) {
    case 'claude':
      return `No conversation found with session ID: ${id}`;
    case 'codex':
      return `Error: thread/resume: thread/resume failed: no rollout found for thread id ${id} (code -32600)`;
    case 'gemini':
      return 'Error resuming session: No previous sessions found for this project.';
    case 'qwen':
      return `No saved session found with ID ${id}. Run \`qwen --resume\` without an ID to choose from existing sessions.`;
    case 'opencode':
      return 'Error: Session not found';
    default:
      return `${provider}: error: no session ${id}`;
  }
}
