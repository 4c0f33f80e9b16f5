import { z } from 'zod';
import { profileBaseShape } from '../profile-base.js';

export const QwenProfile = z
  .strictObject({
    provider: z.literal('qwen'),
    ...profileBaseShape,
    approval_mode: z
      .enum(['plan', 'default', 'auto-edit', 'auto', 'yolo'])
      .optional()
      .describe(
        '`--approval-mode` (`auto` needs Qwen Code 0.24 or later, which needs Node.js 22; 0.15 refuses it).',
      ),
    max_session_turns: z.number().int().min(1).optional().describe('`--max-session-turns`.'),
  })
  .describe('Qwen Code (`qwen --output-format stream-json`).');
export type QwenProfile = z.infer<typeof QwenProfile>;
