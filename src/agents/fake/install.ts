/**
 * Installs the fake agent CLIs: one small executable per provider, named as the real CLI is
 * (`opencode`, `claude`, `codex`, `gemini`, `agent`, `copilot`, `kilo`, `pi`, `qwen`), that runs
 * `fake-agent.mjs` with the current Node. Put `binDir` first on an agent's PATH and curupira
 * drives the fakes exactly as it would drive the real tools.
 */
import { chmodSync, copyFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PROVIDERS, type Provider } from '../schemas.js';

/**
 * Each provider's CLI name (its driver's `executable`; fake-agent.test.ts checks they agree),
 * written here so installing the fakes loads no driver module.
 */
export const FAKE_EXECUTABLES: Readonly<Record<Provider, string>> = {
  opencode: 'opencode',
  claude: 'claude',
  codex: 'codex',
  gemini: 'gemini',
  cursor: 'agent',
  copilot: 'copilot',
  kilo: 'kilo',
  pi: 'pi',
  qwen: 'qwen',
};

export interface InstallFakeAgentsOptions {
  /** Default for FAKE_AGENT_LOG when the agent's environment does not set it. */
  logDir?: string;
}

/** Where the fake CLI script is: beside this module, or (from `dist/` in a checkout) in `src/`. */
export function fakeAgentScript(): string {
  const candidates = [
    fileURLToPath(new URL('./fake-agent.mjs', import.meta.url)),
    fileURLToPath(new URL('../../../src/agents/fake/fake-agent.mjs', import.meta.url)),
  ];
  const found = candidates.find((path) => existsSync(path));
  if (!found) throw new Error(`fake agent script not found; looked in ${candidates.join(', ')}`);
  return found;
}

/** Quotes a value for a POSIX shell: single quotes, with embedded ones closed and escaped. */
export function shellQuote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

/** Writes the wrappers into `binDir` (created if needed); returns provider → wrapper path. */
export function installFakeAgents(
  binDir: string,
  options: InstallFakeAgentsOptions = {},
): Record<Provider, string> {
  mkdirSync(binDir, { recursive: true });
  // A copy beside the wrappers: a sandbox that lets the agent read its CLI's folder reads it all.
  const script = join(binDir, 'fake-agent.mjs');
  copyFileSync(fakeAgentScript(), script);
  const paths = {} as Record<Provider, string>;
  for (const provider of PROVIDERS) {
    const path = join(binDir, FAKE_EXECUTABLES[provider]);
    const lines = ['#!/bin/sh'];
    if (options.logDir) {
      lines.push(
        `if [ -z "\${FAKE_AGENT_LOG:-}" ]; then FAKE_AGENT_LOG=${shellQuote(options.logDir)}; export FAKE_AGENT_LOG; fi`,
      );
    }
    lines.push(`exec ${shellQuote(process.execPath)} ${shellQuote(script)} ${provider} "$@"`, '');
    writeFileSync(path, lines.join('\n'));
    chmodSync(path, 0o755);
    paths[provider] = path;
  }
  return paths;
}
