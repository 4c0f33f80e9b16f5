import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { registerSecret } from '../security/redact.js';
import { openStore } from './index.js';

const CANARY = 'canary-store-value-3c9e1a7f';
const SHAPED = 'ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8';
let dir: string | undefined;

afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('openStore', () => {
  it('redacts registered values and token shapes from everything written, so the file never holds them', async () => {
    registerSecret(CANARY);
    dir = mkdtempSync(join(tmpdir(), 'curupira-redacting-'));
    const path = join(dir, 'state.sqlite3');
    const store = await openStore(path);
    const run = await store.createRun({
      automationId: 'fix',
      taskKey: 'fix:acme/api:github-issues:1',
      repo: 'acme/api',
      taskType: 'github-issues',
      itemId: '1',
      itemKey: 'issue:1',
      itemTitle: `title ${CANARY}`,
      itemUrl: 'https://github.com/acme/api/issues/1',
      status: 'running',
      prompt: `prompt with ${SHAPED}`,
    });
    const done = await store.updateRun(run.id, {
      status: 'failed',
      reason: `agent printed ${CANARY}`,
      agentOutcome: { status: 'failed', reason: `echo ${SHAPED}` },
    });
    expect(done.reason).toBe('agent printed [redacted]');
    expect(done.itemTitle).toBe('title [redacted]');
    expect(done.prompt).toBe('prompt with [redacted]');
    expect(done.agentOutcome).toEqual({ status: 'failed', reason: 'echo [redacted]' });
    await store.setMeta('note', CANARY);
    expect(await store.getMeta('note')).toBe('[redacted]');
    await store.close();
    for (const name of ['state.sqlite3', 'state.sqlite3-wal']) {
      let bytes = '';
      try {
        bytes = readFileSync(join(dir, name), 'latin1');
      } catch {
        continue;
      }
      expect(bytes.includes(CANARY), name).toBe(false);
      expect(bytes.includes(SHAPED), name).toBe(false);
    }
  });
});
