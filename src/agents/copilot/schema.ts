import { z } from 'zod';
import { profileBaseShape } from '../profile-base.js';

const ToolName = z
  .string()
  .min(1)
  .refine((t) => !t.includes(','), 'tool entries may not contain commas');

export const CopilotProfile = z
  .strictObject({
    provider: z.literal('copilot'),
    ...profileBaseShape,
    agent: z.string().min(1).optional().describe('A custom agent (`--agent=`).'),
    effort: z.enum(['low', 'medium', 'high', 'xhigh', 'max']).optional().describe('`--reasoning-effort=`.'),
    allow_all_tools: z.boolean().default(false).describe('`--allow-all-tools`.'),
    allow_all_paths: z
      .boolean()
      .default(false)
      .describe(
        '`--allow-all-paths`: commands may touch paths outside the worktree (without it Copilot CLI asks, and an unattended run refuses them).',
      ),
    allow_tools: z.array(ToolName).default([]).describe('`--allow-tool=a,b`.'),
    deny_tools: z.array(ToolName).default([]).describe('`--deny-tool=c`.'),
  })
  .describe('GitHub Copilot CLI (`copilot --output-format=json`).');
export type CopilotProfile = z.infer<typeof CopilotProfile>;
