import { z } from 'zod';
import { profileBaseShape } from '../profile-base.js';

export const PiProfile = z
  .strictObject({
    provider: z.literal('pi'),
    ...profileBaseShape,
    model_provider: z.string().min(1).optional().describe('`--provider`; requires `model`.'),
    effort: z
      .enum(['off', 'minimal', 'low', 'medium', 'high', 'xhigh', 'max'])
      .optional()
      .describe('`--thinking`.'),
    tools: z.array(z.string().min(1)).default([]).describe('`--tools a,b`.'),
    exclude_tools: z.array(z.string().min(1)).default([]).describe('`--exclude-tools c,d`.'),
    approve: z.boolean().optional().describe('`--approve` when true, `--no-approve` when false.'),
  })
  .refine((p) => p.model_provider === undefined || p.model !== undefined, {
    message: 'model_provider requires model',
    path: ['model_provider'],
  })
  .describe('pi coding agent (`pi --mode json`).');
export type PiProfile = z.infer<typeof PiProfile>;
