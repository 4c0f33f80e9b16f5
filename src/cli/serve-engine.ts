/**
 * The engine in watch mode behind the board, the JSON API and the control socket: what `serve`,
 * a fleet host with a board, and `demo` start. Apart from serve.ts so that those callers and
 * serve.ts do not import one another.
 */

import { stateDir } from '../engine/paths.js';
import { Engine, type EngineOptions } from '../features.js';
import type { FleetView } from '../fleet/types.js';
import { createApp } from '../server/app.js';
import { Hub } from '../server/hub.js';
import { type Listening, startListeners } from '../server/listen.js';
import { loadOrCreateToken, tokenPath } from '../server/token.js';
import { webhookSecret } from '../server/webhooks.js';
import { packageVersion } from '../version.js';
import { type CliIo, writeLine } from './io.js';
import { watchBanner } from './run.js';

export interface ServeEngineOptions {
  /** The engine's options, without the status hooks (the board takes those). */
  engine: Omit<EngineOptions, 'onStatus' | 'onRun'>;
  host: string;
  port: number;
  /** Print the `run --watch` banner before the URL. */
  banner: boolean;
  /** The fleet's hosts and dispatches for the board, `/api/v1/fleet` and `status` (PostgreSQL state only). */
  fleet?: FleetView;
}

/**
 * The engine in watch mode behind the board, the API and the control socket, until the engine's
 * stop or drain signal ends it. The URL is printed with the token the first time only.
 */
export async function serveEngine(io: CliIo, options: ServeEngineOptions): Promise<void> {
  const { settings, store } = options.engine;
  const secret = webhookSecret(settings, options.engine.env);
  const hub = new Hub();
  const engine = new Engine({
    ...options.engine,
    onStatus: (status) => hub.setStatus(status),
    onRun: () => hub.changed(),
  });
  const dir = stateDir(settings);
  const { token, created } = loadOrCreateToken(dir);
  const app = createApp({
    store,
    engine,
    hub,
    token,
    version: packageVersion(),
    startedAt: Date.now(),
    ...(secret === undefined ? {} : { webhookSecret: secret }),
    ...(options.fleet === undefined ? {} : { fleet: options.fleet }),
  });
  let listening: Listening | undefined;
  try {
    listening = await startListeners(app, { host: options.host, port: options.port, stateDir: dir });
    if (options.banner) writeLine(io.stderr, watchBanner(settings));
    if (created) {
      writeLine(io.stdout, `Board: ${listening.url}?token=${token}`);
      writeLine(io.stdout, `(the token is shown this once; it is kept in ${tokenPath(dir)})`);
    } else {
      writeLine(io.stdout, `Board: ${listening.url} (open it with ?token=<the token in ${tokenPath(dir)}>)`);
    }
    if (listening.socket) writeLine(io.stdout, `Control socket: ${listening.socket}`);
    await engine.run();
  } finally {
    hub.close();
    await listening?.close();
  }
}
