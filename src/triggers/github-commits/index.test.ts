/**
 * The commit trigger's discovery on the simulator, whose commits come from a real bare repository:
 * the default branch or a named one, a folder filter, newest commits first past the ones already
 * handled, files and diff size as prompt fields; and the simulator's commit endpoints themselves.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSettingsFromText } from '../../config/load.js';
import type { AutomationFor } from '../../config/types.js';
import { FakeClock } from '../../core/clock.js';
import type { Item } from '../../core/types.js';
import { createGitHubClient, type GitHubClient } from '../../github/client.js';
import { staticTokenSource } from '../../github/token.js';
import { silentLogger } from '../../log.js';
import { type Simulator, startSimulator } from '../../simulator/server.js';
import { SimWorld } from '../../simulator/world.js';
import { git } from '../../workspace/git.js';
import { createOrigin, isolateGitForTests, type OriginRepo } from '../../workspace/testing.js';
import { noService } from '../service.js';
import { type CommitJson, createGitHubCommitsSource } from './index.js';

const TOKEN = 'commits-trigger-token';
let sim: Simulator;
let client: GitHubClient;
let origin: OriginRepo;
/** The commits on main, oldest first (the initial commit, then three pushes). */
const main: string[] = [];
let release: string;

beforeAll(async () => {
  isolateGitForTests();
  process.env.GIT_AUTHOR_NAME = 'bob';
  origin = await createOrigin({ files: { 'README.md': '# api\n' } });
  main.push((await git(['rev-parse', 'main'], { cwd: origin.url })).trim());
  main.push(await origin.push({ 'src/app.ts': 'export const a = 1;\n' }, 'Add the app\n\nFirst version.'));
  main.push(await origin.push({ 'docs/guide.md': '# guide\n' }, 'Write the guide'));
  main.push(
    await origin.push({ 'src/app.ts': 'export const a = 2;\nexport const b = 3;\n' }, 'Change the app'),
  );
  await git(['branch', 'release', main[1]!], { cwd: origin.url });
  release = main[1]!;
  const world = new SimWorld();
  world.addToken(TOKEN, 'alice');
  world.addUser('bob');
  world.addRepo('acme/api', { gitDir: origin.url });
  sim = await startSimulator({ world });
  client = createGitHubClient({
    apiUrl: sim.url,
    tokens: staticTokenSource(TOKEN),
    clock: new FakeClock(),
    random: () => 0.5,
  });
});

afterAll(async () => {
  await sim.close();
  await origin.cleanup();
});

function automation(lines: string): AutomationFor<'github-commits'> {
  const text = `[settings.github]
api_url = "${sim.url}"

[repositories.api]
remote = "https://github.com/acme/api.git"

[automations.commits]
trigger_type = "github-commits"
repository = "api"
repo = "acme/api"
prompt = "Look at \${commit_sha}"
${lines}
`;
  const [resolved] = loadSettingsFromText(text, '/tmp/curupira-commits-test/settings.toml').settings
    .automations;
  if (resolved?.triggerType !== 'github-commits') throw new Error('expected a github-commits automation');
  return resolved;
}

async function discover(lines: string, limit = 100, wanted?: (item: Item) => boolean): Promise<Item[]> {
  const source = createGitHubCommitsSource(automation(lines), {
    github: () => client,
    clock: new FakeClock(),
    log: silentLogger(),
    service: noService,
  });
  return source.discover({ limit, ...(wanted ? { wanted } : {}) });
}

describe('the simulator’s commit endpoints', () => {
  it('lists a branch newest first, pages with a Link header, and filters by path', async () => {
    const first = await client.restResponse<CommitJson[]>('GET', '/repos/acme/api/commits?per_page=2');
    expect(first.data.map((c) => c.sha)).toEqual([main[3], main[2]]);
    expect(String(first.headers.link)).toContain('page=2');
    const page2 = await client.rest<CommitJson[]>('GET', '/repos/acme/api/commits?per_page=2&page=2');
    expect(page2.map((c) => c.sha)).toEqual([main[1], main[0]]);
    const src = await client.rest<CommitJson[]>('GET', '/repos/acme/api/commits?path=src');
    expect(src.map((c) => c.sha)).toEqual([main[3], main[1]]);
    const onRelease = await client.rest<CommitJson[]>('GET', '/repos/acme/api/commits?sha=release');
    expect(onRelease.map((c) => c.sha)).toEqual([main[1], main[0]]);
  });

  it('answers one commit with its files and stats against its first parent', async () => {
    const commit = await client.rest<CommitJson>('GET', `/repos/acme/api/commits/${main[3]}`);
    expect(commit.commit.message).toBe('Change the app');
    expect(commit.author?.login).toBe('bob');
    expect(commit.parents.map((p) => p.sha)).toEqual([main[2]]);
    expect(commit.files?.map((f) => f.filename)).toEqual(['src/app.ts']);
    expect(commit.stats).toEqual({ additions: 2, deletions: 1, total: 3 });
    const root = await client.rest<CommitJson>('GET', `/repos/acme/api/commits/${main[0]}`);
    expect(root.files?.map((f) => f.filename)).toEqual(['README.md']);
    await expect(client.rest('GET', '/repos/acme/api/commits/nosuchref')).rejects.toThrow();
  });
});

describe('github-commits: discovery', () => {
  it('offers the default branch’s commits oldest first, keyed by sha, with their fields', async () => {
    const items = await discover('');
    expect(items.map((i) => i.itemKey)).toEqual(main.map((sha) => `commit:${sha}`));
    const added = items[1]!;
    expect(added.id).toBe(main[1]);
    expect(added.title).toBe('Add the app');
    expect(added.body).toBe('First version.');
    expect(added.fields).toMatchObject({
      commit_sha: main[1],
      commit_short_sha: main[1]!.slice(0, 7),
      commit_message: 'Add the app\n\nFirst version.',
      commit_author: 'bob',
      commit_author_name: 'bob',
      commit_branch: 'main',
      commit_parents: [main[0]],
    });
    expect(added.volatile).toEqual({
      commit_files: ['src/app.ts'],
      commit_additions: 1,
      commit_deletions: 0,
      commit_changed_files: 1,
    });
  });

  it('reads a named branch, and only commits touching `path`', async () => {
    expect((await discover('branch = "release"')).map((i) => i.id)).toEqual([main[0], release]);
    const src = await discover('path = "src/"');
    expect(src.map((i) => i.id)).toEqual([main[1], main[3]]);
    expect(src.every((i) => i.fields.commit_branch === 'main')).toBe(true);
  });

  it('reads at most `lookback` commits, and takes the newest ones it still wants first', async () => {
    expect((await discover('lookback = 2')).map((i) => i.id)).toEqual([main[2], main[3]]);
    // The newest was handled: the batch of one is the next newest, not the oldest.
    const handled = new Set([main[3]]);
    const items = await discover('', 1, (item) => !handled.has(item.id));
    expect(items.map((i) => i.id)).toEqual([main[2]]);
  });

  it('an item’s fingerprint fields leave out what is read per commit (files and diff size)', async () => {
    const [item] = await discover('lookback = 1');
    expect(Object.keys(item!.fields)).not.toContain('commit_files');
    expect(item!.volatile?.commit_files).toEqual(['src/app.ts']);
  });
});
