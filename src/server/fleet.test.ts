/**
 * The fleet on the board and the API (issue 17), with a fake FleetView: `GET /api/v1/fleet`, the
 * fleet page and its live part, the board's fleet badge, a run's host on its card and its page,
 * everything escaped (a row in the database can hold any text); and without a fleet, nothing of it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadDrivers } from '../agents/registry.js';
import { loadSettingsFromText } from '../config/load.js';
import type { Settings } from '../config/types.js';
import type { RunRecord } from '../core/types.js';
import type { DispatchRecord, FleetHost, FleetView } from '../fleet/types.js';
import { openStore } from '../store/index.js';
import type { Store } from '../store/types.js';
import { createApp } from './app.js';
import type { EngineView } from './board-data.js';
import { Hub } from './hub.js';
import { openApiDocument } from './openapi.js';
import { boardPage, fleetPage, runPage } from './pages.js';

const EVIL = '<script>alert("x")</script>';
const TOKEN = 'board-token-0000000000';
const NOW = Date.parse('2026-12-01T12:00:00.000Z');

function fleetHost(overrides: Partial<FleetHost> = {}): FleetHost {
  return {
    name: 'build-1',
    role: 'all',
    pid: 4242,
    instance: 'i-1',
    version: '0.9.0',
    startedAt: '2026-12-01T10:00:00.000Z',
    heartbeatAt: '2026-12-01T11:59:57.000Z',
    capacity: 4,
    load: 2,
    checkouts: ['acme/api'],
    polling: true,
    capabilities: null,
    machine: null,
    stoppedAt: null,
    health: 'healthy',
    ...overrides,
  };
}

function dispatch(overrides: Partial<DispatchRecord> = {}): DispatchRecord {
  return {
    id: '0b6f3c1e-0000-4000-8000-000000000001',
    taskKey: 'fix:issue:7',
    automationId: 'fix',
    repo: 'acme/api',
    host: 'build-1',
    state: 'running',
    runId: 'r_0000000001AAAAAAAA',
    enqueuedAt: '2026-12-01T11:58:00.000Z',
    startedAt: '2026-12-01T11:58:01.000Z',
    finishedAt: null,
    settledAt: null,
    detail: null,
    previousId: null,
    refused: false,
    ...overrides,
  };
}

function fakeFleet(
  hosts: FleetHost[],
  dispatches: DispatchRecord[] = [],
  transcripts = new Map<string, string>(),
): FleetView {
  return {
    hosts: async () => hosts,
    liveDispatches: async () => dispatches,
    transcript: async (runId) => transcripts.get(runId),
    waiting: async () => [],
  };
}

const SETTINGS = `
[repositories.api]
remote = "file:///nowhere/api.git"

[automations.fix]
trigger_type = "github-issues"
repository = "api"
repo = "acme/api"
prompt = "Fix \${issue_number}"
`;

let dir: string;
let store: Store;
let settings: Settings;

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
    pollNow: () => [],
  };
}

function app(fleet?: FleetView) {
  return createApp({
    store,
    engine: engine(),
    hub: new Hub(),
    token: TOKEN,
    version: '0.0.0-test',
    startedAt: Date.now(),
    ...(fleet === undefined ? {} : { fleet }),
  });
}

async function get(target: ReturnType<typeof app>, path: string): Promise<Response> {
  return target.request(path, { headers: { authorization: `Bearer ${TOKEN}` } });
}

function noScript(text: string): void {
  expect(text.replace(/<script src="\/assets\/[a-z]+\.js" defer><\/script>/g, '')).not.toMatch(/<script/i);
}

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'curupira-fleet-'));
  store = await openStore(join(dir, 'state.sqlite3'));
  settings = loadSettingsFromText(SETTINGS, join(dir, 'settings.toml')).settings;
});

afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('GET /api/v1/fleet', () => {
  it('answers the hosts and the unsettled dispatches as the fleet view gives them', async () => {
    const hosts = [
      fleetHost(),
      fleetHost({ name: 'build-2', role: 'worker', polling: false, health: 'gone' }),
    ];
    const dispatches = [dispatch()];
    const response = await get(app(fakeFleet(hosts, dispatches)), '/api/v1/fleet');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('application/json');
    expect(await response.json()).toEqual({ hosts, dispatches, waiting: [] });
  });

  it('is 404 with a clear JSON error on the embedded store, and needs the token like every route', async () => {
    const response = await get(app(), '/api/v1/fleet');
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({
      error: {
        code: 'no_fleet',
        message:
          'no fleet: this curupira keeps its state in one process (state_db_path); a fleet needs state_db_url (docs/deployment.md)',
      },
    });
    const anonymous = await app(fakeFleet([fleetHost()])).request('/api/v1/fleet');
    expect(anonymous.status).toBe(401);
  });

  it('is 500 with the error when the fleet cannot be read', async () => {
    const broken: FleetView = {
      hosts: async () => {
        throw new Error('connection terminated');
      },
      liveDispatches: async () => [],
      transcript: async () => undefined,
      waiting: async () => [],
    };
    const response = await get(app(broken), '/api/v1/fleet');
    expect(response.status).toBe(500);
    expect(await response.json()).toEqual({ error: { code: 'internal', message: 'connection terminated' } });
  });

  it('is described in the OpenAPI document, with no_fleet among the error codes', () => {
    const spec = openApiDocument('0.0.0-test') as {
      paths: Record<string, unknown>;
      components: {
        schemas: { Error: { properties: { error: { properties: { code: { enum: string[] } } } } } };
      };
    };
    expect(Object.keys(spec.paths)).toContain('/fleet');
    expect(spec.components.schemas.Error.properties.error.properties.code.enum).toContain('no_fleet');
  });
});

describe('the fleet page', () => {
  it('lists every host: name, role, health, load/capacity, heartbeat age, poller, checkouts, what it can run, version', async () => {
    const hosts = [
      fleetHost({ name: 'poll-1', role: 'poller', capacity: 0, load: 0, checkouts: [], polling: true }),
      fleetHost({
        name: 'build-2',
        role: 'worker',
        polling: false,
        health: 'late',
        heartbeatAt: '2026-12-01T11:58:55.000Z',
        checkouts: ['acme/api', 'acme/web'],
        capabilities: {
          automations: ['fix', 'triage'],
          repositories: ['acme/api'],
          providers: ['claude'],
          sandbox: 'none',
        },
        version: '0.9.1',
      }),
    ];
    const text = fleetPage(hosts, [dispatch({ host: 'build-2' })], TOKEN, NOW).text;
    const rows = [...text.matchAll(/<tr class="host[\s\S]*?<\/tr>/g)].map((m) =>
      m[0]
        .replace(/\s*\n\s*/g, '')
        .replace(/<[^>]+>/g, '|')
        .replace(/\|+/g, '|'),
    );
    expect(rows).toEqual([
      '|build-2|worker|late|2/4|1m05s ago|-|acme/api, acme/web|fix, triage|0.9.1|4242 · |2026-12-01 10:00 UTC|',
      '|poll-1|poller|healthy|-|3s ago|polling|-|-|0.9.0|4242 · |2026-12-01 10:00 UTC|',
    ]);
    expect(text).toContain('<tr class="host health-late" data-host="build-2">');
    expect(text).toContain('<a href="/runs/r_0000000001AAAAAAAA">r_0000000001AAAAAAAA</a>');
    expect(text).toContain('<script src="/assets/fleet.js" defer></script>');
  });

  it('escapes a hostile host name, version, checkout, task key and detail read from the database', () => {
    const hosts = [
      fleetHost({
        name: `evil${EVIL}`,
        version: EVIL,
        checkouts: [EVIL],
        role: EVIL as FleetHost['role'],
        health: EVIL as FleetHost['health'],
        heartbeatAt: EVIL,
        stoppedAt: EVIL,
      }),
    ];
    const dispatches = [
      dispatch({
        host: EVIL,
        taskKey: EVIL,
        automationId: EVIL,
        repo: EVIL,
        detail: `taken back: ${EVIL}`,
        runId: `r_1"><script>`,
        state: EVIL as DispatchRecord['state'],
        enqueuedAt: EVIL,
      }),
    ];
    const text = fleetPage(hosts, dispatches, TOKEN, NOW).text;
    noScript(text);
    expect(text).toContain('<td class="name">evil&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;</td>');
    expect(text).toContain('data-host="evil&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;"');
    expect(text).toContain('taken back: &lt;script&gt;');
    expect(text).toContain('<a href="/runs/r_1%22%3E%3Cscript%3E">r_1&quot;&gt;&lt;script&gt;</a>');
    // An unparseable heartbeat time says so instead of printing NaN.
    expect(text).toContain('? ago');
    expect(text).not.toContain('NaN');
  });

  it('lists the tasks no live worker can run, with why (escaped), and has no such section when there are none', () => {
    const waiting = [
      {
        taskKey: 'extra:issue:8',
        automationId: 'extra',
        repo: 'acme/api',
        reason: 'no live worker can run it: build-1 has no automation extra',
        since: '2026-12-01T11:59:00.000Z',
      },
      { taskKey: EVIL, automationId: EVIL, repo: EVIL, reason: EVIL, since: EVIL },
    ];
    const text = fleetPage([fleetHost()], [], TOKEN, NOW, waiting).text;
    noScript(text);
    expect(text).toContain('Waiting: no live worker can run them <span class="count">2</span>');
    const row = /<tr class="waiting" data-task="extra:issue:8">[\s\S]*?<\/tr>/.exec(text)?.[0] ?? '';
    expect(
      row
        .replace(/\s*\n\s*/g, '')
        .replace(/<[^>]+>/g, '|')
        .replace(/\|+/g, '|'),
    ).toBe('|extra|acme/api|extra:issue:8|1m00s|no live worker can run it: build-1 has no automation extra|');
    expect(fleetPage([fleetHost()], [], TOKEN, NOW).text).not.toContain('Waiting:');
  });

  it('says so when no host has a row yet, and when nothing is dispatched', () => {
    const text = fleetPage([], [], TOKEN, NOW).text;
    expect(text).toContain('no host has a heartbeat row yet');
    expect(text).toMatch(
      /Dispatches not yet settled <span class="count">0<\/span><\/h2>\s*<p class="empty">nothing here<\/p>/,
    );
  });

  it('is served at /fleet, its live part at /fleet/live and its script at /assets/fleet.js', async () => {
    const target = app(fakeFleet([fleetHost({ name: `n${EVIL}` })], [dispatch()]));
    const page = await get(target, '/fleet');
    expect(page.status).toBe(200);
    const text = await page.text();
    noScript(text);
    expect(text).toContain('n&lt;script&gt;');
    const live = await (await get(target, '/fleet/live')).text();
    expect(live.startsWith('<div id="live">')).toBe(true);
    expect(live).toContain('fix:issue:7');
    const script = await get(target, '/assets/fleet.js');
    expect(script.headers.get('content-type')).toContain('text/javascript');
    const source = await script.text();
    expect(source).toContain("swap('/fleet/live'");
    // It parses (a syntax error would leave the page without its refresh); nothing runs here.
    expect(() => new Function(source)).not.toThrow();
  });

  it('is 404 on the embedded store, as a page', async () => {
    for (const path of ['/fleet', '/fleet/live']) {
      const response = await get(app(), path);
      expect(response.status).toBe(404);
      expect(await response.text()).toContain('no fleet: this curupira keeps its state in one process');
    }
  });
});

