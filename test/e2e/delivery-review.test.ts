/**
 * The look at what the agent wrote before it leaves (issue 27, point 6), end to end: the
 * simulator, the built engine, real git and the fake agent. A delivery whose commits carry a
 * secret curupira knows, or edit agent or CI configuration the automation did not allow, is held
 * for a person: nothing is pushed, no pull request is opened, the run says why (never the secret).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { git } from '../../src/workspace/git.js';
import { createHarness, type Harness, issueAutomation, onlyRun } from '../helpers/harness.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.cleanup();
  h = undefined;
});

const SECRET = 'deploy-secret-0a1b2c3d4e5f';

async function world(title: string, extra = ''): Promise<Harness> {
  return createHarness({
    issues: [{ title, body: 'Please fix.', labels: ['agent-ready'] }],
    automation: issueAutomation('fix', { prompt: '${issue_title}', extra: `deliver = "pr"\n${extra}` }),
    agentEnv: { DEPLOY_TOKEN: SECRET },
  });
}

async function remoteBranches(harness: Harness): Promise<string[]> {
  const out = await git(['for-each-ref', '--format=%(refname:short)', 'refs/heads'], {
    cwd: harness.origin.url,
  });
  return out.trim().split('\n').filter(Boolean);
}

function pullPosts(harness: Harness) {
  return harness.sim.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/pulls'));
}

describe('before a delivery is pushed', () => {
  it('an unasked edit of CI configuration holds it for a person: blocked, nothing pushed, no pull request', async () => {
    h = await world('Fix it [[fake:commit]] [[fake:commit-file=.github/workflows/ci.yml]]');
    const before = await remoteBranches(h);
    const run = onlyRun((await h.run()).runs);
    expect(run.status).toBe('blocked');
    expect(run.reason).toMatch(/^needs human: the delivery was held, nothing was pushed/);
    expect(run.reason).toContain('.github/workflows/ci.yml');
    expect(run.reason).toContain('allow_config_edits');
    expect(await remoteBranches(h)).toEqual(before);
    expect(pullPosts(h)).toEqual([]);
    // The work is kept for the person.
    expect(run.worktreeKept).toBe(true);
  });

  it('an edit of agent instructions (AGENTS.md, .claude/) holds it too', async () => {
    h = await world('Fix it [[fake:commit-file=AGENTS.md]] [[fake:commit-file=.claude/settings.json]]');
    const run = onlyRun((await h.run()).runs);
    expect(run.status).toBe('blocked');
    expect(run.reason).toContain('AGENTS.md');
    expect(run.reason).toContain('.claude/settings.json');
    expect(pullPosts(h)).toEqual([]);
  });

  it('allow_config_edits lets the edits it names go; others still hold', async () => {
    h = await world(
      'Fix it [[fake:commit-file=.github/workflows/ci.yml]]',
      'allow_config_edits = [".github/workflows/"]',
    );
    const run = onlyRun((await h.run()).runs);
    expect(run.status).toBe('succeeded');
    expect(pullPosts(h)).toHaveLength(1);
  });

  it('a secret curupira knows, committed by the agent, holds it; the reason names the line, not the value', async () => {
    h = await world('Fix it [[fake:commit]] [[fake:commit-env=DEPLOY_TOKEN]]');
    const before = await remoteBranches(h);
    const run = onlyRun((await h.run()).runs);
    expect(run.status).toBe('blocked');
    expect(run.reason).toContain('a secret');
    expect(run.reason).toContain('leaked.txt:1');
    expect(run.reason).not.toContain(SECRET);
    expect(await remoteBranches(h)).toEqual(before);
    expect(pullPosts(h)).toEqual([]);
  });

  it('ordinary commits are delivered as before', async () => {
    h = await world('Fix it [[fake:commit]]');
    const run = onlyRun((await h.run()).runs);
    expect(run.status).toBe('succeeded');
    expect(pullPosts(h)).toHaveLength(1);
  });
});
