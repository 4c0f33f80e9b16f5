import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { git } from '../workspace/git.js';
import { commitFiles, createOrigin, isolateGitForTests, type OriginRepo } from '../workspace/testing.js';
import { type Simulator, startSimulator } from './server.js';
import { postGraphQL } from './testing.js';
import { SimWorld } from './world.js';

const TOKEN = 'pulls-token';
let sim: Simulator;
let world: SimWorld;
let origin: OriginRepo;
let headSha: string;

async function api(path: string, method = 'GET', body?: unknown) {
  const response = await fetch(`${sim.url}${path}`, {
    method,
    headers: { authorization: `bearer ${TOKEN}`, accept: 'application/vnd.github+json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text === '' ? undefined : JSON.parse(text) };
}

beforeAll(() => isolateGitForTests());

beforeEach(async () => {
  origin = await createOrigin();
  // A real push of a branch with one commit to the bare repository backing acme/api.
  const work = join(origin.dir, 'work');
  await git(['clone', '-q', origin.url, work], { cwd: origin.dir });
  await git(['switch', '-q', '-c', 'feature'], { cwd: work });
  headSha = await commitFiles(work, { 'a.txt': 'one\ntwo\n' });
  await git(['push', '-q', 'origin', 'feature'], { cwd: work });
  world = new SimWorld();
  world.addToken(TOKEN, 'curupira-bot');
  world.addRepo('acme/api', { gitDir: origin.url });
  world.addIssue('acme/api', { title: 'Crash', author: 'bob' });
  sim = await startSimulator({ world });
});

afterEach(async () => {
  await sim.close();
  await origin.cleanup();
});

describe('pull requests over a backing bare repository', () => {
  test('create (draft), get, list by head, and GraphQL sees it', async () => {
    const created = await api('/repos/acme/api/pulls', 'POST', {
      title: 'Fix the crash',
      head: 'acme:feature',
      base: 'main',
      body: 'Closes #1',
      draft: true,
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      number: 2,
      state: 'open',
      draft: true,
      merged: false,
      title: 'Fix the crash',
      user: { login: 'curupira-bot' },
      head: { ref: 'feature', sha: headSha, label: 'acme:feature' },
      base: { ref: 'main' },
      commits: 1,
      additions: 2,
      changed_files: 1,
      html_url: 'https://github.com/acme/api/pull/2',
    });
    expect((await api('/repos/acme/api/pulls/2')).body.number).toBe(2);
    const open = await api('/repos/acme/api/pulls?head=acme:feature&state=open');
    expect(open.body.map((p: { number: number }) => p.number)).toEqual([2]);
    expect((await api('/repos/acme/api/pulls?head=acme:other')).body).toEqual([]);
    const reply = await postGraphQL<{
      repository: { pullRequest: { isDraft: boolean; headRefName: string } };
    }>(
      sim.url,
      TOKEN,
      '{ repository(owner: "acme", name: "api") { pullRequest(number: 2) { isDraft headRefName } } }',
    );
    expect(reply.body.data?.repository.pullRequest).toEqual({ isDraft: true, headRefName: 'feature' });
    // Merging (a test control, the person at the merge button) merges the branch into main in the
    // bare repository, marks it merged and closes the issue its body names.
    const mainBefore = (await git(['rev-parse', 'main'], { cwd: origin.url })).trim();
    const merged = await fetch(`${sim.url}/_simulator/pull-requests/merge`, {
      method: 'POST',
      body: JSON.stringify({ repo: 'acme/api', number: 2 }),
    });
    expect(merged.status).toBe(200);
    const mainAfter = (await git(['rev-parse', 'main'], { cwd: origin.url })).trim();
    expect((await merged.json()).sha).toBe(mainAfter);
    expect((await git(['rev-parse', 'main^1', 'main^2'], { cwd: origin.url })).trim().split('\n')).toEqual([
      mainBefore,
      headSha,
    ]);
    expect(await git(['show', 'main:a.txt'], { cwd: origin.url })).toBe('one\ntwo\n');
    expect((await api('/repos/acme/api/pulls/2')).body).toMatchObject({ state: 'closed', merged: true });
    expect(world.issue('acme/api', 1)!.state).toBe('CLOSED');
    expect((await api('/repos/acme/api/pulls?state=open')).body).toEqual([]);
  });

  test('the merge button refuses a conflict, as GitHub does, and leaves the pull request open', async () => {
    const work = join(origin.dir, 'work');
    await git(['switch', '-q', 'main'], { cwd: work });
    await commitFiles(work, { 'a.txt': 'other\n' });
    await git(['push', '-q', 'origin', 'main'], { cwd: work });
    expect(
      (await api('/repos/acme/api/pulls', 'POST', { title: 't', head: 'feature', base: 'main' })).status,
    ).toBe(201);
    const mainBefore = (await git(['rev-parse', 'main'], { cwd: origin.url })).trim();
    const refused = await fetch(`${sim.url}/_simulator/pull-requests/merge`, {
      method: 'POST',
      body: JSON.stringify({ repo: 'acme/api', number: 2 }),
    });
    expect(refused.status).toBe(405);
    expect((await git(['rev-parse', 'main'], { cwd: origin.url })).trim()).toBe(mainBefore);
    expect((await api('/repos/acme/api/pulls/2')).body).toMatchObject({ state: 'open', merged: false });
  });

  test('refuses what GitHub refuses: a missing head, no commits, a second open pull request', async () => {
    const missing = await api('/repos/acme/api/pulls', 'POST', { title: 't', head: 'nope', base: 'main' });
    expect(missing.status).toBe(422);
    const empty = await api('/repos/acme/api/pulls', 'POST', { title: 't', head: 'main', base: 'main' });
    expect(empty.status).toBe(422);
    expect(
      (await api('/repos/acme/api/pulls', 'POST', { title: 't', head: 'feature', base: 'main' })).status,
    ).toBe(201);
    const again = await api('/repos/acme/api/pulls', 'POST', { title: 't', head: 'feature', base: 'main' });
    expect(again.status).toBe(422);
    expect(JSON.stringify(again.body)).toContain('A pull request already exists for acme:feature.');
    const patched = await api('/repos/acme/api/pulls/2', 'PATCH', { title: 'Better', state: 'closed' });
    expect(patched.body).toMatchObject({ title: 'Better', state: 'closed', merged: false });
    // One clock, as GitHub's: an issue made after the edit is the most recently updated item
    // (curupira's change probe reads exactly that).
    world.addIssue('acme/api', { title: 'Made after the edit', author: 'bob' });
    const newest = await api('/repos/acme/api/issues?state=all&sort=updated&direction=desc&per_page=1');
    expect(newest.body.map((i: { title: string }) => i.title)).toEqual(['Made after the edit']);
    expect(Date.parse(patched.body.updated_at)).toBeLessThan(Date.parse(newest.body[0].updated_at));
  });
});
