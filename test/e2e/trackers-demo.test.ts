/**
 * Issue 30, trying Linear and Jira without an account: `curupira simulator --trackers DIR` serves
 * the Linear and Jira stand-ins and prepares DIR for examples/trackers.toml; the example (as that
 * command writes it into DIR, with the folder and the stand-ins' free ports) runs a Linear
 * automation and a Jira automation end to end through the built CLI with the scripted agent: each
 * issue runs once, gets one result comment and is moved to "In Review". The simulator's demo
 * repository is backed by DIR's git remote, so a GitHub automation added beside them delivers a
 * pull request whose head the simulator reads from that remote.
 */
import { type ChildProcessWithoutNullStreams, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CLI, ROOT, runBuiltCli } from '../helpers/harness.js';

let simulator: ChildProcessWithoutNullStreams | undefined;
let dir: string | undefined;
afterEach(async () => {
  if (simulator && simulator.exitCode === null) {
    const exited = new Promise((resolve) => simulator!.once('exit', resolve));
    simulator.kill('SIGTERM');
    await exited;
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
  simulator = undefined;
  dir = undefined;
});

/** Starts `simulator --trackers` and resolves once it says where its settings are. */
function startSimulator(
  folder: string,
  env: NodeJS.ProcessEnv,
): Promise<{ linear: string; jira: string; github: string }> {
  const args = ['simulator', '--port', '0', '--trackers', folder, '--linear-port', '0', '--jira-port', '0'];
  const child = spawn(process.execPath, [CLI, ...args], { env, cwd: ROOT });
  simulator = child;
  return new Promise((resolve, reject) => {
    let stderr = '';
    let stdout = '';
    const ready = (): void => {
      const linear = /Linear stand-in listening on (\S+)/.exec(stderr)?.[1];
      const jira = /Jira stand-in listening on (\S+)/.exec(stderr)?.[1];
      const github = /^(http:\S+)\n/.exec(stdout)?.[1];
      if (linear && jira && github && stderr.includes('Settings for them:'))
        resolve({ linear, jira, github });
    };
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      ready();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      ready();
    });
    child.once('exit', (code) => reject(new Error(`the simulator exited (${code}): ${stderr}`)));
  });
}

