import { z } from 'zod';
import { profileBaseShape } from '../profile-base.js';

export const ClaudeProfile = z
  .strictObject({
    provider: z.literal('claude'),
    ...profileBaseShape,
    agent: z.string().min(1).optional().describe('A configured Claude Code agent (`--agent`).'),
    effort: z.enum(['low', 'medium', 'high', 'xhigh', 'max', 'ultracode']).optional().describe('`--effort`.'),
    permission_mode: z
      .enum(['default', 'acceptEdits', 'plan', 'auto', 'dontAsk', 'bypassPermissions'])
      .optional()
      .describe('`--permission-mode`.'),
    mcp_config: z
      .array(z.string().min(1))
      .default([])
      .describe(
        'The MCP servers the agent may load: files (or JSON strings) in Claude Code’s `--mcp-config` format. Curupira always passes `--strict-mcp-config`, so the servers a repository declares (`.mcp.json`) or your user settings hold are not loaded in an unattended run; only these are. Default: none (curupira extension).',
      ),
    permission_prompts: z
      .enum(['host', 'none'])
      .optional()
      .describe(
        '`--permission-prompts`, as the reference passes it. Claude Code 2.1 has no such option and refuses to start; `curupira doctor` says so.',
      ),
  })
  .describe(
    'Claude Code (`claude -p --output-format stream-json`). Run as root, Claude Code refuses `permission_mode = "bypassPermissions"` unless `IS_SANDBOX=1` is in its environment; set it where a container or VM is the sandbox, and curupira passes it through.',
  );
export type ClaudeProfile = z.infer<typeof ClaudeProfile>;
