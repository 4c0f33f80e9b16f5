/**
 * `createClassifier` without its runners: the runner's module (`command.ts` or `prompt-guard.ts`,
 * and what they import) loads with the first `classify` call, so a daemon that has screened
 * nothing yet holds none of it. `index.ts` re-exports this; the engine imports it from here.
 */
import { resolve } from 'node:path';
import type { Classifier, ClassifierSettings, ClassifyOptions } from './types.js';

/**
 * The classifier the settings name, or null when neither `classifier_command` nor
 * `classifier_model` is set. When both are set the command is used. Nothing is started or loaded
 * here: a missing program or model is reported by the first `classify` call, as a
 * `ClassifierError('missing')`.
 */
export function createClassifier(settings: ClassifierSettings, env?: NodeJS.ProcessEnv): Classifier | null {
  const { command, modelDir } = settings;
  // The order: `classifier_command`, then `classifier_model`, then `classifier_agent`.
  if (command && command.length > 0)
    return deferred(`command ${command.join(' ')}`, async () =>
      (await import('./command.js')).createCommandClassifier(command),
    );
  if (!modelDir && settings.agent) {
    const { profileName, profile } = settings.agent;
    if (!profile) return unknownProfile(profileName);
    return deferred(`agent ${profileName} (${profile.provider})`, async () =>
      (await import('./agent.js')).createAgentClassifier({ profileName, profile, ...(env ? { env } : {}) }),
    );
  }
  if (modelDir) {
    // Resolved now, as the runner itself would when built here (before any change of folder).
    const dir = resolve(modelDir);
    return deferred(`prompt-guard ${dir}`, async () =>
      (await import('./prompt-guard.js')).createPromptGuardClassifier(dir),
    );
  }
  return null;
}

/** `classifier_agent` names a profile the file does not have: every call fails as missing. */
function unknownProfile(name: string): Classifier {
  return {
    description: `agent ${name}`,
    async classify(): Promise<number[]> {
      // Loaded here, as the runners are: an idle daemon holds none of the classifier modules.
      const [{ withHint }, { ClassifierError }] = await Promise.all([
        import('./messages.js'),
        import('./types.js'),
      ]);
      throw new ClassifierError(
        'missing',
        withHint(`\`classifier_agent\` names the profile \`${name}\`, which is not in [agents.profiles]`),
      );
    },
  };
}

/** A classifier whose runner is built once, on the first `classify`; `description` is the runner's. */
function deferred(description: string, build: () => Promise<Classifier>): Classifier {
  let runner: Promise<Classifier> | undefined;
  return {
    description,
    async classify(texts: readonly string[], options: ClassifyOptions): Promise<number[]> {
      runner ??= build();
      return (await runner).classify(texts, options);
    },
  };
}
