/**
 * Codex CLI (checked against codex-cli 0.171.0, see test/fixtures/cli-help/):
 *
 *   codex exec [--profile A] [--sandbox S] [--add-dir GITDIR…] [resume ID]
 *     [--model M] [--config model_reasoning_effort="E"]
 *     [--config approval_policy="on-request" --config approvals_reviewer="auto_review"] --json -- MSG
 *
 * `--profile`, `--sandbox` and `--add-dir` belong to `exec` only: `codex exec resume` rejects them
 * ("unexpected argument"), yet honours them when they come before `resume`. `--model`, `--config`
 * and `--json` are accepted by both, and go after `resume ID`. Config values are TOML, so strings
 * go JSON-quoted inside one argument.
 *
 * The workspace-write sandbox makes every `.git` it finds read-only, and a worktree's git
 * directories live in the main checkout besides: so unless the sandbox is read-only or off, what a
 * commit writes there is named with `--add-dir` and the agent can commit. (With no
 * `sandbox` in the profile, Codex's own configuration picks the mode; `--add-dir` is ignored by a
 * read-only sandbox.)
 *
 * The servers curupira declares for a run (a review's findings tools) go in as config overrides,
 * `--config mcp_servers.NAME.command="…"`, `…args=[…]` and `…env={…}` (TOML values: JSON strings
 * and arrays of them are valid TOML), after `resume ID` too since `--config` belongs to both.
 */
import { join } from 'node:path';
import { defineDriver } from '../driver-kit.js';
import { gitWriteDirs } from '../git-dirs.js';
import { CODEX_LIMITS } from '../limits.js';
import type { AgentDriver, McpServerSpec } from '../types.js';
import { createCodexParser } from './parser.js';
import type { CodexProfile } from './schema.js';

/** Whether the sandbox the profile asks for may need the git directories as extra writable roots. */
function needsWritableGitDirs(sandbox: CodexProfile['sandbox']): boolean {
  return sandbox === undefined || sandbox === 'workspace-write';
}

/**
 * The writable roots a commit in `worktree` needs. For a linked worktree: the common directory's
 * `objects`, `refs` and `logs`, then the worktree's own git directory, as curupira's sandbox mounts
 * them writable (the rest of the common directory stays read-only there, and Codex's bubblewrap
 * cannot make a writable root of a read-only folder: `Can't mkdir <root>/.git`). For a checkout
 * used in place: its `.git` folder.
 */
function codexWritableGitDirs(worktree: string): string[] {
  const dirs = gitWriteDirs(worktree);
  const [common, own] = dirs;
  if (!common || !own || own === common) return dirs;
  return [join(common, 'objects'), join(common, 'refs'), join(common, 'logs'), own];
}

/** A TOML basic string: JSON's escaping of a string is valid TOML. */
const tomlString = (value: string): string => JSON.stringify(value);

/** The run's MCP servers as `--config` overrides of `mcp_servers.<name>`. */
export function codexMcpConfig(servers: readonly McpServerSpec[]): string[] {
  const args: string[] = [];
  for (const server of servers) {
    const key = `mcp_servers.${server.name}`;
    args.push('--config', `${key}.command=${tomlString(server.command)}`);
    args.push('--config', `${key}.args=[${server.args.map(tomlString).join(', ')}]`);
    const env = Object.entries(server.env);
    if (env.length > 0)
      args.push(
        '--config',
        `${key}.env={ ${env.map(([name, value]) => `${tomlString(name)} = ${tomlString(value)}`).join(', ')} }`,
      );
  }
  return args;
}

export function createCodexDriver(): AgentDriver<CodexProfile> {
  return defineDriver({
    provider: 'codex',
    displayName: 'Codex CLI',
    executable: 'codex',
    installUrl: 'https://github.com/openai/codex',
    assignsSessionId: false,
    declaresMcpServers: true,
    envAllowlist: ['OPENAI_*', 'CODEX_*', 'AZURE_OPENAI_*'],
    // `codex exec` 0.171.0 sends CODEX_API_KEY (not OPENAI_API_KEY, which only `codex login
    // --with-api-key` reads) and takes its base URL from the `openai_base_url` setting, never from
    // OPENAI_BASE_URL: in a sandbox the key proxy holds the key and `--config openai_base_url=…`
    // (before `exec`, so that `exec resume` takes it too) points Codex at the proxy, which
    // forwards to OPENAI_BASE_URL when the operator sets it. A ChatGPT login (auth.json) has no
    // key to hold: it must go inside. Checked against the real CLI (real-cli.test.ts).
    sandbox: {
      homePaths: ['.codex/auth.json', '.codex/config.toml'],
      hosts: ['api.openai.com', 'chatgpt.com'],
      keys: [
        {
          keyEnv: ['OPENAI_API_KEY', 'CODEX_API_KEY'],
          baseUrlEnv: 'OPENAI_BASE_URL',
          defaultBaseUrl: 'https://api.openai.com/v1',
          baseUrlArgs: (url) => ['--config', `openai_base_url=${JSON.stringify(url)}`],
        },
      ],
    },
    unattended: {
      login: { env: ['OPENAI_API_KEY', 'CODEX_API_KEY'], homeFiles: ['.codex/auth.json'] },
      approval: (profile) =>
        profile.sandbox === undefined && !profile.auto_review
          ? {
              key: 'sandbox',
              advice:
                '"workspace-write" (or auto_review = true): without it Codex’s own configuration picks the sandbox and approval policy, and an approval request in an unattended run is refused',
            }
          : undefined,
    },
    invocation(profile, input) {
      const args = ['exec'];
      if (profile.agent) args.push('--profile', profile.agent);
      if (profile.sandbox) args.push('--sandbox', profile.sandbox);
      if (needsWritableGitDirs(profile.sandbox)) {
        for (const dir of codexWritableGitDirs(input.worktree)) args.push('--add-dir', dir);
      }
      if (input.resumeSessionId) args.push('resume', input.resumeSessionId);
      if (profile.model) args.push('--model', profile.model);
      if (profile.effort) args.push('--config', `model_reasoning_effort=${JSON.stringify(profile.effort)}`);
      if (profile.auto_review) {
        args.push(
          '--config',
          `approval_policy=${JSON.stringify('on-request')}`,
          '--config',
          `approvals_reviewer=${JSON.stringify('auto_review')}`,
        );
      }
      if (input.mcpServers) args.push(...codexMcpConfig(input.mcpServers));
      args.push('--json', '--', input.prompt);
      return { args, env: {} };
    },
    // The screening classifier's call (checked against `codex exec --help` of codex-cli 0.171.0).
    // Codex has no switch that removes its shell tool: the call runs it in the read-only sandbox
    // (no writes, no network) with approvals never granted, no MCP server (`mcp_servers` replaced
    // by an empty table), no execpolicy rules, no saved session, outside any git repository.
    classifier(profile, prompt) {
      const args = [
        'exec',
        '--sandbox',
        'read-only',
        '--skip-git-repo-check',
        '--ephemeral',
        '--ignore-rules',
      ];
      args.push('--config', `approval_policy=${JSON.stringify('never')}`, '--config', 'mcp_servers={}');
      if (profile.model) args.push('--model', profile.model);
      args.push('--json', '--', prompt);
      return { args, env: {} };
    },
    limits: CODEX_LIMITS,
    // Codex 0.171: `exec resume <id>` of a thread it has no rollout file for.
    missingSession: [/no rollout found for thread id/i],
    createParser: createCodexParser,
  });
}
