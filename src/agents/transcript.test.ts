import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeAgentScript } from './fake/install.js';
import { getDriver, loadDrivers } from './registry.js';
import { PROFILE_SCHEMAS, PROVIDERS, type Profile } from './schemas.js';
import { renderEvents, transcriptEvents } from './transcript.js';

beforeAll(() => loadDrivers());

const cwd = mkdtempSync(join(tmpdir(), 'curupira-transcript-'));
afterAll(() => rmSync(cwd, { recursive: true, force: true }));

/** What the provider's CLI prints for one task, using the fake CLI that speaks its real format. */
function transcriptOf(provider: (typeof PROVIDERS)[number]): string {
  const driver = getDriver(provider);
  const profile = PROFILE_SCHEMAS[provider].parse({ provider }) as Profile;
  const { args } = driver.buildInvocation({
    profile,
    prompt: 'Tidy the README',
    worktree: cwd,
    ...(driver.assignsSessionId ? { assignedSessionId: '11111111-2222-4333-8444-555555555555' } : {}),
  });
  const result = spawnSync(process.execPath, [fakeAgentScript(), provider, ...args], {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: cwd },
  });
  expect(result.status, result.stderr).toBe(0);
  return result.stdout;
}

describe('transcripts render as a conversation for every provider', () => {
  for (const provider of PROVIDERS) {
    it(provider, () => {
      const lines = renderEvents(transcriptEvents(provider, transcriptOf(provider)));
      expect(lines[0]).toMatch(/^\[session [\w-]+\]$/);
      expect(lines).toContain('assistant: Starting on the task.');
      expect(lines.some((l) => l.startsWith('tool call: '))).toBe(true);
      expect(lines.some((l) => l.startsWith('tool result: '))).toBe(true);
      expect(lines).toContain('assistant: Done: the task is complete.');
      expect(lines.at(-1)).toBe('[finished]');
    });
  }

  it('ignores lines that are not the provider’s JSON', () => {
    const events = transcriptEvents('claude', 'Warning: something\n\n{"not":"claude"}\n');
    expect(renderEvents(events)).toEqual([]);
  });
});
