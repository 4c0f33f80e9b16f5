/**
 * The classifier factory. PLACEHOLDER until the runners land (another change of issue 11 replaces
 * this file): nothing configured → null (the wiring blocks or warns, as `required` says); something
 * configured → a classifier that always fails as `missing`, so a required screen blocks visibly
 * instead of letting text through unclassified.
 */
import { type Classifier, ClassifierError, type ClassifierSettings } from './types.js';

export type { Classifier, ClassifierSettings } from './types.js';
export { ClassifierError } from './types.js';

export function createClassifier(settings: ClassifierSettings): Classifier | null {
  const configured = settings.command
    ? `command ${settings.command.join(' ')}`
    : settings.modelDir
      ? `prompt-guard ${settings.modelDir}`
      : undefined;
  if (configured === undefined) return null;
  return {
    description: configured,
    classify: () =>
      Promise.reject(
        new ClassifierError('missing', `${configured}: this build of curupira has no classifier runner`),
      ),
  };
}
