/**
 * Issue 30, trying Linear and Jira without an account: `curupira simulator --trackers DIR` serves
 * the Linear and Jira stand-ins and prepares DIR for examples/trackers.toml; the example (as that
 * command writes it into DIR, with the folder and the stand-ins' free ports) runs a Linear
 * automation and a Jira automation end to end through the built CLI with the scripted agent: each
 * issue runs once, gets one result comment and is moved to "In Review".
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
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
function startSimulator(folder: string, env: NodeJS.ProcessEnv): Promise<{ linear: string; jira: string }> {
  const args = ['simulator', '--port', '0', '--trackers', folder, '--linear-port', '0', '--jira-port', '0'];
  const child = spawn(process.execPath, [CLI, ...args], { env, cwd: ROOT });
  simulator = child;
  return new Promise((resolve, reject) => {
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      const linear = /Linear stand-in listening on (\S+)/.exec(stderr)?.[1];
      const jira = /Jira stand-in listening on (\S+)/.exec(stderr)?.[1];
      if (linear && jira && stderr.includes('Settings for them:')) resolve({ linear, jira });
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
});
