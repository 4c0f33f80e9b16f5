import { z } from 'zod';
import { profileBaseShape } from '../profile-base.js';

export const CursorProfile = z
  .strictObject({
    provider: z.literal('cursor'),
    ...profileBaseShape,
    model: z.string().trim().min(1).optional().describe('Model, or `auto`.'),
    agent: z.enum(['agent', 'ask', 'plan']).optional().describe('Cursor mode (`--mode`).'),
    force: z.boolean().default(false).describe('`--force`: allow commands without asking.'),
    trust: z.boolean().default(false).describe('`--trust`: trust the workspace.'),
  })
  .describe('Cursor agent CLI (`agent --print --output-format stream-json`).');
export type CursorProfile = z.infer<typeof CursorProfile>;
