/** Items labelled `agent:log` or `agent:difficulty` never run, whatever the automation's filters. */
import { afterAll, describe, expect, it } from 'vitest';
import { createHarness, type Harness, issueAutomation } from '../helpers/harness.js';

let h: Harness | undefined;
afterAll(async () => {
  await h?.cleanup();
});

describe('never eligible', () => {
  it('a matching issue labelled agent:log or agent:difficulty is not run', async () => {
    h = await createHarness({
      issues: [
        { title: 'Real work [[fake:commit]]', labels: ['agent-ready'] },
        { title: 'Run log', labels: ['agent-ready', 'agent:log'] },
        { title: 'Too hard', labels: ['agent-ready', 'agent:difficulty'] },
      ],
      automation: issueAutomation('fix', { prompt: '${issue_title}' }),
    });
    const { runs } = await h.run();
    expect(runs.map((r) => r.itemTitle)).toEqual(['Real work [[fake:commit]]']);
  }, 60_000);
});
