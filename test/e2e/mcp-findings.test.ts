/**
 * Issue 29, the findings tools: `curupira mcp --run ID --commit SHA` (the built CLI over stdio, the
 * MCP SDK's client standing in for a review's agent) offers only findings_list, findings_report,
 * findings_resolve and findings_done, acting for that run's watch and commit. Two reviews: the
 * second finds one problem again (the same finding, last seen moved), resolves one, finds a new one.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { reviewDoneKey } from '../../src/review/progress.js';
import { CLI, createHarness, type Harness, ROOT, runBuiltCli } from '../helpers/harness.js';
import { serveInProcess } from '../helpers/serve.js';

let h: Harness;
const clients: Client[] = [];

beforeEach(async () => {
  h = await createHarness();
});
afterEach(async () => {
  for (const c of clients.splice(0)) await c.close();
  await h.cleanup();
});

async function reviewRun(): Promise<string> {
  const store = await h.openStore();
  try {
    const run = await store.createRun({
      automationId: 'fix',
      taskKey: 'fix:review',
      repo: 'acme/api',
      taskType: 'review',
      itemId: 'review',
      itemKey: 'review',
      itemTitle: 'Review',
      itemUrl: 'https://github.com/acme/api',
      status: 'running',
    });
    return run.id;
  } finally {
    await store.close();
  }
}

async function agent(runId: string, commit: string) {
  const c = new Client({ name: 'review-agent', version: '1.0.0' });
  clients.push(c);
  const env = Object.fromEntries(
    Object.entries(h.env).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
  await c.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'mcp', '-c', h.settingsFile, '--run', runId, '--commit', commit],
      env,
      cwd: ROOT,
      stderr: 'pipe',
    }),
  );
  return async (name: string, args: Record<string, unknown> = {}) => {
    const result = (await c.callTool({ name, arguments: args })) as {
      content: { text: string }[];
      structuredContent?: Record<string, unknown>;
      isError?: boolean;
    };
    return {
      text: result.content[0]!.text,
      data: result.structuredContent ?? {},
      isError: result.isError === true,
    };
  };
}

const sql = {
  file: 'src/db.ts',
  line_start: 10,
  line_end: 12,
  severity: 'high',
  category: 'security',
  title: 'SQL built from user input',
  detail: 'The query concatenates `name`.',
};
const leak = {
  file: 'src/log.ts',
  line_start: 3,
  severity: 'medium',
  category: 'security',
  title: 'Token written to the log',
  detail: 'The Authorization header is logged.',
};

describe('the findings tools', () => {
  it('offer only the findings tools to a review run', async () => {
    const runId = await reviewRun();
    await agent(runId, 'a'.repeat(40));
    const { tools } = await clients[0]!.listTools();
    expect(tools.map((t) => t.name)).toEqual([
      'findings_list',
      'findings_report',
      'findings_resolve',
      'findings_done',
    ]);
    expect(clients[0]!.getInstructions()).toContain('findings_report');
  });

  it('record, deduplicate and resolve findings across two reviews; done leaves its word for the run', async () => {
    const c1 = 'a'.repeat(40);
    const first = await agent(await reviewRun(), c1);
    expect((await first('findings_list')).text).toBe('No open findings.');
    const reported = await first('findings_report', sql);
    expect(reported.isError).toBe(false);
    expect(reported.text).toMatch(
      /^Recorded: #\d+ \[open\] high security src\/db\.ts:10-12 SQL built from user input$/,
    );
    expect((await first('findings_report', leak)).data.outcome).toBe('new');
    // The same finding sent twice by one run: not "known" from an earlier review.
    const twice = await first('findings_report', sql);
    expect(twice.data.outcome).toBe('seen-again');
    expect(twice.text).toMatch(/^Already reported in this run; updated: #\d+ \[open\] high security/);
    expect((await first('findings_report', { ...sql, file: '../etc/passwd' })).text).toBe(
      'file must stay inside the repository (no `..`)',
    );
    expect(
      (await first('findings_done', { summary: 'Two problems.', reviewed_commit: 'b'.repeat(40) })).isError,
    ).toBe(true);
    expect((await first('findings_done', { summary: 'Two problems.', reviewed_commit: c1 })).text).toBe(
      `Review done at ${c1}.`,
    );

    const c2 = 'c'.repeat(40);
    const secondRun = await reviewRun();
    const second = await agent(secondRun, c2);
    const open = (await second('findings_list')).data.findings as { id: number; title: string }[];
    expect(open.map((f) => f.title)).toEqual([sql.title, leak.title]);
    const again = await second('findings_report', {
      ...sql,
      line_start: 14,
      line_end: 16,
      title: 'SQL built from user-input',
    });
    expect(again.data.outcome).toBe('seen-again');
    expect(again.text).toMatch(/^Already known; seen again: #\d+ \[open\]/);
    expect(again.data.finding).toMatchObject({
      id: open[0]!.id,
      firstSeenCommit: c1,
      lastSeenCommit: c2,
      lineStart: 14,
    });
    const resolved = await second('findings_resolve', {
      id: open[1]!.id,
      resolution: 'The header is redacted now.',
    });
    expect(resolved.text).toMatch(/^Resolved: #\d+ \[resolved\]/);
    expect((await second('findings_resolve', { id: open[1]!.id, resolution: 'again' })).isError).toBe(true);
    const fresh = await second('findings_report', {
      file: 'src/api.ts',
      line_start: 40,
      severity: 'low',
      category: 'bug',
      title: 'Off-by-one in paging',
      detail: 'The last page is skipped.',
    });
    expect(fresh.data.outcome).toBe('new');
    await second('findings_done', {
      summary: 'One fixed, one still there, one new.',
      reviewed_commit: 'cccccccc',
    });

    const all = (await second('findings_list', { status: 'all' })).data.findings as {
      title: string;
      status: string;
      lastSeenCommit: string;
      resolvedCommit: string | null;
    }[];
    expect(all.map((f) => [f.title, f.status, f.lastSeenCommit, f.resolvedCommit])).toEqual([
      ['SQL built from user-input', 'open', c2, null],
      [leak.title, 'resolved', c1, c2],
      ['Off-by-one in paging', 'open', c2, null],
    ]);
    // The CLI lists them (open by default; --status all; --json).
    const listed = await runBuiltCli(['findings', '-c', h.settingsFile], { env: h.env });
    expect(listed.stderr).toBe('');
    expect(listed.stdout.split('\n').filter(Boolean)).toEqual([
      expect.stringMatching(
        /^#\d+ +fix +high +security +src\/db\.ts:14-16 {2}SQL built from user-input {2}\(last seen at cccccccccccc\)$/,
      ),
      expect.stringMatching(
        /^#\d+ +fix +low +bug +src\/api\.ts:40 {2}Off-by-one in paging {2}\(last seen at cccccccccccc\)$/,
      ),
    ]);
    const resolvedOnly = await runBuiltCli(['findings', '-c', h.settingsFile, '--status', 'resolved'], {
      env: h.env,
    });
    expect(resolvedOnly.stdout).toMatch(
      /src\/log\.ts:3 {2}Token written to the log {2}\(resolved at cccccccccccc\)\n$/,
    );
    const json = await runBuiltCli(
      ['findings', '-c', h.settingsFile, '--status', 'all', '--json', '--watch', 'fix'],
      {
        env: h.env,
      },
    );
    expect((JSON.parse(json.stdout) as unknown[]).length).toBe(3);
    expect(
      (await runBuiltCli(['findings', '-c', h.settingsFile, '--watch', 'other'], { env: h.env })).stdout,
    ).toBe('No open findings for other.\n');

    const store = await h.openStore();
    try {
      expect(JSON.parse((await store.getMeta(reviewDoneKey(secondRun)))!)).toMatchObject({
        summary: 'One fixed, one still there, one new.',
        reviewedCommit: c2,
      });
    } finally {
      await store.close();
    }
  });

  it('the API lists them: GET /api/v1/findings (open by default; status, watch)', async () => {
    const report = await agent(await reviewRun(), 'd'.repeat(40));
    await report('findings_report', sql);
    const { data } = await report('findings_report', leak);
    await report('findings_resolve', { id: (data.finding as { id: number }).id, resolution: 'fixed' });
    const served = await serveInProcess(h);
    try {
      const get = async (path: string) => {
        const response = await served.app.request(path, {
          headers: { authorization: `Bearer ${served.token}` },
        });
        return {
          status: response.status,
          body: (await response.json()) as { findings?: { title: string }[] },
        };
      };
      expect((await get('/api/v1/findings')).body.findings!.map((f) => f.title)).toEqual([sql.title]);
      expect((await get('/api/v1/findings?status=all&watch=fix')).body.findings).toHaveLength(2);
      expect((await get('/api/v1/findings?watch=other')).body.findings).toEqual([]);
      expect((await get('/api/v1/findings?status=closed')).status).toBe(400);
    } finally {
      await served.stop();
    }
  });

  it('refuses an unknown run', async () => {
    const result = await runBuiltCli(['mcp', '-c', h.settingsFile, '--run', 'r_nope', '--commit', 'abc'], {
      env: h.env,
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe('error: no run with id r_nope\n');
  });
});
