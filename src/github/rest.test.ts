/**
 * Every REST operation of the port (rest.ts, direct-writes.ts) is checked against GitHub's
 * published REST description (`paths` of @octokit/openapi-types): its method and path must be one
 * GitHub documents, so a misspelt path fails here rather than against GitHub.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { GitHubClient } from './client.js';
import * as direct from './direct-writes.js';
import * as rest from './rest.js';

/** `METHOD /template` of every operation GitHub documents. */
function documented(): { method: string; pattern: RegExp; template: string }[] {
  const require = createRequire(import.meta.url);
  const dir = dirname(require.resolve('@octokit/openapi-types/package.json'));
  const text = readFileSync(join(dir, 'types.d.ts'), 'utf8');
  const body = text.slice(text.indexOf('export interface paths {'), text.indexOf('\nexport type webhooks'));
  const out: { method: string; pattern: RegExp; template: string }[] = [];
  let template: string | undefined;
  for (const line of body.split('\n')) {
    const path = /^ {2}"(\/[^"]*)": \{$/.exec(line);
    if (path) {
      template = path[1]!;
      continue;
    }
    const method = /^ {4}(get|post|put|patch|delete): operations\[/.exec(line);
    if (method && template) {
      // A git ref keeps its slashes in a path (`compare/main...curupira/fix-1`); other parameters are one segment.
      const source = template
        .replace(/[.*+?^$()|[\]\\]/g, '\\$&')
        .replace(/\{(basehead|ref|branch)\}/g, '.+')
        .replace(/\{[^}]+\}/g, '[^/]+');
      out.push({ method: method[1]!.toUpperCase(), pattern: new RegExp(`^${source}$`), template });
    }
  }
  return out;
}

const DOCUMENTED = documented();

function isDocumented(method: string, path: string): boolean {
  const bare = path.split('?')[0]!;
  return DOCUMENTED.some((d) => d.method === method && d.pattern.test(bare));
}

interface Sent {
  method: string;
  path: string;
}

function recorder(): { client: Pick<GitHubClient, 'rest' | 'conditionalGet'>; sent: Sent[] } {
  const sent: Sent[] = [];
  return {
    sent,
    client: {
      async rest<T>(method: string, path: string) {
        sent.push({ method, path });
        return {} as T;
      },
      async conditionalGet(path: string, etag: string | undefined) {
        sent.push({ method: 'GET', path });
        return { changed: true, etag };
      },
    },
  };
}

const R = 'acme/api';
type Call = (client: Pick<GitHubClient, 'rest' | 'conditionalGet'>) => Promise<unknown>;

/** One sample call per operation; the test below fails when an exported operation has none. */
const CALLS: Record<string, Call> = {
  getAuthenticatedUser: (c) => rest.getAuthenticatedUser(c),
  getRepository: (c) => rest.getRepository(c, R),
  getCollaboratorPermission: (c) => rest.getCollaboratorPermission(c, R, 'alice'),
  probeIssueChanges: (c) => rest.probeIssueChanges(c, R, undefined),
  getIssue: (c) => rest.getIssue(c, R, 1),
  listIssueLabels: (c) => rest.listIssueLabels(c, R, 1),
  listIssueComments: (c) => rest.listIssueComments(c, R, 1, 2),
  listIssuesByCreator: (c) => rest.listIssuesByCreator(c, R, { creator: 'octocat', label: 'agent:log' }, 1),
  listClosedIssues: (c) => rest.listClosedIssues(c, R, 1),
  getLabel: (c) => rest.getLabel(c, R, 'agent:log'),
  listOpenPullsByHead: (c) => rest.listOpenPullsByHead(c, R, 'curupira/fix-1'),
  getPull: (c) => rest.getPull(c, R, 2),
  listPullReviews: (c) => rest.listPullReviews(c, R, 2),
  listPullReviewComments: (c) => rest.listPullReviewComments(c, R, 2, 1),
  listPullFiles: (c) => rest.listPullFiles(c, R, 2, 1),
  compareCommits: (c) => rest.compareCommits(c, R, 'main', 'curupira/fix-1'),
  listCommits: (c) => rest.listCommits(c, R, { sha: 'main', path: 'src', count: 20 }),
  getCommit: (c) => rest.getCommit(c, R, 'abc1234'),
  getBranch: (c) => rest.getBranch(c, R, 'release/1.x'),
  getRequiredStatusChecks: (c) => rest.getRequiredStatusChecks(c, R, 'main'),
  listCheckRunsForRef: (c) => rest.listCheckRunsForRef(c, R, 'abc123', 1),
  getCombinedStatus: (c) => rest.getCombinedStatus(c, R, 'abc123'),
  getActionsJob: (c) => rest.getActionsJob(c, R, 7),
  downloadJobLogs: (c) => rest.downloadJobLogs(c, R, 7),
  createPullRequest: (c) =>
    direct.createPullRequest(c, R, { title: 't', body: 'b', head: 'h', base: 'main', draft: true }),
  updatePullRequestBody: (c) => direct.updatePullRequestBody(c, R, 2, 'b'),
  mergePullRequest: (c) => direct.mergePullRequest(c, R, 2, { method: 'squash', sha: 'abc123' }),
  updatePullRequestBranch: (c) => direct.updatePullRequestBranch(c, R, 2, 'abc123'),
  rerunFailedJobs: (c) => direct.rerunFailedJobs(c, R, 77),
  createIssueComment: (c) => direct.createIssueComment(c, R, 1, 'lease'),
  updateIssueComment: (c) => direct.updateIssueComment(c, R, 5, 'lease'),
  deleteIssueComment: (c) => direct.deleteIssueComment(c, R, 5),
};

/** Path helpers, not requests. */
const HELPERS = new Set(['repoPath', 'issuePath', 'refPath', 'withServerDate']);

describe('REST operations against GitHub’s REST description', () => {
  it('every exported operation has a sample call', () => {
    const exported = [...Object.entries(rest), ...Object.entries(direct)]
      .filter(([name, value]) => typeof value === 'function' && !HELPERS.has(name))
      .map(([name]) => name)
      .sort();
    expect(Object.keys(CALLS).sort()).toEqual(exported);
  });

  it.each(Object.entries(CALLS))('%s sends a documented method and path', async (_name, call) => {
    const { client, sent } = recorder();
    await call(client);
    expect(sent).toHaveLength(1);
    const [{ method, path }] = sent as [Sent];
    expect(isDocumented(method, path), `${method} ${path}`).toBe(true);
  });

  it('the check fails on a misspelt path or a wrong method', () => {
    expect(DOCUMENTED.length).toBeGreaterThan(500);
    expect(isDocumented('GET', '/repos/acme/api/pulls/2')).toBe(true);
    expect(isDocumented('GET', '/repos/acme/api/pull/2')).toBe(false);
    expect(isDocumented('POST', '/repos/acme/api/pulls/2')).toBe(false);
  });
});
