/**
 * Issue 8, acceptance (slow): a load test. 500 matching items that stay open, a fast agent and
 * `max_active_tasks = 4`: the built CLI's `run` reaches every item exactly once (the batch is 100, so
 * four fifths of them sit beyond it at first), and its memory stays flat while it works through them.
 */
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, issueAutomation, startBuiltCli } from '../helpers/harness.js';

const ITEMS = 500;

function rssKb(pid: number): number | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /^VmRSS:\s+(\d+) kB/m.exec(status);
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

let h: Harness | undefined;
afterAll(async () => {
  await h?.cleanup();
});

describe('load (slow)', () => {
  it('500 open items, max_active_tasks = 4: every item runs exactly once, memory flat', async () => {
    h = await createHarness({
      issues: Array.from({ length: ITEMS }, (_, i) => ({ title: `Item ${i + 1}`, labels: ['agent-ready'] })),
      automation: issueAutomation('fix', { prompt: 'Fix #${issue_number}' }),
      settingsExtra: 'max_active_tasks = 4',
    });
    const harness = h;
    // A bounded heap: with the default limit (a quarter of this machine's memory) V8 lets garbage
    // pile up for a long time and RSS climbs with it; within 64 MB it collects, so what stays is
    // what the process keeps, and a leak grows it to the limit (and fails the run).
    const cli = startBuiltCli(['--config', harness.settingsFile, 'run'], {
      env: { ...harness.env, NODE_OPTIONS: '--max-old-space-size=64' },
    });
    // RSS sampled against progress: (runs started so far, RSS in kB).
    const samples: [number, number][] = [];
    let finished = false;
    void cli.done.then(() => {
      finished = true;
    });
    while (!finished) {
      const rss = rssKb(cli.child.pid!);
      if (rss !== undefined) samples.push([harness.agentRuns('claude').length, rss]);
      // why: RSS is sampled at a steady pace while the CLI works; this paces the samples, it waits for nothing.
      await sleep(500);
    }
    const result = await cli.done;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain(`${ITEMS} runs: ${ITEMS} succeeded`);

    // Exactly once per item.
    const prompts = harness.agentRuns('claude').map((c) => c.prompt);
    expect(prompts).toHaveLength(ITEMS);
    expect(new Set(prompts).size).toBe(ITEMS);

    // Memory flat: once warmed up (past the first fifth), the peak of the last fifth is within 15 %
    // of the peak of the second and third fifths; a leak per run would grow it with every run.
    if (process.env.CURUPIRA_LOAD_SAMPLES) {
      const { writeFileSync } = await import('node:fs');
      writeFileSync(process.env.CURUPIRA_LOAD_SAMPLES, JSON.stringify(samples));
    }
    const early = samples.filter(([done]) => done > ITEMS / 5 && done <= (ITEMS * 3) / 5).map(([, kb]) => kb);
    const late = samples.filter(([done]) => done > (ITEMS * 4) / 5).map(([, kb]) => kb);
    expect(early.length).toBeGreaterThan(0);
    expect(late.length).toBeGreaterThan(0);
    expect(Math.max(...late) / Math.max(...early)).toBeLessThan(1.15);
  }, 900_000);
});
