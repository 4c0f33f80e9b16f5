/**
 * Every provider's profile schema, by provider name. Adding a provider: a folder with `schema.ts`
 * and `index.ts`, one line here and one line in `registry.ts`.
 */
import type { z } from 'zod';
import { ClaudeProfile } from './claude/schema.js';
import { CodexProfile } from './codex/schema.js';
import { CopilotProfile } from './copilot/schema.js';
import { CursorProfile } from './cursor/schema.js';
import { GeminiProfile } from './gemini/schema.js';
import { KiloProfile } from './kilo/schema.js';
import { OpenCodeProfile } from './opencode/schema.js';
import { PiProfile } from './pi/schema.js';
import { QwenProfile } from './qwen/schema.js';

export const PROFILE_SCHEMAS = {
  opencode: OpenCodeProfile,
  claude: ClaudeProfile,
  codex: CodexProfile,
  gemini: GeminiProfile,
  cursor: CursorProfile,
  copilot: CopilotProfile,
  kilo: KiloProfile,
  pi: PiProfile,
  qwen: QwenProfile,
} as const;

export type Provider = keyof typeof PROFILE_SCHEMAS;
export const PROVIDERS = Object.keys(PROFILE_SCHEMAS) as Provider[];

export type Profile =
  | OpenCodeProfile
  | ClaudeProfile
  | CodexProfile
  | GeminiProfile
  | CursorProfile
  | CopilotProfile
  | KiloProfile
  | PiProfile
  | QwenProfile;

export type ProfileOf<P extends Provider> = z.infer<(typeof PROFILE_SCHEMAS)[P]>;

export function isProvider(value: unknown): value is Provider {
  return typeof value === 'string' && Object.hasOwn(PROFILE_SCHEMAS, value);
}
