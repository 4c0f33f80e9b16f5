/**
 * Classifier runners for screening: `classifier_command` (a program speaking JSON on stdin and
 * stdout) and `classifier_model` (a local Prompt Guard model through onnxruntime-node).
 */
export {
  answerOf,
  CLASSIFIER_INSTRUCTION,
  classifierPrompt,
  createAgentClassifier,
  parseVerdict,
} from './agent.js';
export { createCommandClassifier, parseScores } from './command.js';
export { createClassifier } from './lazy.js';
export { FIX_HINT } from './messages.js';
export { createPromptGuardClassifier, maliciousScore, OVERLAP, WINDOW, windows } from './prompt-guard.js';
export type { Classifier, ClassifierFailureKind, ClassifierSettings, ClassifyOptions } from './types.js';
export { ClassifierError } from './types.js';
export { loadTokenizer, type Tokenizer, TokenizerFormatError } from './unigram.js';
