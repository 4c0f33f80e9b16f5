import { z } from 'zod';
import { profileBaseShape } from '../profile-base.js';

export const CodexProfile = z
  .strictObject({
    provider: z.literal('codex'),
    ...profileBaseShape,
    agent: z.string().min(1).optional().describe('A Codex configuration profile (`--profile`).'),
    effort: z
      .enum(['low', 'medium', 'high', 'xhigh', 'max', 'ultra'])
      .optional()
      .describe('Reasoning effort (`--config model_reasoning_effort="…"`).'),
    sandbox: z
      .enum(['read-only', 'workspace-write', 'danger-full-access'])
      .optional()
      .describe(
        '`--sandbox`. With `workspace-write`, or with no `sandbox` (Codex’s own configuration then picks it), the worktree’s git directories are made writable (`--add-dir`), so that the agent can commit.',
      ),
    auto_review: z
      .boolean()
      .default(false)
      .describe('Let Codex review approval requests itself; requires the workspace-write sandbox.'),
  })
  .refine((p) => !p.auto_review || p.sandbox === undefined || p.sandbox === 'workspace-write', {
    message: 'Codex auto_review requires the workspace-write sandbox',
    path: ['auto_review'],
  })
  .describe('Codex CLI (`codex exec --json`).');
export type CodexProfile = z.infer<typeof CodexProfile>;
