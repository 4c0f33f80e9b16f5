/**
 * Provider name → driver factory. Adding a provider: a folder with `schema.ts` and `index.ts`,
 * one line in `schemas.ts` and one line here.
 */
import { CurupiraError } from '../core/errors.js';
import { createClaudeDriver } from './claude/index.js';
import { createCodexDriver } from './codex/index.js';
import { createCopilotDriver } from './copilot/index.js';
import { createCursorDriver } from './cursor/index.js';
import { createGeminiDriver } from './gemini/index.js';
import { createKiloDriver } from './kilo/index.js';
import { createOpenCodeDriver } from './opencode/index.js';
import { createPiDriver } from './pi/index.js';
import { createQwenDriver } from './qwen/index.js';
import { isProvider, PROVIDERS, type ProfileOf, type Provider } from './schemas.js';
import type { AgentDriver } from './types.js';

export const DRIVER_FACTORIES: { readonly [P in Provider]: () => AgentDriver<ProfileOf<P>> } = {
  opencode: createOpenCodeDriver,
  claude: createClaudeDriver,
  codex: createCodexDriver,
  gemini: createGeminiDriver,
  cursor: createCursorDriver,
  copilot: createCopilotDriver,
  kilo: createKiloDriver,
  pi: createPiDriver,
  qwen: createQwenDriver,
};

/** A new driver for `provider`; throws `unknown coding agent provider: <p>` for anything else. */
export function getDriver<P extends Provider>(provider: P): AgentDriver<ProfileOf<P>>;
export function getDriver(provider: string): AgentDriver;
export function getDriver(provider: string): AgentDriver {
  if (!isProvider(provider)) throw new CurupiraError('config', `unknown coding agent provider: ${provider}`);
  return DRIVER_FACTORIES[provider]() as AgentDriver;
}

/** One new driver per provider, in registry order. */
export function listDrivers(): AgentDriver[] {
  return PROVIDERS.map((provider) => getDriver(provider));
}
