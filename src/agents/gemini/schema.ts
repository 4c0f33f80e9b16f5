import { z } from 'zod';
import { profileBaseShape } from '../profile-base.js';

export const GeminiProfile = z
  .strictObject({
    provider: z.literal('gemini'),
    ...profileBaseShape,
    model: z.string().trim().min(1).optional().describe('Model, or `auto`.'),
    approval_mode: z.enum(['default', 'auto_edit', 'yolo', 'plan']).optional().describe('`--approval-mode`.'),
    skip_trust: z.boolean().default(false).describe('`--skip-trust`.'),
    mcp_servers: z
      .array(z.string().min(1))
      .default([])
      .describe(
        'The names of the MCP servers (from your Gemini settings) the agent may load: passed as `--allowed-mcp-server-names`, so servers a repository declares (`.gemini/settings.json`) are not loaded unless named here. Default: none (curupira extension).',
      ),
  })
  .describe('Gemini CLI (`gemini --output-format stream-json`).');
export type GeminiProfile = z.infer<typeof GeminiProfile>;
