/**
 * Every JSON surface stays JSON over text full of secret-like strings: the CLI's `--json` outputs
 * (the built CLI), the API, its server-sent events, the OpenAPI description, the 401 answer and
 * the notification payloads. Secrets are redacted in the values before they are serialized, and
 * placeholders such as `Bearer <token>` are not secrets.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/core/types.js';
import { Notifier, runNotification } from '../../src/notify/index.js';
import { createHarness, type Harness, runBuiltCli } from '../helpers/harness.js';
import { type Served, serveInProcess } from '../helpers/serve.js';

let h: Harness | undefined;
let served: Served | undefined;
afterEach(async () => {
  await served?.stop();
  served = undefined;
  await h?.cleanup();
  h = undefined;
});

/** A secret the CLI knows only from its environment; it holds a quote and a backslash. */
const ENV_SECRET = 'dep"loy\\secret-77';
const SECRETS = [
  'abc.def-123',
  `ghp_${'a'.repeat(36)}`,
  'MIIEpAIBAAKCAQEAfakefakefake',
  'hunter2hunter2',
  'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0',
  `sk-ant-api03-${'x'.repeat(30)}`,
];
const NASTY = [
  'curl -H "Authorization: Bearer <token>" https://api.github.com/user',
  `curl -H "Authorization: Bearer ${SECRETS[0]}" https://api.github.com/user`,
  `\n${SECRETS[1]} after a line break`,
  `-----BEGIN RSA PRIVATE KEY-----\n${SECRETS[2]}\n`,
  'C:\\Users\\me\\"quoted\\"',
  `https://bot:${SECRETS[3]}@github.example/x.git and https://user:<password>@host.example`,
  `AKIAIOSFODNN7EXAMPLE ${SECRETS[4]}`,
  `${SECRETS[5]}.c2lnbmF0dXJl`,
  SECRETS[6],
  `deploy with ${ENV_SECRET}`,
].join('\n');

function parsed(text: string, where: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(`${where} printed invalid JSON (${String(error)}):\n${text}`);
  }
}

function expectNoSecret(text: string, where: string): void {
  for (const secret of SECRETS) expect(text, `${where} shows ${secret}`).not.toContain(secret);
}

async function nastyRun(harness: Harness): Promise<RunRecord> {
  const transcript = join(harness.dir, 'nasty.jsonl');
  // What a claude agent printed: a text event and a tool call quoting the same text.
  writeFileSync(
    transcript,
    `${[
      { type: 'assistant', message: { content: [{ type: 'text', text: NASTY }] } },
      {
        type: 'assistant',
        message: { content: [{ type: 'tool_use', id: 't1', name: 'Bash', input: { command: NASTY } }] },
      },
    ]
      .map((line) => JSON.stringify(line))
      .join('\n')}\n`,
  );
  const store = await harness.openStore();
  try {
    const run = await store.createRun({
      automationId: 'fix',
      taskKey: 'fix:issue:1',
      repo: 'acme/api',
      taskType: 'github-issues',
      itemId: '1',
      itemKey: 'issue:1',
      itemTitle: NASTY,
      itemUrl: 'https://github.com/acme/api/issues/1',
      status: 'failed',
      prompt: NASTY,
    });
    return await store.updateRun(run.id, {
      reason: NASTY,
      provider: 'claude',
      transcriptPath: transcript,
      finishedAt: new Date().toISOString(),
    });
  } finally {
    await store.close();
  }
}

describe('every JSON surface over secret-like text', () => {
  it('the CLI, the API, its events, the OpenAPI description and notifications all parse', async () => {
    h = await createHarness({ issues: [] });
    const run = await nastyRun(h);
    const env = { ...h.env, DEPLOY_TOKEN: ENV_SECRET };
    const config = ['-c', h.settingsFile];

    // The CLI's --json outputs.
    for (const args of [
      ['runs', '--json'],
      ['runs', 'show', run.id, '--json'],
      ['validate', '--json'],
      ['gc', '--json', '--dry-run'],
    ]) {
      const result = await runBuiltCli([...args, ...config], { env });
      const where = `curupira ${args.join(' ')}`;
      expect(result.stderr, where).toBe('');
      const value = parsed(result.stdout, where);
      expectNoSecret(result.stdout, where);
      expect(result.stdout, where).not.toContain('dep\\"loy');
      if (args[0] === 'runs') {
        const shown = (Array.isArray(value) ? value[0] : value) as RunRecord;
        expect(shown.prompt).toContain('Authorization: Bearer <token>"');
        expect(shown.prompt).toContain('Authorization: Bearer [redacted]"');
        expect(shown.prompt).toContain('https://user:<password>@host.example');
        expect(shown.prompt).toContain('deploy with [redacted]');
      }
    }

    // The API, the OpenAPI description, the 401 answer, the run's events.
    served = await serveInProcess(h);
    const call = (path: string, token: string | null = served!.token) =>
      served!.app.request(path, { headers: token === null ? {} : { authorization: `Bearer ${token}` } });
    for (const path of ['/api/v1/state', '/api/v1/runs', `/api/v1/runs/${run.id}`, '/api/v1/automations']) {
      const text = await (await call(path)).text();
      parsed(text, path);
      expectNoSecret(text, path);
    }
    const one = parsed(await (await call(`/api/v1/runs/${run.id}`)).text(), 'run') as { run: RunRecord };
    expect(one.run.prompt).toContain('Authorization: Bearer <token>"');
    const openapi = parsed(await (await call('/api/v1/openapi.json')).text(), 'openapi') as {
      info: { description: string };
    };
    expect(openapi.info.description).toContain('Authorization: Bearer <token>');
    const refused = await call('/api/v1/runs', null);
    expect(refused.status).toBe(401);
    const error = parsed(await refused.text(), '401') as { error: { message: string } };
    expect(error.error.message).toContain('Authorization: Bearer <token>');
    const events = await (await call(`/api/v1/runs/${run.id}/events`)).text();
    const data = [...events.matchAll(/^data: (.*)$/gm)].map((m) => m[1]!);
    expect(data.length).toBeGreaterThanOrEqual(3);
    for (const line of data) parsed(line, 'an event');
    expectNoSecret(events, 'the events');
    expect(events).toContain('Bearer <token>');

    // Notification payloads, as queued for a webhook and for Slack.
    const notifier = new Notifier({
      store: served.store,
      targets: ['webhook', 'slack'].map((kind) => ({
        name: kind,
        kind: kind as 'webhook' | 'slack',
        url: 'http://127.0.0.1:9/hook',
        events: new Set(['failed' as const]),
      })),
    });
    const event = runNotification('fix', (await served.store.getRun(run.id))!);
    expect(event).toBeDefined();
    const rows = await notifier.notify(event!);
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      parsed(row.payload, `the ${row.target} payload`);
      expectNoSecret(row.payload, `the ${row.target} payload`);
    }
  }, 120_000);
});
