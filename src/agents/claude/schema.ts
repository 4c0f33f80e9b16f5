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
    permission_prompts: z.enum(['host', 'none']).optional().describe('`--permission-prompts`.'),
  })
  .describe('Claude Code (`claude -p --output-format stream-json`).');
export type ClaudeProfile = z.infer<typeof ClaudeProfile>;