describe('the Linear and Jira stand-ins of `curupira simulator --trackers`', () => {
  it('examples/trackers.toml validates as shipped', async () => {
    const checked = await runBuiltCli(['--config', join(ROOT, 'examples', 'trackers.toml'), 'validate']);
    expect(checked.code, checked.stderr).toBe(0);
  });

  it('run the example end to end: each issue runs once, is commented once and moved to In Review', async () => {
    dir = mkdtempSync(join(tmpdir(), 'curupira-trackers-'));
    const folder = join(dir, 'demo');
    const env = { PATH: process.env.PATH ?? '', HOME: dir, GIT_CONFIG_NOSYSTEM: '1' };
    const { linear, jira } = await startSimulator(folder, env);
    const settings = join(folder, 'settings.toml');
    const text = readFileSync(settings, 'utf8');
    // The example itself, with the folder and the free ports written in.
    const example = readFileSync(join(ROOT, 'examples', 'trackers.toml'), 'utf8')
      .replaceAll('http://127.0.0.1:8788/graphql', linear)
      .replaceAll('http://127.0.0.1:8789', jira)
      .replaceAll('/tmp/curupira-trackers', folder)
      .replaceAll('--config examples/trackers.toml', `--config ${settings}`);
    expect(text.endsWith(example)).toBe(true);

    const credentials = { ...env, LINEAR_API_KEY: 'lin_api_demo', JIRA_API_TOKEN: 'demo' };
    const ran = await runBuiltCli(['--config', settings, 'run'], { env: credentials });
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toContain('2 runs: 2 succeeded');
    expect(ran.stdout).toMatch(/succeeded linear-bugs Linear ENG-1 /);
    expect(ran.stdout).toMatch(/succeeded jira-tickets Jira WID-1 /);
    // Neither credential is printed or logged.
    expect(ran.stdout + ran.stderr).not.toContain('lin_api_demo');

    // Linear: the issue is In Review with one result comment.
    const answer = await fetch(linear, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'lin_api_demo' },
      body: JSON.stringify({
        query: 'query Check { issue(id: "ENG-1") { state { name } comments(first: 50) { nodes { body } } } }',
      }),
    });
    const { data } = (await answer.json()) as {
      data: { issue: { state: { name: string }; comments: { nodes: { body: string }[] } } };
    };
    expect(data.issue.state.name).toBe('In Review');
    expect(data.issue.comments.nodes).toHaveLength(1);
    expect(data.issue.comments.nodes[0]!.body).toContain('of automation `linear-bugs`: **succeeded**');

    // Jira: the issue is In Review with one result comment.
    const basic = `Basic ${Buffer.from('demo@curupira.invalid:demo').toString('base64')}`;
    const get = async (path: string): Promise<unknown> =>
      (await fetch(`${jira}${path}`, { headers: { authorization: basic } })).json();
    const issue = (await get('/rest/api/3/issue/WID-1?fields=status')) as {
      fields: { status: { name: string } };
    };
    expect(issue.fields.status.name).toBe('In Review');
    const comments = (await get('/rest/api/3/issue/WID-1/comment')) as {
      comments: { body: unknown }[];
    };
    expect(comments.comments).toHaveLength(1);
    expect(JSON.stringify(comments.comments[0]!.body)).toContain('jira-tickets');

    // Once each: a second pass runs nothing.
    const again = await runBuiltCli(['--config', settings, 'run'], { env: credentials });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).not.toContain('succeeded linear-bugs');
    expect(again.stdout).not.toContain('succeeded jira-tickets');
  }, 90_000);

  it('a GitHub automation beside them delivers a pull request on acme/widgets, backed by the folder’s remote', async () => {
    dir = mkdtempSync(join(tmpdir(), 'curupira-trackers-'));
    const folder = join(dir, 'demo');
    const env = { PATH: process.env.PATH ?? '', HOME: dir, GIT_CONFIG_NOSYSTEM: '1' };
    const { github } = await startSimulator(folder, env);
    const settings = join(folder, 'settings.toml');
    writeFileSync(
      settings,
      `${readFileSync(settings, 'utf8')}
[settings.github]
api_url = "${github}"

[settings.screening]
trusted_authors = ["octocat"]

[automations.fix-bugs]
repository = "widgets"
repo = "acme/widgets"
labels = ["agent-ready"]
deliver = "pr"
prompt = "Fix #\${issue_number}: \${issue_title} [[fake:commit]]"
`,
    );
    const credentials = { ...env, LINEAR_API_KEY: 'lin_api_demo', JIRA_API_TOKEN: 'demo', GH_TOKEN: 'sim' };
    const ran = await runBuiltCli(['--config', settings, 'run'], { env: credentials });
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stdout).toMatch(/succeeded fix-bugs acme\/widgets#1 /);
    const pulls = (await (
      await fetch(`${github}/repos/acme/widgets/pulls?state=open`, {
        headers: { authorization: 'bearer sim' },
      })
    ).json()) as { number: number; head: { ref: string; sha: string } }[];
    expect(pulls).toHaveLength(1);
    // The simulator read the pull request's head from the remote curupira pushed to.
    const remoteHead = execFileSync('git', ['rev-parse', `refs/heads/${pulls[0]!.head.ref}`], {
      cwd: join(folder, 'remote', 'widgets.git'),
      encoding: 'utf8',
    }).trim();
    expect(pulls[0]!.head.sha).toBe(remoteHead);
    // The branch's history, which the simulator reads from a backing repository only (else 409).
    const history = await fetch(
      `${github}/repos/acme/widgets/commits?sha=${encodeURIComponent(pulls[0]!.head.ref)}`,
      {
        headers: { authorization: 'bearer sim' },
      },
    );
    expect(history.status).toBe(200);
    const commits = (await history.json()) as { sha: string }[];
    expect(commits.map((c) => c.sha)).toContain(remoteHead);
  }, 90_000);
});
