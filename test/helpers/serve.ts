/** `curupira serve` in this process over a harness: a real engine, the app, and (optionally) its listeners. */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Hono } from 'hono';
import { settingsReloader } from '../../src/cli/run.js';
import type { RunRecord } from '../../src/core/types.js';
import { Engine, type EngineStatus } from '../../src/features.js';
import { createApp } from '../../src/server/app.js';
import { Hub } from '../../src/server/hub.js';
import { type Listening, startListeners } from '../../src/server/listen.js';
import { loadOrCreateToken } from '../../src/server/token.js';
import type { Store } from '../../src/store/types.js';
import type { Harness } from './harness.js';
import { nextRound } from './watch.js';

export interface Served {
  app: Hono;
  engine: Engine;
  store: Store;
  token: string;
  /** Runs the engine finished, in order. */
  runs: RunRecord[];
  /**
   * Wakes the engine and waits for a whole round of its watch loop that began after this call
   * (what a test checks before saying that something did not happen); the status it left.
   */
  round(): Promise<EngineStatus>;
  /** With `listen`: the board's URL (`http://127.0.0.1:<port>/`). */
  url: string | undefined;
  stop(): Promise<void>;
}

export async function serveInProcess(
  harness: Harness,
  options: { listen?: boolean; webhookSecret?: string; reload?: boolean } = {},
): Promise<Served> {
  const store = await harness.openStore();
  const stop = new AbortController();
  const hub = new Hub(20);
  const runs: RunRecord[] = [];
  const ticks: EngineStatus[] = [];
  const engine = new Engine({
    ...harness.engineOptions(store, {
      mode: 'watch',
      stop: stop.signal,
      onRun: (run) => {
        runs.push(run);
        hub.changed();
      },
      onStatus: (status) => hub.setStatus(status),
      // Watch the settings file as `curupira serve` does, checked every 100 ms.
      ...(options.reload ? { reload: settingsReloader(harness.settings().file), reloadIntervalMs: 100 } : {}),
    }),
    onTick: (status) => ticks.push(status),
  });
  const done = engine.run();
  const dir = join(harness.dir, 'state');
  mkdirSync(dir, { recursive: true });
  const { token } = loadOrCreateToken(dir);
  const app = createApp({
    store,
    engine,
    hub,
    token,
    version: '0.0.0-test',
    startedAt: Date.now(),
    ...(options.webhookSecret === undefined ? {} : { webhookSecret: options.webhookSecret }),
  });
  let listening: Listening | undefined;
  if (options.listen) listening = await startListeners(app, { host: '127.0.0.1', port: 0, stateDir: dir });
  return {
    app,
    engine,
    store,
    token,
    runs,
    round: () => nextRound(engine, ticks),
    url: listening?.url,
    async stop() {
      stop.abort();
      await listening?.close();
      await done;
      hub.close();
      await store.close();
    },
  };
}
