/**
 * The classifier contract shared by the screening wiring (src/engine/, src/screening/item.ts) and
 * the classifier runners (src/screening/classifier/). A classifier gives every text a score from 0
 * (benign) to 1 (injection); the policy compares the highest score with a threshold.
 */

import type { Profile } from '../../agents/schemas.js';

export { ClassifierError, type ClassifierFailureKind } from '../../core/errors.js';

export interface ClassifyOptions {
  /** Abort when the engine stops. */
  signal?: AbortSignal;
  /** The classifier must answer within this many milliseconds, else `ClassifierError('timeout')`. */
  timeoutMs: number;
}

export interface Classifier {
  /** One line for logs, doctor and run records, e.g. `command python3 guard.py` or `prompt-guard /models/pg`. */
  readonly description: string;
  /** One score in [0, 1] per text, in order. Throws `ClassifierError` on any failure. */
  classify(texts: readonly string[], options: ClassifyOptions): Promise<number[]>;
}

/** The classifier part of `[settings.screening]`, after defaults are applied. */
export interface ClassifierSettings {
  /** `classifier_command`: argv of a program that reads `{"texts": [...]}` on stdin and answers `{"scores": [...]}`. */
  command?: readonly string[];
  /** `classifier_model`: a directory holding a Prompt Guard–format ONNX model and its `tokenizer.json`. */
  modelDir?: string;
  /** `classifier_agent`, resolved to the profile it names (the automation's own for `true`). */
  agent?: { profileName: string; profile?: Profile };
  /** `classifier_timeout` in seconds. */
  timeoutSeconds: number;
  /** `classifier_threshold`: a score at or above this blocks (default 0.8). */
  threshold: number;
}
