import { existsSync, readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { branchName, worktreePath } from '../../src/workspace/paths.js';
import { createHarness, type Harness, onlyRun, unfenced } from '../helpers/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

describe('engine smoke', () => {
  it('runs one issue end to end with claude', async () => {
    h = await createHarness({ provider: 'claude' });
    const result = await h.run();
    const run = onlyRun(result.runs);
    expect(run.status, run.reason ?? '').toBe('succeeded');
    const settings = h.settings();
    const checkout = settings.repositories.api!.checkoutPath;
    const expectedPath = worktreePath(checkout, 'fix', 'github-issues', '1');
    expect(run.worktreePath).toBe(expectedPath);
    expect(run.branch).toBe(branchName('fix', 'github-issues', '1'));
    expect(run.worktreeKept).toBe(false);
    expect(existsSync(expectedPath)).toBe(false);
    const [call] = h.invocations('claude');
    expect(call!.cwd).toBe(expectedPath);
    expect(call!.argv.slice(0, -1)).toEqual([
      '-p',
      '--output-format',
      'stream-json',
      '--verbose',
      '--strict-mcp-config',
      '--',
    ]);
    // The title arrives fenced (issue 11), as one argument.
    expect(call!.argv.at(-1)).toMatch(/^Fix issue 1: The block below is untrusted data from issue title/);
    expect(unfenced(call!.argv.at(-1)!)).toBe('Fix issue 1: First issue');
    expect(run.sessionId).toBeTruthy();
    expect(readFileSync(run.transcriptPath!, 'utf8')).toContain(run.sessionId!);
    const store = await h.openStore();
    expect(await store.listSessions()).toEqual([]);
    await store.close();
  });
});
