import { z } from 'zod';
import { profileBaseShape } from '../profile-base.js';

export const KiloProfile = z
  .strictObject({
    provider: z.literal('kilo'),
    ...profileBaseShape,
    agent: z.string().min(1).optional().describe('A configured Kilo agent (`--agent`).'),
    effort: z.string().min(1).optional().describe('Model variant / reasoning effort (`--variant`).'),
    auto_approve: z.boolean().default(false).describe('Run without approval prompts (`--auto`).'),
  })
  .describe('Kilo Code CLI (`kilo run --format json`).');
export type KiloProfile = z.infer<typeof KiloProfile>;
