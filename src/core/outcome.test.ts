import { describe, expect, it } from 'vitest';
import {
  GitHubRateLimitError,
  GitHubRequestError,
  GitHubTransientError,
  PromptRenderError,
  WorkspaceError,
} from '../core/errors.js';
import { ClassifierError } from '../screening/classifier/types.js';
import { agentOutcome, classifyFailure, nextPollAfterFailure, runStatusFor } from './outcome.js';

describe('the outcome map', () => {
  it('a stop cancels, whatever failed', () => {
    for (const stage of ['discovery', 'prompt', 'checkout', 'launch'] as const) {
      expect(classifyFailure(new WorkspaceError('x'), { stage, stopping: true })).toEqual({
        action: 'cancel',
      });
    }
    expect(runStatusFor({ action: 'cancel' })).toBe('cancelled');
  });

  it('a poll past a rate limit with a reset is parked until then; other poll failures retry', () => {
    const resetAt = new Date(Date.UTC(2026, 0, 1, 1));
    expect(classifyFailure(new GitHubRateLimitError('limit', { resetAt }), { stage: 'discovery' })).toEqual({
      action: 'park',
      until: resetAt,
    });
    expect(classifyFailure(new GitHubRateLimitError('limit'), { stage: 'discovery' })).toEqual({
      action: 'retry',
    });
    expect(classifyFailure(new GitHubTransientError('502'), { stage: 'discovery' })).toEqual({
      action: 'retry',
    });
    expect(classifyFailure(new GitHubRequestError('422'), { stage: 'discovery' })).toEqual({
      action: 'retry',
    });
  });

  it('a parked feed is polled no sooner than the reset, a retried one after its backoff', () => {
    const until = new Date(10_000);
    expect(nextPollAfterFailure({ action: 'park', until }, 4_000)).toBe(10_000);
    expect(nextPollAfterFailure({ action: 'park', until }, 12_000)).toBe(12_000);
    expect(nextPollAfterFailure({ action: 'retry' }, 4_000)).toBe(4_000);
  });

  it('a prompt that does not render blocks the item; other step failures fail the run', () => {
    expect(classifyFailure(new PromptRenderError('bad'), { stage: 'prompt' })).toEqual({ action: 'block' });
    expect(classifyFailure(new Error('odd'), { stage: 'prompt' })).toEqual({ action: 'fail' });
    expect(classifyFailure(new WorkspaceError('no clone'), { stage: 'checkout' })).toEqual({
      action: 'fail',
    });
    expect(classifyFailure(new Error('ENOENT'), { stage: 'launch' })).toEqual({ action: 'fail' });
    expect(runStatusFor({ action: 'block' })).toBe('failed');
    expect(runStatusFor({ action: 'fail' })).toBe('failed');
  });

  it('a classifier that cannot answer blocks the item (a `blocked` run); reading the item for screening fails', () => {
    for (const kind of ['missing', 'failed', 'timeout'] as const) {
      expect(classifyFailure(new ClassifierError(kind, 'x'), { stage: 'screening' })).toEqual({
        action: 'blocked',
      });
    }
    expect(classifyFailure(new GitHubTransientError('502'), { stage: 'screening' })).toEqual({
      action: 'fail',
    });
    expect(classifyFailure(new ClassifierError('failed', 'x'), { stage: 'prompt' })).toEqual({
      action: 'fail',
    });
    expect(runStatusFor({ action: 'blocked' })).toBe('blocked');
  });
});

describe("an agent's exit after a cancel", () => {
  const cancelled = {
    executable: 'claude',
    exitCode: null,
    signal: 'SIGTERM',
    cancelled: true,
    timedOut: false,
    stderrTail: '',
    stalled: false,
    stallMs: 600_000,
    timeoutMs: 3_600_000,
    stopping: true,
    reported: false,
    doneWithError: false,
    knownSession: true,
    parkUntil: 0,
  };

  it('curupira stopping: the session resumes on the next start', () => {
    expect(agentOutcome(cancelled)).toEqual({
      status: 'cancelled',
      reason: 'stopped by curupira while the agent ran; the session resumes on the next start',
    });
  });

  it('this run alone cancelled (an operator, its item unmatched): the session is kept, no resume promised', () => {
    expect(agentOutcome({ ...cancelled, cancelledAlone: true })).toEqual({
      status: 'cancelled',
      reason: 'cancelled while the agent ran; its session is kept',
    });
    expect(agentOutcome({ ...cancelled, cancelledAlone: true, knownSession: false }).reason).toBe(
      'cancelled while the agent ran',
    );
  });
});