describe('the board with a fleet', () => {
  it('links to the fleet page from its header, hot when a host is late or gone', async () => {
    const calm = await (await get(app(fakeFleet([fleetHost(), fleetHost({ name: 'b' })])), '/')).text();
    expect(calm).toContain('<a id="fleet" class="badge" href="/fleet">fleet: 2 hosts</a>');
    const hosts = [
      fleetHost(),
      fleetHost({ name: 'b', health: 'gone' }),
      fleetHost({ name: 'c', health: 'late' }),
    ];
    const live = await (await get(app(fakeFleet(hosts)), '/board/live')).text();
    expect(live).toContain(
      '<a id="fleet" class="badge hot" href="/fleet">fleet: 3 hosts · 1 late · 1 gone</a>',
    );
  });

  it('still renders when the fleet cannot be read, and says so', async () => {
    const broken: FleetView = {
      hosts: async () => {
        throw new Error('down');
      },
      liveDispatches: async () => [],
      transcript: async () => undefined,
      waiting: async () => [],
    };
    const response = await get(app(broken), '/');
    expect(response.status).toBe(200);
    expect(await response.text()).toContain(
      '<a id="fleet" class="badge hot" href="/fleet">fleet unavailable</a>',
    );
  });

  it('shows nothing of a fleet on the embedded store', async () => {
    for (const path of ['/', '/board/live']) {
      const text = await (await get(app(), path)).text();
      expect(text).toContain('need attention');
      expect(text).not.toMatch(/fleet/i);
    }
  });
});

