/**
 * Findings of code-review watches (issue 29), on both backends: recorded once per fingerprint,
 * seen again with the last-seen commit moved, resolved, reopened when found again, listed.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { STORE_BACKENDS, type StoreBackend } from '../../test/helpers/store-backends.js';
import type { FindingInit, Store } from './types.js';

function report(overrides: Partial<FindingInit> = {}): FindingInit {
  return {
    watch: 'review-api',
    repo: 'acme/api',
    fingerprint: 'fp-sql',
    file: 'src/db.ts',
    lineStart: 10,
    lineEnd: 12,
    severity: 'high',
    category: 'security',
    title: 'SQL built from user input',
    detail: 'The query concatenates `name`.',
    commit: 'c1',
    runId: 'r_1',
    ...overrides,
  };
}

describe.each(STORE_BACKENDS)('findings ($name)', ({ backend: makeBackend }) => {
  let backend: StoreBackend;
  let clock: number;
  const open = (): Promise<Store> => backend.open({ now: () => clock, reopen: 'main' });

  beforeEach(() => {
    backend = makeBackend();
    clock = Date.parse('2025-03-01T10:00:00.000Z');
  });
  afterEach(async () => {
    await backend.cleanup();
  });

  it('the same problem found again is the same finding, its last-seen commit and lines moved', async () => {
    const store = await open();
    const first = await store.recordFinding(report());
    expect(first.outcome).toBe('new');
    expect(first.finding).toMatchObject({
      watch: 'review-api',
      status: 'open',
      file: 'src/db.ts',
      lineStart: 10,
      lineEnd: 12,
      severity: 'high',
      firstSeenCommit: 'c1',
      lastSeenCommit: 'c1',
      firstRunId: 'r_1',
      firstSeenAt: '2025-03-01T10:00:00.000Z',
      resolvedAt: null,
    });
    clock += 60_000;
    const again = await store.recordFinding(
      report({ commit: 'c2', runId: 'r_2', lineStart: 14, lineEnd: 16 }),
    );
    expect(again.outcome).toBe('seen-again');
    expect(again.finding).toMatchObject({
      id: first.finding.id,
      lineStart: 14,
      firstSeenCommit: 'c1',
      lastSeenCommit: 'c2',
      firstRunId: 'r_1',
      lastRunId: 'r_2',
      lastSeenAt: '2025-03-01T10:01:00.000Z',
    });
    const other = await store.recordFinding(report({ fingerprint: 'fp-leak', title: 'Token logged' }));
    expect(other.outcome).toBe('new');
    // Another watch's finding with the same fingerprint is its own.
    const elsewhere = await store.recordFinding(report({ watch: 'review-web' }));
    expect(elsewhere.outcome).toBe('new');
    expect((await store.listFindings({ watch: 'review-api' })).map((f) => f.fingerprint)).toEqual([
      'fp-sql',
      'fp-leak',
    ]);
    expect(await store.listFindings()).toHaveLength(3);
    expect(await store.listFindings({ limit: 1 })).toHaveLength(1);
  });

  it('resolves an open finding once; found again later, it is open again', async () => {
    const store = await open();
    const { finding } = await store.recordFinding(report());
    const resolved = await store.resolveFinding(finding.id, {
      commit: 'c3',
      runId: 'r_3',
      resolution: 'fixed in c3',
    });
    expect(resolved).toMatchObject({
      status: 'resolved',
      resolvedCommit: 'c3',
      resolvedRunId: 'r_3',
      resolution: 'fixed in c3',
    });
    expect(
      await store.resolveFinding(finding.id, { commit: 'c4', runId: 'r_4', resolution: 'again' }),
    ).toBeUndefined();
    expect(
      await store.resolveFinding(999_999, { commit: 'c4', runId: 'r_4', resolution: 'none' }),
    ).toBeUndefined();
    expect(await store.listFindings({ status: 'open' })).toEqual([]);
    expect(await store.listFindings({ status: 'resolved' })).toHaveLength(1);
    const back = await store.recordFinding(report({ commit: 'c5', runId: 'r_5' }));
    expect(back.outcome).toBe('reopened');
    expect(back.finding).toMatchObject({
      id: finding.id,
      status: 'open',
      lastSeenCommit: 'c5',
      resolvedAt: null,
      resolution: null,
    });
  });
});
