/** `curupira status --json` without a daemon: the state file's runs and the same figures the API gives. */
import { afterEach, describe, expect, it } from 'vitest';
import { createHarness, type Harness, runBuiltCli } from '../helpers/harness.js';

let h: Harness | undefined;

afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

describe('curupira status --json', () => {
  it('prints the attention count, automations and the last 7 days of figures from the state file', async () => {
    h = await createHarness({
      issues: [
        { title: 'Works', labels: ['agent-ready'] },
        { title: 'Broken [[fake:fail]]', labels: ['agent-ready'] },
      ],
    });
    const { runs } = await h.run();
    expect(runs.map((r) => r.status).sort()).toEqual(['failed', 'succeeded']);
    const result = await runBuiltCli(['--config', h.settingsFile, 'status', '--json'], { env: h.env });
    expect(result.code).toBe(0);
    const body = JSON.parse(result.stdout) as {
      daemon: boolean;
      attentionCount: number;
      automations: { id: string }[];
      figures: {
        total: { runs: number; byOutcome: Record<string, number> };
        byAutomation: Record<string, { total: { runs: number } }>;
      };
    };
    expect(body.daemon).toBe(false);
    expect(body.attentionCount).toBe(1);
    const id = body.automations[0]!.id;
    expect(body.figures.total).toMatchObject({ runs: 2, byOutcome: { success: 1, failure: 1 } });
    expect(body.figures.byAutomation[id]!.total.runs).toBe(2);
  });
});
