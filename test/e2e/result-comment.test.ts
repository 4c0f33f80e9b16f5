/**
 * `result_comment = true` (issue 12, item 3): each run of an issue leaves one result comment on it,
 * sent through the write queue; the automation without the key writes nothing.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, issueAutomation } from '../helpers/harness.js';

let h: Harness | undefined;
afterAll(async () => {
  await h?.cleanup();
});

describe('result comments', () => {
  it('one marked result comment per run, and none for an automation without the key', async () => {
    h = await createHarness({
      issues: [
        { title: 'Commit [[fake:commit]]', labels: ['agent-ready'] },
        { title: 'Fail [[fake:fail]]', labels: ['agent-ready'] },
        { title: 'Quiet [[fake:commit]]', labels: ['quiet'] },
      ],
      automation:
        issueAutomation('fix', { prompt: '${issue_title}', extra: 'result_comment = true' }) +
        issueAutomation('quiet', { prompt: '${issue_title}', labels: ['quiet'] }),
    });
    const { runs } = await h.run();
    expect(runs).toHaveLength(3);
    for (const run of runs) {
      const comments = h.world.item('acme/api', Number(run.itemId))!.comments;
      if (run.automationId === 'quiet') {
        expect(comments).toEqual([]);
        continue;
      }
      expect(comments).toHaveLength(1);
      const [comment] = comments;
      expect(comment!.author).toBe('octocat');
      expect(comment!.body).toContain(`<!-- curupira:result run=${run.id} -->`);
      expect(comment!.body).toContain(`**${run.status}**`);
      expect(comment!.body).toContain(`curupira runs show ${run.id}`);
    }
    expect(runs.map((r) => r.status).sort()).toEqual(['failed', 'succeeded', 'succeeded']);
    const posts = h.sim.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/comments'));
    expect(posts).toHaveLength(2);
    const store = await h.openStore();
    try {
      expect((await store.listWrites()).map((w) => w.status)).toEqual(['sent', 'sent']);
    } finally {
      await store.close();
    }
  }, 60_000);
});
