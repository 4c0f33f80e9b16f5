/**
 * Which sandbox a run gets: the automation's `sandbox`, else its profile's `sandbox_mode`, else
 * `[settings] sandbox`, else the default: `auto` where the trigger hands the agent text strangers
 * write (its `untrustedFields`: a chain's upstream title and summary count), `none` where it does
 * not (a schedule).
 */
import type { ExecutionSettings, ResolvedAutomation } from '../config/types.js';
import type { SandboxChoice } from './index.js';
import type { SandboxLimits } from './types.js';

export function sandboxChoice(
  automation: Pick<ResolvedAutomation, 'config' | 'profile' | 'trigger'>,
  execution: Pick<ExecutionSettings, 'sandbox'>,
): SandboxChoice {
  const own = automation.config.sandbox;
  if (own) return { mode: own, source: 'the automation' };
  const profile = automation.profile.sandbox_mode;
  if (profile) return { mode: profile, source: 'the profile' };
  if (execution.sandbox) return { mode: execution.sandbox, source: '[settings] sandbox' };
  return automation.trigger.untrustedFields.length > 0
    ? { mode: 'auto', source: 'the default for text strangers write' }
    : { mode: 'none', source: 'the default for a trigger without untrusted text' };
}

export function sandboxLimits(
  execution: Pick<ExecutionSettings, 'sandbox_memory_mb' | 'sandbox_max_processes'>,
): SandboxLimits {
  return { memoryMb: execution.sandbox_memory_mb, maxProcesses: execution.sandbox_max_processes };
}

/** GitHub's hosts for a profile given the token: the API host of `[settings.github]`, and github.com. */
export function githubHosts(apiUrl: string): string[] {
  const hosts = new Set(['github.com', 'api.github.com', 'codeload.github.com']);
  try {
    const url = new URL(apiUrl);
    hosts.add(
      url.port
        ? `${url.hostname}:${url.port}`
        : url.protocol === 'http:'
          ? `${url.hostname}:80`
          : url.hostname,
    );
  } catch {
    // validated by the schema
  }
  return [...hosts];
}
