import { afterAll, describe, expect, it } from 'vitest';
import {
  cleanupFeatureSetups,
  featureSetup,
  finishedRun,
  issueTask,
} from '../../test/helpers/feature-setup.js';
import type { PullRequestRecord } from '../store/types.js';
import { linkedSection, renderPullRequest, withLinkedSection } from './pull-request.js';
import {
  additionalDeliveryKey,
  additionalWorktrees,
  deliveryRunId,
  repositoriesNote,
  repositoryOfDelivery,
  shownDelivery,
} from './repositories.js';

afterAll(cleanupFeatureSetups);

const TWO = {
  settings: '[repositories.web]\nremote = "https://example.com/acme/web.git"\nrepo = "acme/web"\n',
  automations: `[automations.fix]
trigger_type = "github-issues"
repository = "api"
repositories = ["api", "web"]
repo = "acme/api"
labels = ["agent-ready"]
deliver = "pr"
prompt = "Fix"
`,
};

describe('a task across repositories', () => {
  it('keys each additional delivery by run and alias, and finds its run and repository back', async () => {
    const { automation } = await featureSetup(TWO);
    const key = additionalDeliveryKey('r_01ABC', 'web');
    expect(key).toBe('r_01ABC~web');
    expect(deliveryRunId(key)).toBe('r_01ABC');
    expect(deliveryRunId('r_01ABC')).toBe('r_01ABC');
    expect(repositoryOfDelivery(automation, key)?.repo).toBe('acme/web');
    expect(repositoryOfDelivery(automation, 'r_01ABC')?.alias).toBe('api');
    expect(repositoryOfDelivery(automation, 'r_01ABC~ghost')).toBeUndefined();
  });

  it('places the additional worktree under its own checkout, on the primary branch name, and lists it in the prompt', async () => {
    const { automation } = await featureSetup(TWO);
    const [web] = additionalWorktrees(automation, 'github-issues', '7');
    expect(web!.path.startsWith(`${web!.repository.checkoutPath}.worktrees/fix/`)).toBe(true);
    expect(web!.branch).toMatch(/^curupira\/fix\/github-issues-[0-9a-f]+$/);
    const note = repositoriesNote(automation, { repo: 'acme/api', path: '/w/api', branch: web!.branch }, [
      web!,
    ]);
    expect(note).toContain('- `api` (acme/api, your working directory): /w/api');
    expect(note).toContain(`- \`web\` (acme/web): ${web!.path}`);
    const single = await featureSetup();
    expect(additionalWorktrees(single.automation, 'github-issues', '7')).toEqual([]);
  });

  it('a pull request of several closes nothing, names the item, and carries the linked section', async () => {
    const setup = await featureSetup(TWO);
    const { automation } = setup;
    const task = issueTask(automation);
    const { run } = await finishedRun(setup, 'succeeded');
    const several = renderPullRequest(automation, task, run, 1, undefined, 'b', {
      key: `${run.id}~web`,
      spans: ['acme/api', 'acme/web'],
    });
    expect(several.body).not.toMatch(/Closes #/);
    expect(several.body).toContain('Part of https://github.com/acme/api/issues/7');
    expect(several.body).toContain(linkedSection([{ repo: 'acme/api' }, { repo: 'acme/web' }]));
    expect(several.body).toContain(`delivery run=${run.id}~web`);
    const alone = renderPullRequest(automation, task, run, 1, undefined, 'b');
    expect(alone.body).toContain('Closes #7');
    expect(alone.body).not.toContain('One change across');
  });

  it('rewrites the linked section in place, and a second rewrite changes nothing', () => {
    const before = `Part of x\n\n${linkedSection([{ repo: 'acme/api' }, { repo: 'acme/web' }])}\n\n<!-- marker -->`;
    const section = linkedSection([
      { repo: 'acme/api', url: 'https://github.com/acme/api/pull/2' },
      { repo: 'acme/web', url: 'https://github.com/acme/web/pull/1' },
    ]);
    const once = withLinkedSection(before, section);
    expect(once).toBe(`Part of x\n\n${section}\n\n<!-- marker -->`);
    expect(withLinkedSection(once, section)).toBe(once);
    // An adopted pull request without the section gets it appended.
    expect(withLinkedSection('A body.', section)).toBe(`A body.\n\n${section}`);
  });
});

describe('the delivery a run page shows', () => {
  const pr = { runId: 'r_up', taskKey: 'github-issues:acme/api#3' } as PullRequestRecord;
  const store = {
    getPullRequest: async (runId: string) => (runId === pr.runId ? pr : undefined),
  };
  it("a remediation run (same item) shows the delivery it pushed to; a chained run (its own item) not the upstream's", async () => {
    const remediation = { id: 'r_fix', upstreamRunId: 'r_up', taskKey: pr.taskKey };
    expect(await shownDelivery(store, remediation)).toBe(pr);
    const chained = { id: 'r_chain', upstreamRunId: 'r_up', taskKey: 'after:check-delivery:r_up' };
    expect(await shownDelivery(store, chained)).toBeUndefined();
    expect(await shownDelivery(store, { id: 'r_up', upstreamRunId: null, taskKey: pr.taskKey })).toBe(pr);
  });
});
