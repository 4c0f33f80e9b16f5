import { z } from 'zod';
import { profileBaseShape } from '../profile-base.js';

export const OpenCodeProfile = z
  .strictObject({
    provider: z.literal('opencode'),
    ...profileBaseShape,
    model: z
      .string()
      .regex(/^[^/\s]+\/\S+$/, 'OpenCode model must use the provider/model format')
      .optional()
      .describe('Model as `provider/model`, e.g. `anthropic/claude-sonnet-4-5`.'),
    agent: z.string().min(1).optional().describe('A configured OpenCode agent (`--agent`).'),
    effort: z.string().min(1).optional().describe('Model variant / reasoning effort (`--variant`).'),
    auto_approve: z.boolean().default(false).describe('Run without approval prompts (`--auto`).'),
  })
  .describe('OpenCode (`opencode run --format json`).');
export type OpenCodeProfile = z.infer<typeof OpenCodeProfile>;
