/**
 * Performs one run (src/engine/run/): the pipeline of its steps, its completion, and the finish of
 * a run a restart found with its agent already exited. This module is the run's public face.
 */
export { completeRun, finishInterruptedRun } from './run/complete.js';
export { isRemediation, oneLineReason, reportedInTranscript } from './run/helpers.js';
export { executeTask } from './run/pipeline.js';
export {
  type Claim,
  type ExecutorDeps,
  type PreviousAttempt,
  previousAttemptNote,
  RESUME_SESSION_PROMPT,
  type RemediationRun,
  type RunRequest,
  type SelfCommand,
} from './run/types.js';
