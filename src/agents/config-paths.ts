/**
 * The files a coding-agent CLI reads from the repository it works in as instructions or
 * configuration (and so files a stranger's pull request could use to steer the agent), and the
 * files that configure CI. Paths are relative to the repository root, `/`-separated.
 *
 * Per provider, what it reads from a project (from each CLI's documentation):
 * - Claude Code: `CLAUDE.md` and `CLAUDE.local.md` (any folder), `.claude/` (settings, hooks,
 *   agents, commands, skills), `.mcp.json`;
 * - Codex: `AGENTS.md` and `AGENTS.override.md` (any folder), `.codex/`;
 * - Gemini CLI: `GEMINI.md` (any folder), `.gemini/` (settings with MCP servers, commands),
 *   `.geminiignore`;
 * - OpenCode and Kilo: `AGENTS.md`, `opencode.json`/`opencode.jsonc`, `.opencode/`, `.kilocode/`,
 *   `.kilocodemodes`, `.kilocoderules`, `kilo.json`/`kilo.jsonc`;
 * - Cursor agent: `.cursor/` (rules, MCP), `.cursorrules`, `.cursorignore`, `AGENTS.md`;
 * - Copilot CLI: `.github/copilot-instructions.md`, `.github/instructions/`, `.github/agents/`,
 *   `.github/prompts/`, `.github/chatmodes/`, `.vscode/mcp.json`, `.github/mcp.json`, `AGENTS.md`;
 * - pi: `.pi/`, `AGENTS.md`, `SYSTEM.md`;
 * - Qwen Code: `QWEN.md` (any folder), `.qwen/`;
 * - shared conventions: `AGENT.md`, `.agents/` (skills), `.agent/`.
 */

/** Instruction files read from any folder of the repository, by name. */
const AGENT_FILE_NAMES = new Set([
  'AGENTS.md',
  'AGENTS.override.md',
  'AGENT.md',
  'CLAUDE.md',
  'CLAUDE.local.md',
  'GEMINI.md',
  'QWEN.md',
]);

/** Files and folders (ending in `/`) read from the repository root. */
const AGENT_ROOT_PATHS = [
  '.claude/',
  '.mcp.json',
  '.codex/',
  '.gemini/',
  '.geminiignore',
  'opencode.json',
  'opencode.jsonc',
  '.opencode/',
  '.kilocode/',
  '.kilocodemodes',
  '.kilocoderules',
  'kilo.json',
  'kilo.jsonc',
  '.cursor/',
  '.cursorrules',
  '.cursorignore',
  '.github/copilot-instructions.md',
  '.github/instructions/',
  '.github/agents/',
  '.github/prompts/',
  '.github/chatmodes/',
  '.github/mcp.json',
  '.vscode/mcp.json',
  '.pi/',
  'SYSTEM.md',
  '.qwen/',
  '.agents/',
  '.agent/',
];

/** CI and repository automation: what runs with the repository's secrets when a branch is pushed. */
const CI_ROOT_PATHS = [
  '.github/workflows/',
  '.github/actions/',
  '.github/dependabot.yml',
  '.github/dependabot.yaml',
  '.gitlab-ci.yml',
  '.circleci/',
  '.buildkite/',
  '.travis.yml',
  'azure-pipelines.yml',
  'Jenkinsfile',
  '.devcontainer/',
  '.pre-commit-config.yaml',
  '.husky/',
];

function underAny(path: string, roots: readonly string[]): boolean {
  return roots.some((root) => (root.endsWith('/') ? path.startsWith(root) : path === root));
}

/** True for a file an agent CLI reads as instructions or configuration. */
export function isAgentConfigPath(path: string): boolean {
  const name = path.slice(path.lastIndexOf('/') + 1);
  return AGENT_FILE_NAMES.has(name) || underAny(path, AGENT_ROOT_PATHS);
}

/** True for a CI or repository-automation file. */
export function isCiConfigPath(path: string): boolean {
  return underAny(path, CI_ROOT_PATHS);
}

/** `agent`, `ci`, or undefined for any other file. */
export function configKind(path: string): 'agent' | 'ci' | undefined {
  if (isAgentConfigPath(path)) return 'agent';
  if (isCiConfigPath(path)) return 'ci';
  return undefined;
}
