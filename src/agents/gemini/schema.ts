import { z } from 'zod';
import { profileBaseShape } from '../profile-base.js';

export const GeminiProfile = z
  .strictObject({
    provider: z.literal('gemini'),
    ...profileBaseShape,
    model: z.string().trim().min(1).optional().describe('Model, or `auto`.'),
    approval_mode: z.enum(['default', 'auto_edit', 'yolo', 'plan']).optional().describe('`--approval-mode`.'),
    skip_trust: z.boolean().default(false).describe('`--skip-trust`.'),
  })
  .describe('Gemini CLI (`gemini --output-format stream-json`).');
export type GeminiProfile = z.infer<typeof GeminiProfile>;
