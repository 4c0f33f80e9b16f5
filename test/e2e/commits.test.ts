/**
 * The commit trigger (issue 29) end to end, in process: validation and `validate --explain`, a dry
 * run, and drains on the simulator whose commits come from the harness's real bare origin, with
 * the fake agent: the commits already on the branch are backlog, a pushed commit runs once with
 * its message, author and files in the prompt, and a commit outside `path` never runs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCliCaptured } from '../../src/cli/testing.js';
import { setPermission } from '../../src/simulator/reviews.js';
import { git } from '../../src/workspace/git.js';
import { createHarness, type Harness, unfenced } from '../helpers/harness.js';

function commitsAutomation(extra = ''): string {
  return `[automations.commits]
trigger_type = "github-commits"
repository = "api"
repo = "acme/api"
path = "src"
prompt = "Review \${commit_short_sha}: \${commit_title} (files: \${commit_files}; +\${commit_additions} -\${commit_deletions})"
${extra}
`;
}

let h: Harness;
beforeAll(async () => {
  h = await createHarness({
    automation: commitsAutomation(),
    issues: [],
    originFiles: { 'src/app.ts': 'export const a = 1;\n' },
  });
});
afterAll(async () => {
  await h.cleanup();
});

function cli(...args: string[]) {
  return runCliCaptured([args[0]!, '-c', h.settingsFile, ...args.slice(1)], { env: h.env });
}

describe('the commit trigger', () => {
  it('is validated: a folder outside the repository, item writes and a bad lookback say why', async () => {
    const ok = await cli('validate');
    expect(ok.stderr).toBe('');
    expect(ok.code).toBe(0);
    h.configure({
      automation: commitsAutomation('lookback = 0\nstatus_label = "agent:busy"').replace(
        'path = "src"',
        'path = "../etc"',
      ),
    });
    const bad = await cli('validate');
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('must be a folder inside the repository');
    expect(bad.stderr).toContain('lookback');
    expect(bad.stderr).toContain('`status_label` acts on the issue or pull request a run came from');
    h.configure({ automation: commitsAutomation() });
  });

  it('is explained: the branch, the folder, the memory and the backlog', async () => {
    const result = await cli('validate', '--explain');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/watches: +acme\/api, the default branch/);
    expect(result.stdout).toContain('commits touching src/; each poll reads the newest 20');
    expect(result.stdout).toContain('once: a commit fires at most once (commit:<sha>)');
    expect(result.stdout).toContain('ignored: commits already on the branch at the first poll');
    expect(result.stdout).toContain('commit_files');
  });

  it('is checked by doctor: the branch it resolved and its newest commit touching the folder', async () => {
    const tip = (await git(['rev-parse', 'main'], { cwd: h.origin.url })).trim();
    const result = await cli('doctor');
    expect(result.stdout).toContain(
      `ok    automation commits: acme/api main (the default branch): newest commit touching src/ ${tip.slice(0, 7)}`,
    );
  });

  it('records the branch’s commits as backlog, then runs a new commit touching the folder once', async () => {
    const first = await cli('run');
    expect(first.code).toBe(0);
    expect(h.agentRuns('claude')).toEqual([]);

    await h.origin.push({ 'docs/guide.md': '# guide\n' }, 'Write the guide');
    const sha = await h.origin.push(
      { 'src/app.ts': 'export const a = 2;\nexport const b = 3;\n' },
      'Change the app\n\nTwo constants now.',
    );

    const dry = await cli('run', '--dry-run');
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain(sha.slice(0, 7));
    // A commit reads as `owner/name@short sha`, never as an issue number.
    expect(dry.stdout).toContain(`Selected commits: acme/api@${sha.slice(0, 7)}: Change the app`);
    expect(dry.stdout).not.toContain(`acme/api#${sha}`);
    expect(unfenced(dry.stdout)).toContain('Change the app');
    expect(dry.stdout).toContain('Dry run: no task was reserved or executed.');
    expect(h.agentRuns('claude')).toEqual([]);

    // The branch moves on before the run: its worktree is still the commit's, not the tip's.
    const later = await h.origin.push({ 'docs/later.md': '# later\n' }, 'A later commit outside src');
    const second = await cli('run');
    expect(second.code).toBe(0);
    expect(second.stdout).toContain(`commits acme/api@${sha.slice(0, 7)} "Change the app"`);
    const runs = h.agentRuns('claude');
    expect(runs).toHaveLength(1);
    const prompt = unfenced(runs[0]!.prompt ?? '');
    expect(prompt).toContain(`Review ${sha.slice(0, 7)}: `);
    expect(prompt).toContain('Change the app');
    expect(prompt).toContain('src/app.ts');
    expect(prompt).toContain('+2 -1');

    const third = await cli('run');
    expect(third.code).toBe(0);
    expect(h.agentRuns('claude')).toHaveLength(1);

    const store = await h.openStore();
    try {
      const recorded = await store.listRuns({ automationId: 'commits', limit: 10 });
      const ran = recorded.filter((r) => r.status === 'succeeded');
      expect(ran.map((r) => r.itemId)).toEqual([sha]);
      expect(ran[0]!.baseCommit).toBe(sha);
      expect(ran[0]!.baseCommit).not.toBe(later);
      expect(recorded.some((r) => r.status === 'skipped')).toBe(true);
    } finally {
      await store.close();
    }
  });
  it('trusts a commit by its author’s permission on the repository: a writer’s runs, a stranger’s is held', async () => {
    h.configure({ automation: commitsAutomation(), screening: 'required = true' });
    setPermission(h.world, 'acme/api', 'maintainer', 'write');
    h.world.addUser('stranger');
    const pushAs = async (login: string, file: string, message: string): Promise<string> => {
      const saved = process.env.GIT_AUTHOR_NAME;
      process.env.GIT_AUTHOR_NAME = login;
      try {
        return await h.origin.push({ [file]: `// ${login}\n` }, message);
      } finally {
        process.env.GIT_AUTHOR_NAME = saved;
      }
    };
    const byWriter = await pushAs('maintainer', 'src/writer.ts', 'A writer’s change');
    const byStranger = await pushAs('stranger', 'src/stranger.ts', 'A stranger’s change');
    const byNobody = await pushAs('Someone Unknown', 'src/nobody.ts', 'A change by no GitHub account');
    const before = h.agentRuns('claude').length;
    const result = await cli('run');
    expect(result.code).not.toBe(2);
    const store = await h.openStore();
    try {
      const recorded = await store.listRuns({ automationId: 'commits', limit: 20 });
      const of = (sha: string) => recorded.find((r) => r.itemId === sha);
      expect(of(byWriter)?.status).toBe('succeeded');
      expect(of(byStranger)?.status).toBe('blocked');
      expect(of(byStranger)?.reason).toContain('@stranger');
      // A git identity GitHub matches to no account: the reason says so in words a person reads.
      expect(of(byNobody)?.status).toBe('blocked');
      expect(of(byNobody)?.reason).toMatch(
        /^blocked: the item is not vouched for: its author is no GitHub account \(a git identity GitHub matched to no user, or a deleted user\) and the automation matches on no label/,
      );
    } finally {
      await store.close();
    }
    expect(h.agentRuns('claude')).toHaveLength(before + 1);
    // Run again: the held commits are named as commits everywhere else are (repo@short sha).
    const again = await cli('run');
    expect(again.stdout).toContain(
      `still blocked: commits acme/api@${byNobody.slice(0, 7)} "A change by no GitHub account"`,
    );
    expect(h.agentRuns('claude')).toHaveLength(before + 1);
    h.configure({ automation: commitsAutomation(), screening: 'required = false' });
  });
});
