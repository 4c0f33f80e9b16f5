import { describe, expect, it } from 'vitest';
import { type AgentExit, agentOutcome, reportedOutcome } from './outcome.js';
import { outcomeSet, parseResultLine } from './result-line.js';

const SET = outcomeSet(['ready-for-agent', 'needs-info', 'duplicate']);

describe('the result line', () => {
  it('reads the seed’s four forms, with or without the item number', () => {
    expect(parseResultLine('Triaged.\n\n#31 ready-for-agent', SET)).toEqual({
      kind: 'result',
      result: { outcome: 'ready-for-agent', reason: null, item: 31, via: 'line' },
    });
    expect(parseResultLine('#35 skipped: leased', SET)).toEqual({
      kind: 'result',
      result: { outcome: 'skipped', reason: 'leased', item: 35, via: 'line' },
    });
    expect(parseResultLine('noop: nothing to do', SET)).toEqual({
      kind: 'result',
      result: { outcome: 'noop', reason: 'nothing to do', via: 'line' },
    });
    expect(parseResultLine('#44 failed: could not read ADR link (404)', SET)).toEqual({
      kind: 'result',
      result: { outcome: 'failed', reason: 'could not read ADR link (404)', item: 44, via: 'line' },
    });
  });

  it('takes the last result line, unwrapped from backticks or bold, and skips prose after it', () => {
    const text = '#1 needs-info\nthen I looked again\n`#1 duplicate: same as #12`\n\nThanks!';
    expect(parseResultLine(text, SET)).toEqual({
      kind: 'result',
      result: { outcome: 'duplicate', reason: 'same as #12', item: 1, via: 'line' },
    });
    expect(parseResultLine('**#2 ready-for-agent**', SET)).toMatchObject({
      result: { outcome: 'ready-for-agent', item: 2 },
    });
  });

  it('names a `#N word` outside the set; prose without a result line is none', () => {
    expect(parseResultLine('#3 wontfix', SET)).toEqual({
      kind: 'undeclared',
      outcome: 'wontfix',
      line: '#3 wontfix',
    });
    expect(parseResultLine('All done, the issue looks fine.\nbye', SET)).toEqual({ kind: 'none' });
    expect(parseResultLine('', SET)).toEqual({ kind: 'none' });
  });
});

describe('the outcome map for reported results', () => {
  const ok = { status: 'succeeded' as const, reason: null };
  const line = (text: string) => parseResultLine(text, SET);

  it('a declared outcome succeeds and is kept; noop and skipped are statuses of their own', () => {
    expect(reportedOutcome(ok, ['ready-for-agent'], line('#1 ready-for-agent'))).toEqual({
      status: 'succeeded',
      reason: null,
      result: { outcome: 'ready-for-agent', reason: null, item: 1, via: 'line' },
    });
    expect(reportedOutcome(ok, [], line('#1 noop: already fixed on main'))).toMatchObject({
      status: 'noop',
      reason: 'noop: already fixed on main',
    });
    expect(reportedOutcome(ok, [], line('skipped: leased'))).toMatchObject({
      status: 'skipped',
      reason: 'skipped: leased',
    });
    expect(reportedOutcome(ok, [], line('failed: tests do not build'))).toMatchObject({
      status: 'failed',
      reason: 'the agent reported failed: tests do not build',
    });
  });

  it('no result, or one outside the set, fails the run naming the set', () => {
    expect(reportedOutcome(ok, ['ready-for-agent'], line('looks good'))).toEqual({
      status: 'failed',
      reason:
        'the agent reported no result: its final message has no result line (one of: ready-for-agent, noop, skipped, failed)',
      result: null,
    });
    expect(reportedOutcome(ok, ['ready-for-agent'], line('#4 wontfix')).reason).toBe(
      "the agent reported 'wontfix', which is not one of this automation's outcomes (ready-for-agent, noop, skipped, failed)",
    );
  });

  it('a run that did not succeed keeps its status whatever it reported', () => {
    const failed = { status: 'timed_out' as const, reason: 'too slow' };
    expect(reportedOutcome(failed, [], line('noop: x'))).toMatchObject({
      status: 'timed_out',
      reason: 'too slow',
    });
  });

  it('agentOutcome applies it only when the automation declares outcomes', () => {
    const exit: AgentExit = {
      executable: 'claude',
      exitCode: 0,
      signal: null,
      cancelled: false,
      timedOut: false,
      stderrTail: '',
      stalled: false,
      stallMs: 1,
      timeoutMs: 1,
      stopping: false,
      reported: true,
      doneWithError: false,
      knownSession: true,
      parkUntil: 0,
      reportedResult: line('noop: nothing'),
    };
    expect(agentOutcome(exit).status).toBe('succeeded');
    expect(agentOutcome({ ...exit, outcomes: [] })).toMatchObject({
      status: 'noop',
      reason: 'noop: nothing',
    });
  });
});
