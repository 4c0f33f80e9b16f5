/**
 * `POST /webhooks/github` in front of a stand-in engine: the signature gate (401, nothing polled),
 * de-duplication by delivery id (persisted, so a new store handle still knows it), the route off
 * without a secret (404), and which automations each event concerns.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sign } from '@octokit/webhooks-methods';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadSettingsFromText } from '../config/load.js';
import type { Settings } from '../config/types.js';
import { openStore } from '../store/index.js';
import type { Store } from '../store/types.js';
import { createApp } from './app.js';
import type { EngineView } from './board-data.js';
import { Hub } from './hub.js';
import { concernedAutomations, WEBHOOK_BODY_LIMIT, webhookSecret } from './webhooks.js';

const SECRET = 'webhook-secret-for-tests';

const SETTINGS = `
[repositories.api]
remote = "file:///nowhere/api.git"

[automations.fix]
trigger_type = "github-issues"
repository = "api"
repo = "acme/api"
labels = ["agent-ready"]
prompt = "Fix \${issue_number}"

[automations.web]
trigger_type = "github-issues"
repository = "api"
repo = "acme/web"
prompt = "Fix \${issue_number}"

[automations.review]
trigger_type = "github-pull-requests"
repository = "api"
repo = "acme/api"
prompt = "Review \${pull_request_number}"

[automations.board]
trigger_type = "github-project-items"
repository = "api"
project_owner = "acme"
project_number = 5
status = "Todo"
prompt = "Card"

[automations.commits]
trigger_type = "github-commits"
repository = "api"
repo = "acme/api"
prompt = "Commit"

[automations.nightly]
trigger_type = "cron"
repository = "api"
schedule = "0 3 * * *"
prompt = "Nightly"
`;

let dir: string;
let store: Store;
let settings: Settings;
let polls: string[][];

function engine(): EngineView {
  return {
    automations: () => [],
    currentSettings: () => settings,
    setPaused: async () => undefined,
    trigger: () => 'polling',
    scanNow: () => 'polling',
    cancel: () => undefined,
    retry: async () => 'polling',
    allowed: () => undefined,
    pollNow: (ids) => {
      polls.push([...ids]);
      return [...ids];
    },
  };
}

function app(secret: string | null = SECRET) {
  return createApp({
    store,
    engine: engine(),
    hub: new Hub(),
    token: 'board-token-0000000000',
    version: '0.0.0-test',
    startedAt: Date.now(),
    ...(secret === null ? {} : { webhookSecret: secret }),
  });
}

async function deliver(
  target: ReturnType<typeof app>,
  event: string,
  payload: unknown,
  options: { id?: string; signature?: string | null } = {},
): Promise<Response> {
  const body = JSON.stringify(payload);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'x-github-event': event,
    'x-github-delivery': options.id ?? crypto.randomUUID(),
  };
  const signature = options.signature === undefined ? await sign(SECRET, body) : options.signature;
  if (signature !== null) headers['x-hub-signature-256'] = signature;
  return target.request('/webhooks/github', { method: 'POST', headers, body });
}

const LABELED = {
  action: 'labeled',
  label: { name: 'agent-ready' },
  issue: { number: 1, title: 'x' },
  repository: { full_name: 'acme/api' },
  sender: { login: 'octocat' },
};

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'curupira-webhooks-'));
  store = await openStore(join(dir, 'state.sqlite3'));
  settings = loadSettingsFromText(SETTINGS, join(dir, 'settings.toml')).settings;
  polls = [];
});

afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('POST /webhooks/github', () => {
  it('polls the automations an issues.labeled delivery concerns, answering 202', async () => {
    const response = await deliver(app(), 'issues', LABELED);
    expect(response.status).toBe(202);
    expect(await response.json()).toEqual({ polled: ['fix'] });
    expect(polls).toEqual([['fix']]);
  });

  it('answers 401 and does nothing for a bad, missing or wrongly keyed signature', async () => {
    const target = app();
    const body = JSON.stringify(LABELED);
    for (const signature of [null, 'sha256=00', await sign('another-secret', body), 'garbage']) {
      const response = await deliver(target, 'issues', LABELED, { id: 'same-id', signature });
      expect(response.status).toBe(401);
    }
    expect(polls).toEqual([]);
    // Nothing was recorded either: the real delivery with that id is still acted on.
    expect((await deliver(target, 'issues', LABELED, { id: 'same-id' })).status).toBe(202);
    expect(polls).toEqual([['fix']]);
  });

  it('acts on a delivery id once, also after a restart (the ids are in the store)', async () => {
    expect((await deliver(app(), 'issues', LABELED, { id: 'd-1' })).status).toBe(202);
    const again = await deliver(app(), 'issues', LABELED, { id: 'd-1' });
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ duplicate: true, polled: [] });
    const file = store.path;
    await store.close();
    store = await openStore(file);
    expect((await deliver(app(), 'issues', LABELED, { id: 'd-1' })).status).toBe(200);
    expect(polls).toEqual([['fix']]);
  });

  it('does not exist without a configured secret (404), whatever the signature', async () => {
    const response = await deliver(app(null), 'issues', LABELED);
    expect(response.status).toBe(404);
    expect(polls).toEqual([]);
  });

  it('refuses a body over the size limit (413) and a signed body that is not JSON (400)', async () => {
    const target = app();
    const huge = 'x'.repeat(WEBHOOK_BODY_LIMIT + 1);
    const big = await target.request('/webhooks/github', {
      method: 'POST',
      headers: {
        'x-github-event': 'issues',
        'x-github-delivery': 'd-big',
        'x-hub-signature-256': await sign(SECRET, huge),
      },
      body: huge,
    });
    expect(big.status).toBe(413);
    const text = 'not json';
    const bad = await target.request('/webhooks/github', {
      method: 'POST',
      headers: {
        'x-github-event': 'issues',
        'x-github-delivery': 'd-bad',
        'x-hub-signature-256': await sign(SECRET, text),
      },
      body: text,
    });
    expect(bad.status).toBe(400);
    expect(polls).toEqual([]);
  });

  it('reads the form encoding GitHub can send (payload=…), signed over the raw body', async () => {
    const body = new URLSearchParams({ payload: JSON.stringify(LABELED) }).toString();
    const response = await app().request('/webhooks/github', {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-github-event': 'issues',
        'x-github-delivery': 'd-form',
        'x-hub-signature-256': await sign(SECRET, body),
      },
      body,
    });
    expect(response.status).toBe(202);
    expect(polls).toEqual([['fix']]);
  });
});

describe('which automations a delivery concerns', () => {
  const on = (event: string, payload: Record<string, unknown>) =>
    concernedAutomations(settings.automations, event, payload);

  it('matches the trigger type and the repository, never schedules', () => {
    expect(on('issues', { repository: { full_name: 'ACME/api' } })).toEqual(['fix']);
    expect(on('issues', { repository: { full_name: 'acme/web' } })).toEqual(['web']);
    expect(on('pull_request', { repository: { full_name: 'acme/api' } })).toEqual(['review']);
    expect(on('pull_request_review', { repository: { full_name: 'acme/api' } })).toEqual(['review']);
    expect(
      on('issue_comment', { repository: { full_name: 'acme/api' }, issue: { pull_request: {} } }),
    ).toEqual(['review']);
    expect(on('issue_comment', { repository: { full_name: 'acme/api' }, issue: {} })).toEqual(['fix']);
    expect(on('projects_v2_item', { organization: { login: 'acme' } })).toEqual(['board']);
    expect(on('projects_v2_item', { organization: { login: 'other' } })).toEqual([]);
    expect(on('push', { repository: { full_name: 'acme/api' } })).toEqual(['commits']);
    expect(on('push', { repository: { full_name: 'acme/web' } })).toEqual([]);
    expect(on('ping', {})).toEqual([]);
  });
});

describe('github_webhook_secret_env', () => {
  it('reads the secret from the variable it names; an unset one stops the start, located in the file', () => {
    const text = `[settings]\ngithub_webhook_secret_env = "HOOK_SECRET"\n${SETTINGS}`;
    const file = join(dir, 'settings.toml');
    writeFileSync(file, text);
    const configured = loadSettingsFromText(text, file).settings;
    expect(webhookSecret(configured, { HOOK_SECRET: SECRET })).toBe(SECRET);
    expect(() => webhookSecret(configured, {})).toThrow(
      `settings.github_webhook_secret_env: environment variable HOOK_SECRET is not set (the GitHub webhook secret is read from it) (${file}:2:1)`,
    );
    expect(webhookSecret(settings, {})).toBeUndefined();
  });
});
