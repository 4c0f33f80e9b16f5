/**
 * Provider name → driver factory. Adding a provider: a folder with `schema.ts` and `index.ts`,
 * one line in `schemas.ts` and one line here.
 *
 * A driver's module is loaded when it is first needed (`loadDriver`), so an idle daemon holds only
 * the drivers its runs used. `getDriver` is the synchronous form for code that runs after a load
 * (parsing a transcript of a run this process started, the board); it throws when not loaded.
 */
import { CurupiraError } from '../core/errors.js';
import { isProvider, PROVIDERS, type ProfileOf, type Provider } from './schemas.js';
import type { AgentDriver } from './types.js';

type Factory<P extends Provider> = () => AgentDriver<ProfileOf<P>>;

export const DRIVER_MODULES: { readonly [P in Provider]: () => Promise<Factory<P>> } = {
  opencode: async () => (await import('./opencode/index.js')).createOpenCodeDriver,
  claude: async () => (await import('./claude/index.js')).createClaudeDriver,
  codex: async () => (await import('./codex/index.js')).createCodexDriver,
  gemini: async () => (await import('./gemini/index.js')).createGeminiDriver,
  cursor: async () => (await import('./cursor/index.js')).createCursorDriver,
  copilot: async () => (await import('./copilot/index.js')).createCopilotDriver,
  kilo: async () => (await import('./kilo/index.js')).createKiloDriver,
  pi: async () => (await import('./pi/index.js')).createPiDriver,
  qwen: async () => (await import('./qwen/index.js')).createQwenDriver,
};

/**
 * The providers whose driver has a tool-free classifier call (`classifierInvocation`), for code
 * that must know without loading the drivers (`curupira doctor`); registry.test.ts keeps it true.
 */
export const CLASSIFIER_PROVIDERS: readonly Provider[] = ['claude', 'codex', 'gemini', 'opencode', 'kilo'];

const loaded = new Map<Provider, () => AgentDriver>();

function provider(name: string): Provider {
  if (!isProvider(name)) throw new CurupiraError('config', `unknown coding agent provider: ${name}`);
  return name;
}

/** A new driver for `provider`, loading its module on first use; rejects unknown providers. */
export async function loadDriver<P extends Provider>(name: P): Promise<AgentDriver<ProfileOf<P>>>;
export async function loadDriver(name: string): Promise<AgentDriver>;
export async function loadDriver(name: string): Promise<AgentDriver> {
  const p = provider(name);
  if (!loaded.has(p)) loaded.set(p, (await DRIVER_MODULES[p]()) as () => AgentDriver);
  return getDriver(p);
}

/** Loads the drivers of `providers` (unknown names are skipped), or of every provider. */
export async function loadDrivers(providers: Iterable<string | null | undefined> = PROVIDERS): Promise<void> {
  const known = [...new Set(providers)].filter((p): p is Provider => typeof p === 'string' && isProvider(p));
  await Promise.all(known.map((p) => loadDriver(p)));
}

/**
 * A new driver for a provider whose module is loaded; throws `unknown coding agent provider: <p>`
 * for anything else, and a plain error when the module was not loaded yet.
 */
export function getDriver<P extends Provider>(name: P): AgentDriver<ProfileOf<P>>;
export function getDriver(name: string): AgentDriver;
export function getDriver(name: string): AgentDriver {
  const factory = loaded.get(provider(name));
  if (!factory) throw new Error(`agent driver ${name} used before loadDriver`);
  return factory();
}

/** One new driver per provider, in registry order (loads them all). */
export async function listDrivers(): Promise<AgentDriver[]> {
  await loadDrivers();
  return PROVIDERS.map((p) => getDriver(p));
}
