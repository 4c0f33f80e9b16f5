/**
 * Escalation on GitHub against the simulator and a real state file: failure counts carried in
 * result markers raise the local count only when a trusted author wrote them (a forged marker is
 * ignored), the escalated label holds an item on any host, and its removal lifts the escalation.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadSettingsFromText } from '../config/load.js';
import type { Settings } from '../config/types.js';
import type { Item } from '../core/types.js';
import { FAILED_STATUSES } from '../core/types.js';
import { runInit, taskFromItem } from '../engine/task.js';
import { createGitHubClient } from '../github/client.js';
import { staticTokenSource } from '../github/token.js';
import { silentLogger } from '../log.js';
import { type Simulator, startSimulator } from '../simulator/server.js';
import { SimWorld } from '../simulator/world.js';
import { openStore } from '../store/index.js';
import type { Store } from '../store/types.js';
import { countRun, itemTextDigest } from './budget.js';
import { Escalation, escalateMarker, failuresIn, failuresMarker, predictFailures } from './escalation.js';

const TOKEN = 'escalation-token';
let dir: string;
let store: Store;
let sim: Simulator;
let world: SimWorld;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'curupira-escalation-'));
  store = await openStore(join(dir, 'state.sqlite3'));
  world = new SimWorld();
  world.addToken(TOKEN, 'curupira-bot');
  world.addRepo('acme/api');
  world.addIssue('acme/api', { title: 'Crash', body: 'boom', author: 'bob', labels: ['agent-ready'] });
  sim = await startSimulator({ world });
});
afterEach(async () => {
  await sim.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

function settings(): Settings {
  return loadSettingsFromText(
    `[settings]
workspace_dir = "ws"
state_db_path = "state.sqlite3"
escalated_label = "agent:escalated"
[settings.screening]
required = false
trusted_authors = ["carol"]
[repositories.api]
remote = "https://example.com/acme/api.git"
[agents.profiles.main]
provider = "claude"
[agents.defaults]
profile = "main"
[automations.fix]
trigger_type = "github-issues"
repository = "api"
repo = "acme/api"
labels = ["agent-ready"]
result_comment = true
prompt = "Fix \${issue_title}"
`,
    join(dir, 'settings.toml'),
  ).settings;
}

function task(s: Settings, labels: string[] = ['agent-ready']) {
  const item: Item = {
    id: '1',
    title: 'Crash',
    url: 'https://github.com/acme/api/issues/1',
    body: 'boom',
    itemKey: 'issue:1',
    fields: { issue_number: '1', issue_title: 'Crash', issue_body: 'boom', issue_labels: labels },
  };
  return taskFromItem(s.automations[0]!, item);
}

function escalation(s: Settings): Escalation {
  const client = createGitHubClient({ apiUrl: sim.url, tokens: staticTokenSource(TOKEN) });
  return new Escalation({ store, settings: () => s, github: () => client, log: silentLogger() });
}

describe('escalation markers', () => {
  it('parses only the automation’s own count on the same text', () => {
    const body = `x ${failuresMarker('fix', 2, 'abcd')} ${failuresMarker('other', 9, 'abcd')} ${failuresMarker('fix', 5, 'ffff')}`;
    expect(failuresIn(body, 'fix', 'abcd')).toBe(2);
    expect(failuresIn(body, 'fix', 'ffff')).toBe(5);
    expect(failuresIn(body, 'nope', 'abcd')).toBe(0);
  });

  it('another host’s count raises the local one; a forged marker by a stranger is ignored', async () => {
    const s = settings();
    const t = task(s);
    const digest = itemTextDigest(t);
    world.addComment('acme/api', 1, {
      author: 'mallory',
      body: `forged ${failuresMarker('fix', 50, digest)}`,
    });
    world.addComment('acme/api', 1, {
      author: 'curupira-bot',
      body: `result ${failuresMarker('fix', 2, digest)}`,
    });
    expect(await escalation(s).gate(s.automations[0]!, t)).toBe('run');
    expect((await store.getItemFailures(t.key))?.failures).toBe(2);
    // A trusted author's (trusted_authors) count counts too.
    world.addComment('acme/api', 1, { author: 'carol', body: `relayed ${failuresMarker('fix', 3, digest)}` });
    await escalation(s).gate(s.automations[0]!, t);
    expect((await store.getItemFailures(t.key))?.failures).toBe(3);
    // Never lowered, never escalated by itself.
    expect((await store.getItemFailures(t.key))?.escalatedAt).toBeNull();
  });

  it('the escalated label holds the item on a host that never counted it', async () => {
    const s = settings();
    expect(await escalation(s).gate(s.automations[0]!, task(s, ['agent-ready', 'agent:escalated']))).toBe(
      'held',
    );
  });

  it('removing the label lifts a local escalation once its label went out', async () => {
    const s = settings();
    const t = task(s);
    for (let i = 0; i < 3; i += 1) {
      await store.recordItemFailure({
        taskKey: t.key,
        automationId: 'fix',
        itemKey: 'issue:1',
        runId: 'r_3',
        textDigest: itemTextDigest(t),
        limit: 3,
      });
    }
    const e = escalation(s);
    // The label write is not sent yet: the local budget stays in charge.
    await e.gate(s.automations[0]!, t);
    expect((await store.getItemFailures(t.key))?.escalatedAt).not.toBeNull();
    const row = await store.enqueueWrite({
      marker: escalateMarker('r_3', 'label'),
      repo: 'acme/api',
      number: 1,
      write: { kind: 'add-labels', labels: [{ name: 'agent:escalated' }] },
      notBefore: new Date().toISOString(),
    });
    await store.updateWrite(row.id, { status: 'sent' });
    world.addLabels('acme/api', 1, ['agent:escalated'], 'curupira-bot');
    await e.gate(s.automations[0]!, t);
    expect((await store.getItemFailures(t.key))?.escalatedAt).not.toBeNull();
    world.removeLabel('acme/api', 1, 'agent:escalated', 'alice');
    expect(await e.gate(s.automations[0]!, t)).toBe('run');
    expect(await store.getItemFailures(t.key)).toBeUndefined();
  });
});

describe('the failure count a result comment carries', () => {
  it('counts every failed status the local budget counts: failed, timed out and stalled', async () => {
    const s = settings();
    const t = task(s);
    const automation = s.automations[0]!;
    const base = { automationId: automation.id, itemKey: t.item.itemKey, textDigest: itemTextDigest(t) };
    await store.recordItemFailure({ ...base, taskKey: t.key, runId: 'r0', limit: 5 });
    for (const status of FAILED_STATUSES) {
      const run = await store.createRun({ ...runInit(automation, t, 'preparing') });
      const finished = await store.updateRun(run.id, { status });
      // What another host reads in the comment is what countRun will store here.
      const predicted = await predictFailures(store, t, finished);
      const counted = await countRun(store, s, automation, t, finished);
      expect(counted.status).toBe(status);
      expect((await store.getItemFailures(t.key))?.failures).toBe(predicted);
    }
    expect((await store.getItemFailures(t.key))?.failures).toBe(1 + FAILED_STATUSES.length);
  });
});