describe("a run's host", () => {
  async function recorded(host: string | null): Promise<RunRecord> {
    const run = await store.createRun({
      automationId: 'fix',
      taskKey: 'fix:issue:7',
      repo: 'acme/api',
      taskType: 'github-issues',
      itemId: '7',
      itemKey: 'issue:7',
      itemTitle: 'Title',
      itemUrl: 'https://github.com/acme/api/issues/7',
      status: 'failed',
    });
    return { ...run, host };
  }

  it('is on its card and its page when set, escaped', async () => {
    const run = await recorded(`build-1${EVIL}`);
    const board = boardPage(
      {
        now: '2026-12-01T12:00:00.000Z',
        summary: '0 running',
        attentionCount: 1,
        automations: [],
        inProgress: [],
        attention: [run],
        done: [],
        engine: undefined,
      },
      TOKEN,
    ).text;
    noScript(board);
    expect(board).toContain(
      '<div class="detail clip host" title="build-1&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;">host build-1&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;</div>',
    );
    const page = runPage(run, undefined, TOKEN).text;
    noScript(page);
    expect(page).toContain('<dt>host</dt><dd>build-1&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;</dd>');
  });

  it('shows the transcript the worker shared when the file is on another host', async () => {
    await loadDrivers(['claude']);
    const run = {
      ...(await recorded('w2')),
      status: 'succeeded' as const,
      provider: 'claude',
      transcriptPath: join(dir, 'on-w2-only.jsonl'),
    };
    await store.updateRun(run.id, {
      status: 'succeeded',
      provider: 'claude',
      transcriptPath: run.transcriptPath,
      host: 'w2',
    });
    const lines = [
      { type: 'system', subtype: 'init', session_id: 's-w2' },
      {
        type: 'assistant',
        message: { content: [{ type: 'text', text: `Starting on the task. ${EVIL}` }] },
        session_id: 's-w2',
      },
    ];
    const shared = new Map([[run.id, `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`]]);
    const page = await (await get(app(fakeFleet([fleetHost()], [], shared)), `/runs/${run.id}`)).text();
    noScript(page);
    expect(page).toContain('Starting on the task. &lt;script&gt;');
    expect(page).not.toContain('The transcript is on host');
    // Nothing shared (too large, or an older worker): the page says where it is.
    const elsewhere = await (await get(app(fakeFleet([fleetHost()])), `/runs/${run.id}`)).text();
    expect(elsewhere).toContain('The transcript is on host w2');
  });

  it("says which host keeps a finished run's transcript when this machine has none", async () => {
    const run = {
      ...(await recorded(`w2${EVIL}`)),
      status: 'succeeded' as const,
      transcriptPath: '/srv/w2/fix/r_1.jsonl',
    };
    const page = runPage(run, undefined, TOKEN).text;
    noScript(page);
    expect(page).toContain(
      'The transcript is on host w2&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;, at /srv/w2/fix/r_1.jsonl: transcripts stay on the host that ran the agent',
    );
    expect(page).not.toContain('No transcript was saved');
    // The embedded store's runs have no host: nothing was saved, as before.
    expect(runPage({ ...run, host: null }, undefined, TOKEN).text).toContain(
      'No transcript was saved for this run.',
    );
  });

  it('is absent from both when the run has none (the embedded store)', async () => {
    for (const host of [null, undefined]) {
      const run = await recorded(null);
      const bare = host === undefined ? (({ host: _h, ...rest }) => rest)(run) : run;
      const page = runPage(bare, undefined, TOKEN).text;
      expect(page).not.toContain('<dt>host</dt>');
      const board = boardPage(
        {
          now: '2026-12-01T12:00:00.000Z',
          summary: '0 running',
          attentionCount: 1,
          automations: [],
          inProgress: [],
          attention: [bare],
          done: [],
          engine: undefined,
        },
        TOKEN,
      ).text;
      expect(board).not.toContain('class="detail clip host"');
    }
  });
});
