/**
 * Classifier runners for screening: `classifier_command` (a program speaking JSON on stdin and
 * stdout) and `classifier_model` (a local Prompt Guard model through onnxruntime-node).
 */
import { createCommandClassifier } from './command.js';
import { createPromptGuardClassifier } from './prompt-guard.js';
import type { Classifier, ClassifierSettings } from './types.js';

export { createCommandClassifier, parseScores } from './command.js';
export { FIX_HINT } from './messages.js';
export { createPromptGuardClassifier, maliciousScore, OVERLAP, WINDOW, windows } from './prompt-guard.js';
export type { Classifier, ClassifierFailureKind, ClassifierSettings, ClassifyOptions } from './types.js';
export { ClassifierError } from './types.js';
export { loadTokenizer, type Tokenizer, TokenizerFormatError } from './unigram.js';

/**
 * The classifier the settings name, or null when neither `classifier_command` nor
 * `classifier_model` is set. When both are set the command is used. Nothing is started or loaded
 * here: a missing program or model is reported by the first `classify` call, as a
 * `ClassifierError('missing')`.
 */
export function createClassifier(settings: ClassifierSettings): Classifier | null {
  if (settings.command && settings.command.length > 0) return createCommandClassifier(settings.command);
  if (settings.modelDir) return createPromptGuardClassifier(settings.modelDir);
  return null;
}
