/** `status_label` and `failed_label` (issue 12, item 2): put on and taken off through the write queue. */
import { afterAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, issueAutomation } from '../helpers/harness.js';

let h: Harness | undefined;
afterAll(async () => {
  await h?.cleanup();
});

describe('state labels', () => {
  it('the status label is on while running and off after; a failed run gets the failed label', async () => {
    h = await createHarness({
      issues: [
        { title: 'Commit [[fake:commit]]', labels: ['agent-ready'] },
        { title: 'Fail [[fake:fail]]', labels: ['agent-ready'] },
      ],
      automation: issueAutomation('fix', {
        prompt: '${issue_title}',
        extra: 'status_label = "agent:implementing"\nfailed_label = "agent:failed"',
      }),
    });
    const { runs } = await h.run();
    expect(runs.map((r) => r.status).sort()).toEqual(['failed', 'succeeded']);
    const ok = h.world.item('acme/api', 1)!;
    const failed = h.world.item('acme/api', 2)!;
    expect(ok.labels).toEqual(['agent-ready']);
    expect(failed.labels).toEqual(['agent-ready', 'agent:failed']);
    for (const item of [ok, failed]) {
      expect(item.labelEvents.filter((e) => e.label === 'agent:implementing').map((e) => e.actor)).toEqual([
        'octocat',
      ]);
      expect(item.events.filter((e) => e.event === 'unlabeled').map((e) => e.label)).toEqual([
        'agent:implementing',
      ]);
      expect(item.comments).toEqual([]);
    }
    expect(h.world.label('acme/api', 'agent:failed')?.description).toBe(
      'curupira: the last run on this item failed',
    );
    expect(h.world.label('acme/api', 'agent:implementing')?.description).toBe(
      'curupira: automation fix is working on this item',
    );
  }, 60_000);
});
